"""One case of the bad-input corpus (issue 17): the files it writes, the zerotrain command line it
runs, and what a clear refusal looks like (exit code and a substring of its one-line message).

Placeholders in `argv` and in text files, filled by tools/bad_input_corpus.py:
  {d}          the case's own directory (its files are written there)
  {model}      a valid tiny model directory (config.json + model.safetensors)
  {config}     that model's config.json
  {tokens}     a valid token file for it
  {tokenizer}  a valid byte-level BPE tokenizer.json; {text} a small text file
  {ckpt}       a valid checkpoint of the tiny model after one step (read-only: copy to change it)
  {ckpt16}     the same, trained in f16 (with the loss scaler's state)
  {repo}       the repository root
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Union

# A file's content: bytes, text, or a function of the shared fixtures returning either.
Content = Union[bytes, str, Callable[["Fixtures"], Union[bytes, str]]]


@dataclass
class Case:
    name: str                      # unique, [a-z0-9_]
    family: str                    # safetensors, index, config, tokenizer, tokens, ds_config, ...
    argv: List[str]                # zerotrain's arguments
    expect: str                    # a substring of the one-line error
    rc: int = 1                    # 1: a refused input, 2: a bad command line
    files: Dict[str, Content] = field(default_factory=dict)  # relative to {d}
    # Run after the files are written, with the case directory and the shared fixtures (symlinks,
    # permissions, copies of the base checkpoint).
    setup: Optional[Callable[[str, "Fixtures"], None]] = None
