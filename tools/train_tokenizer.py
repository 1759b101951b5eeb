#!/usr/bin/env python3
"""Trains the byte-level BPE tokenizer of the default job on the KJV corpus.

Needs the Python package `tokenizers` (pip install tokenizers) and data/corpus/kjv.txt
(scripts/get_corpus.sh). Writes assets/tokenizers/kjv-bpe-4096/tokenizer.json, which is committed so
that the default job needs no Python at run time:

    scripts/get_corpus.sh && python3 tools/train_tokenizer.py
"""
import argparse
import pathlib

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = pathlib.Path(__file__).resolve().parent.parent
EOS = "<|endoftext|>"


def build_byte_level_bpe() -> Tokenizer:
    """An untrained GPT-2 style tokenizer: byte-level pre-tokenizer and decoder, no normalizer."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def train(files: list[str], vocab_size: int) -> Tokenizer:
    tok = build_byte_level_bpe()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train(files, trainer)
    return tok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT / "data/corpus/kjv.txt"))
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--out", default=None, help="default: assets/tokenizers/kjv-bpe-<vocab>/tokenizer.json")
    args = ap.parse_args()
    out = pathlib.Path(args.out or ROOT / f"assets/tokenizers/kjv-bpe-{args.vocab_size}/tokenizer.json")
    tok = train([args.corpus], args.vocab_size)
    out.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out))
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: "
          f"vocab {tok.get_vocab_size()}, eos {EOS} = {tok.token_to_id(EOS)}")


if __name__ == "__main__":
    main()
