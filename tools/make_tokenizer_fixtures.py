#!/usr/bin/env python3
"""Writes the tokenizer fixtures of tests/data/test_tokenizer_hf.cpp with Hugging Face
`tokenizers` (pip install tokenizers; the fixtures were made with 0.23.3):

  tests/fixtures/tokenizer/small_bpe/tokenizer.json  a byte-level BPE (vocab 4000) trained on the
      English license texts of Debian's base-files (/usr/share/common-licenses), with added tokens
      that exercise lstrip / rstrip / single_word / leftmost-longest matching;
  tests/fixtures/tokenizer/small_bpe/cases.json      texts with their ids from `tokenizers`: as is, with
      the pre-tokenizer's add_prefix_space on, and with the model's ignore_merges on; and decodings;
  tests/fixtures/tokenizer/kjv_bpe_cases.json        the same for assets/tokenizers/kjv-bpe-4096.

    python3 tools/make_tokenizer_fixtures.py
"""
import json
import pathlib
import random

from tokenizers import AddedToken, Tokenizer
from tokenizers import pre_tokenizers, trainers
from train_tokenizer import EOS, build_byte_level_bpe

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/fixtures/tokenizer"
LICENSES = pathlib.Path("/usr/share/common-licenses")

TRICKY = [
    "",
    "Hello world",
    "Hello world!",
    " leading space",
    "trailing space ",
    "I'm sure you're right, they've said we'll go, he'd know it's John's.",
    "Upper-case contractions: I'M, YOU'RE, IT'S, 'S 'T 'RE.",
    "quotes 'single' and \"double\" and `back`; ''s '''",
    "Numbers: 1, 22, 333, 4444, 55555, 3.14159, 1e-9, -42, 1,000,000 and 2024-06-30.",
    "Mixed a1b2c3 A1 9lives x86_64 v2.0.1",
    "Punctuation!!! ... ??? (parens) [brackets] {braces} <angle> @#$%^&*_+=|\\/~",
    "Multiple   spaces   between    words",
    "Tabs\tand\ttabs\t\tdouble",
    "Line one\nLine two\n\nLine four after a blank line\n",
    "Windows\r\nline\r\nendings\r\n",
    "   \n  \n\t\n",
    "trailing spaces at the end   ",
    "\n\n\nstarts with newlines",
    "café naïve résumé coöperate façade",
    "日本語のテキストです。中文文本。한국어 텍스트.",
    "emoji 🙂 and 👍🏽 and 👨‍👩‍👧 family",
    "Greek Ελληνικά, Cyrillic Кириллица, Arabic العربية, Hebrew עברית, Devanagari देवनागरी",
    "Other numbers: ² ³ ½ ¼ Ⅻ ⅷ ٣٤٥ ߁߂ 𝟙𝟚",
    "Combining marks: e\u0301 a\u0308 n\u0303 and zero\u200bwidth\u200djoiner",
    "Unicode spaces:\u00a0nbsp\u2003em\u3000ideographic\u2028line\u2029para\u0085nel\u000bvt\u000cff",
    "Not spaces: \u001cfs\u001dgs\u001ers\u001fus\u180emvs\ufeffbom",
    "special <|endoftext|> token inside text",
    "<|endoftext|>",
    "two<|endoftext|><|endoftext|>adjacent",
    "chat <|im_start|>user hello<|im_end|> and a prefix <|im alone",
    "lstrip and rstrip   <|user|>   around it",
    "single word: zt-word, xzt-word, zt-wordy, (zt-word) zt-word_x",
    "ends with special <|endoftext|>",
    "a" * 300,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "https://example.com/path?query=value&x=1#frag user@example.org",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\n",
    "\u00e9\u00e8\u00ea" * 20,
]


def random_text(seed: int, length: int) -> str:
    """Characters drawn from many classes (letters, digits, other numbers, marks, punctuation,
    symbols, ASCII and Unicode whitespace, apostrophes) to stress the pre-tokenizer split."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        "'''''smtdlrev",
        "      \t\n\r\u000b\u000c\u0085\u00a0\u2000\u2003\u3000",
        ".,;:!?-()[]{}\"/\\@#$%&*+=<>|~^`_",
        "éüñçøåßœæÉÜÑ",
        "αβγδεζηθ",
        "абвгдежзий",
        "日本語中文字",
        "²³¹¼½¾Ⅰ Ⅱ Ⅻ٠١٢",
        "\u0301\u0308\u0303\u200b\u200d\u180e\ufeff\u001c",
        "🙂👍🏽🚀✓€£¥",
    ]
    return "".join(rng.choice(rng.choice(pools)) for _ in range(length))


def real_texts() -> list[tuple[str, str]]:
    out = []
    for name, limit in [("GPL-3", 12000), ("Apache-2.0", 8000), ("Artistic", 4000)]:
        path = LICENSES / name
        if path.exists():
            out.append((f"license {name}", path.read_text(encoding="utf-8")[:limit]))
    return out


def variant(tok: Tokenizer, edit) -> Tokenizer:
    """The tokenizer with its JSON edited as the C++ test edits it."""
    cfg = json.loads(tok.to_str())
    edit(cfg)
    return Tokenizer.from_str(json.dumps(cfg))


def set_prefix_space(cfg):
    cfg["pre_tokenizer"]["add_prefix_space"] = True


def set_ignore_merges(cfg):
    cfg["model"]["ignore_merges"] = True


def cases_for(tok: Tokenizer, texts: list[tuple[str, str]], with_variants: bool) -> list[dict]:
    prefix = variant(tok, set_prefix_space) if with_variants else None
    ignore = variant(tok, set_ignore_merges) if with_variants else None
    out = []
    for name, text in texts:
        ids = tok.encode(text, add_special_tokens=False).ids
        case = {
            "name": name,
            "text": text,
            "ids": ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
        }
        if with_variants:
            case["ids_add_prefix_space"] = prefix.encode(text, add_special_tokens=False).ids
            case["ids_ignore_merges"] = ignore.encode(text, add_special_tokens=False).ids
        out.append(case)
    return out


def train_small() -> Tokenizer:
    tok = build_byte_level_bpe()
    trainer = trainers.BpeTrainer(
        vocab_size=4000,
        min_frequency=2,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    files = sorted(str(p) for p in LICENSES.iterdir() if p.is_file())
    tok.train(files, trainer)
    tok.add_special_tokens([
        AddedToken("<|im_start|>", special=True, normalized=False),
        AddedToken("<|im_end|>", special=True, normalized=False),
        AddedToken("<|im", special=True, normalized=False),
        AddedToken("<|user|>", special=True, normalized=False, lstrip=True, rstrip=True),
    ])
    tok.add_tokens([AddedToken("zt-word", single_word=True, normalized=True)])
    return tok


def write_cases(path: pathlib.Path, meta: dict, cases: list[dict]) -> None:
    """One case per line, compact, so that the fixture stays small and diffs stay readable."""
    def dump(obj) -> str:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))

    head = dump(meta)[:-1]
    body = ",\n".join(dump(c) for c in cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head},\"cases\":[\n{body}\n]}}\n", encoding="utf-8")


def main() -> None:
    import tokenizers

    texts = [(f"tricky {i}", t) for i, t in enumerate(TRICKY)]
    texts += [(f"random {seed}", random_text(seed, 600)) for seed in range(8)]
    texts += real_texts()

    small = train_small()
    small_dir = OUT / "small_bpe"
    small_dir.mkdir(parents=True, exist_ok=True)
    small.save(str(small_dir / "tokenizer.json"))
    meta = {"generator": "tools/make_tokenizer_fixtures.py", "tokenizers": tokenizers.__version__}
    write_cases(small_dir / "cases.json", meta, cases_for(small, texts, True))

    kjv = Tokenizer.from_file(str(ROOT / "assets/tokenizers/kjv-bpe-4096/tokenizer.json"))
    write_cases(OUT / "kjv_bpe_cases.json", meta, cases_for(kjv, texts, False))
    print(f"wrote {len(texts)} cases for {small_dir.relative_to(ROOT)} and kjv-bpe-4096")


if __name__ == "__main__":
    main()
