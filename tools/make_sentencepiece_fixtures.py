#!/usr/bin/env python3
"""Writes the SentencePiece-style BPE fixtures of tests/data/test_tokenizer_sentencepiece.cpp
with Hugging Face `tokenizers` (pip install tokenizers; the fixtures were made with 0.23.3):

  tests/fixtures/tokenizer/sp_bpe/tokenizer.json  a BPE with byte_fallback laid out as Llama 2's
      tokenizer.json: <unk> <s> </s>, then the 256 byte tokens <0x00>..<0xFF>, then the trained
      pieces; normalizer Sequence[Prepend "▁", Replace " " -> "▁"], no pre-tokenizer, decoder
      Sequence[Replace "▁" -> " ", ByteFallback, Fuse, Strip 1 leading space]; merges written as
      "left right" strings. Trained (about 1000 pieces, a small alphabet so that most non-Latin
      characters fall back to bytes) on the English license texts of Debian's base-files and a few
      multilingual sentences. Added tokens: Mistral's [INST] / [/INST] (special), one with lstrip /
      rstrip, and one normalized non-special word;
  tests/fixtures/tokenizer/sp_bpe/cases.json      a multilingual test text (tricky strings, random
      Unicode soup, sentences in a dozen scripts, a license text) with the ids `tokenizers` gives
      for the file as is and for the variants the C++ test makes by editing the JSON the same way:
        ids_metaspace_first   normalizer null, pre_tokenizer Metaspace(prepend_scheme "first",
                              split false): Mistral v0.3 and Llama saved with legacy=False;
        ids_metaspace_split   pre_tokenizer Metaspace(prepend_scheme "always", split true), decoder
                              Metaspace (decoded_metaspace_split);
        ids_no_byte_fallback  byte_fallback false: unknown characters give one fused <unk>;
        ids_normalized_specials  <unk> <s> </s> with normalized true, as some files ship them:
                              matched by their normalized spelling ("▁<s>"), which is also what
                              they decode to, so skip_special_tokens keeps them
                              (decoded_skip_special_normalized_specials);
      and the decodings (with and without special tokens).

    python3 tools/make_sentencepiece_fixtures.py

The trainer breaks ties between equally frequent pairs in no fixed order, so a rerun may give other
pieces; the tokenizer.json and cases.json written together always agree, and the test reads both.
"""
import json
import pathlib

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

from make_tokenizer_fixtures import LICENSES, TRICKY, random_text, write_cases

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/fixtures/tokenizer/sp_bpe"
SPACE = "\u2581"  # ▁, SentencePiece's meta space

TRAINING_SENTENCES = [
    "Le renard brun rapide saute par-dessus le chien paresseux. Où est la gare ? C'était l'été.",
    "Der schnelle braune Fuchs springt über den faulen Hund. Größe, Straße, schön.",
    "El rápido zorro marrón salta sobre el perro perezoso. ¿Dónde está la estación? Año, niño.",
    "Быстрая коричневая лиса прыгает через ленивую собаку. Где вокзал?",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από το τεμπέλικο σκυλί.",
    "素早い茶色の狐は怠け者の犬を飛び越える。駅はどこですか。",
    "敏捷的棕色狐狸跳过了懒狗。火车站在哪里？",
]

# Held out from training: the multilingual part of the test text.
TEST_SENTENCES = [
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Über allen Gipfeln ist Ruh, in allen Wipfeln spürest du kaum einen Hauch.",
    "En un lugar de la Mancha, de cuyo nombre no quiero acordarme, no ha mucho tiempo.",
    "Мой дядя самых честных правил, когда не в шутку занемог.",
    "Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν.",
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
    "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？",
    "나는 생각한다, 고로 존재한다. 한국어 문장입니다.",
    "في البدء كانت الكلمة، والكلمة كانت عند الله.",
    "בראשית ברא אלהים את השמים ואת הארץ.",
    "सत्यमेव जयते। वसुधैव कुटुम्बकम्।",
    "สวัสดีครับ ยินดีที่ได้รู้จัก",
    "Tiếng Việt có dấu: Cộng hòa Xã hội chủ nghĩa Việt Nam.",
    "Emoji and symbols: 🦙 🌬️ ∑ ∞ ≠ → ✓ € ¥ ₹ 😀😃😄",
]

SPECIAL_CASES = [
    "<s>Hello</s>",
    "<s> Hello world</s>",
    "[INST] What is the capital of France? [/INST] Paris.</s>",
    "[INST]no spaces[/INST]answer",
    "<unk> as text and <unk><unk> twice",
    "a wrapped <|sep|> token and<|sep|>glued",
    "the zt-word is normalized; zt-words too, xzt-word",
    " leading space before [INST]",
    "  two leading spaces",
    SPACE + "already a meta space " + SPACE + SPACE + "two",
    "<0x41> looks like a byte token",
]


def train_pieces() -> tuple[dict, list]:
    """Trains the pieces and merges with SentencePiece's word split (▁ starts a word)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="never",
                                                 split=True)
    trainer = trainers.BpeTrainer(vocab_size=1000, min_frequency=2, limit_alphabet=120,
                                  special_tokens=[], show_progress=False)
    lines = []
    for name in ["GPL-3", "Apache-2.0", "Artistic", "MPL-2.0", "BSD"]:
        path = LICENSES / name
        if path.exists():
            lines += path.read_text(encoding="utf-8").splitlines()
    lines += TRAINING_SENTENCES * 20
    tok.train_from_iterator(lines, trainer)
    cfg = json.loads(tok.to_str())
    return cfg["model"]["vocab"], cfg["model"]["merges"]


def added(id_: int, content: str, special: bool, normalized: bool, lstrip=False, rstrip=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": rstrip, "normalized": normalized, "special": special}


def llama2_layout(pieces: dict, merges: list) -> dict:
    """The trained pieces in the layout of Llama 2's tokenizer.json."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece, _ in sorted(pieces.items(), key=lambda kv: kv[1]):
        if piece not in vocab:
            vocab[piece] = len(vocab)
    n = len(vocab)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            added(0, "<unk>", True, False),
            added(1, "<s>", True, False),
            added(2, "</s>", True, False),
            added(n, "[INST]", True, False),
            added(n + 1, "[/INST]", True, False),
            added(n + 2, "<|sep|>", True, False, lstrip=True, rstrip=True),
            added(n + 3, "zt-word", False, True),
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
        ]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ]},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": "<unk>",
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [f"{left} {right}" for left, right in merges],
        },
    }


# The variants, as the C++ test makes them from the JSON.
def metaspace_first(cfg):
    cfg["normalizer"] = None
    cfg["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first",
                            "split": False}


def metaspace_split(cfg):
    cfg["normalizer"] = None
    cfg["pre_tokenizer"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always",
                            "split": True}
    cfg["decoder"] = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always",
                      "split": True}


def no_byte_fallback(cfg):
    cfg["model"]["byte_fallback"] = False


def normalized_specials(cfg):
    for token in cfg["added_tokens"][:3]:
        token["normalized"] = True


def from_cfg(cfg: dict, edit=None) -> Tokenizer:
    cfg = json.loads(json.dumps(cfg))
    if edit:
        edit(cfg)
    return Tokenizer.from_str(json.dumps(cfg))


def test_texts() -> list[tuple[str, str]]:
    texts = [(f"tricky {i}", t) for i, t in enumerate(TRICKY)]
    texts += [(f"special {i}", t) for i, t in enumerate(SPECIAL_CASES)]
    texts += [(f"multilingual {i}", t) for i, t in enumerate(TEST_SENTENCES)]
    texts.append(("multilingual paragraph", "\n".join(TEST_SENTENCES)))
    texts += [(f"random {seed}", random_text(seed, 400)) for seed in range(6)]
    if (LICENSES / "LGPL-2.1").exists():
        texts.append(("license LGPL-2.1", (LICENSES / "LGPL-2.1").read_text(encoding="utf-8")[:6000]))
    return texts


def main() -> None:
    import tokenizers

    pieces, merges = train_pieces()
    cfg = llama2_layout(pieces, merges)
    tok = from_cfg(cfg)
    first = from_cfg(cfg, metaspace_first)
    split = from_cfg(cfg, metaspace_split)
    unk = from_cfg(cfg, no_byte_fallback)
    norm = from_cfg(cfg, normalized_specials)

    cases = []
    for name, text in test_texts():
        ids = tok.encode(text, add_special_tokens=False).ids
        split_ids = split.encode(text, add_special_tokens=False).ids
        norm_ids = norm.encode(text, add_special_tokens=False).ids
        cases.append({
            "name": name,
            "text": text,
            "ids": ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
            "ids_metaspace_first": first.encode(text, add_special_tokens=False).ids,
            "ids_metaspace_split": split_ids,
            "decoded_metaspace_split": split.decode(split_ids, skip_special_tokens=False),
            "ids_no_byte_fallback": unk.encode(text, add_special_tokens=False).ids,
            "ids_normalized_specials": norm_ids,
            "decoded_skip_special_normalized_specials": norm.decode(norm_ids,
                                                                    skip_special_tokens=True),
        })

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "tokenizer.json").write_text(
        json.dumps(cfg, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    meta = {"generator": "tools/make_sentencepiece_fixtures.py", "tokenizers": tokenizers.__version__,
            "vocab_size": tok.get_vocab_size()}
    write_cases(OUT / "cases.json", meta, cases)
    print(f"wrote {len(cases)} cases and a tokenizer of {tok.get_vocab_size()} ids to "
          f"{OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
