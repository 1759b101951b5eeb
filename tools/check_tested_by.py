#!/usr/bin/env python3
"""Keeps the "Tested by ..." lines of src/ true: fails on a test path that does not exist.

Every header and source under src/zerotrain/ names the tests that cover it in a comment,
"// Tested by tests/optim/test_flat_adam.cpp, test_adam_variants.cpp and tests/mpi/.". The rule:

- The reference starts at "Tested by" (or "Tested in", "tested by", "tested in") and runs to the end of its sentence: a ".", ";" or ":"
  followed by a space or the end of the line, or the end of the // comment block. It may wrap over
  several // lines.
- A path is a word that starts with one of the repository's top folders (tests/, tools/, bench/,
  fuzz/, scripts/, assets/, docs/); it is read from the repository root. A path ending in "/" names
  a folder, which must exist ("the other tests/optim/ files", "tests/mpi/"). A path with "*" is a
  glob, which must match at least one file ("tests/kernels/test_attention*.cpp").
- A bare file name (no "/") ending in .cpp, .cu, .py, .sh or .cmake lies in the folder of the last
  path before it in the same reference ("tests/optim/test_cpu_isa.cpp, test_optim_checks.cpp" is
  tests/optim/test_optim_checks.cpp). A bare name with no path before it is a problem too. Other
  bare words (scheduler.h, ctest names such as train_offload_flags) are not checked.

Prints one line per problem, "file:line: Tested by path X does not exist", and exits 1; exits 0
when every path exists.

Run: python3 tools/check_tested_by.py [--root REPO]. ctest runs it (tested_by_check) and its
self-test tools/test_check_tested_by.py (tested_by_check_selftest); scripts/test.sh runs it first.
"""
import argparse
import pathlib
import re
import sys

SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}
TOP_FOLDERS = ("tests/", "tools/", "bench/", "fuzz/", "scripts/", "assets/", "docs/")
BARE_SUFFIXES = (".cpp", ".cu", ".py", ".sh", ".cmake")
MARKER = re.compile(r"\b[Tt]ested (by|in)\b")
SENTENCE_END = re.compile(r"[.;:](\s|$)")
WORD = re.compile(r"[A-Za-z0-9_./*-]+")


def comment_text(line: str):
    """The text after "//" of a comment line, or None for a line that is no // comment."""
    stripped = line.strip()
    return stripped[2:] if stripped.startswith("//") else None


def references(lines: list) -> list:
    """(line number, text of the reference) for every "Tested by" in `lines`."""
    found = []
    for n, line in enumerate(lines):
        mark = MARKER.search(line)
        if not mark or "//" not in line[:mark.start()]:
            continue
        text = line[mark.end():]
        follow = n + 1
        while not SENTENCE_END.search(text) and follow < len(lines):
            more = comment_text(lines[follow])
            if more is None or not more.strip():
                break
            text += " " + more.strip()
            follow += 1
        end = SENTENCE_END.search(text)
        found.append((n + 1, text[:end.start()] if end else text))
    return found


def paths_of(text: str) -> list:
    """The paths a reference names, bare names resolved against the last full path before them.
    A bare name with no path before it is returned as it is, so that it is reported."""
    paths = []
    folder = None
    for word in WORD.findall(text):
        word = word.rstrip(".")
        if word.startswith(TOP_FOLDERS):
            paths.append(word)
            folder = word if word.endswith("/") else word.rsplit("/", 1)[0] + "/"
        elif "/" not in word and word.endswith(BARE_SUFFIXES):
            paths.append(folder + word if folder else word)
    return paths


def exists(root: pathlib.Path, path: str) -> bool:
    if "*" in path:
        return any(root.glob(path))
    if path.endswith("/"):
        return (root / path).is_dir()
    return (root / path).is_file()


def problems(root: pathlib.Path) -> list:
    found = []
    for source in sorted((root / "src").rglob("*")):
        if source.suffix not in SOURCE_SUFFIXES or not source.is_file():
            continue
        where = source.relative_to(root)
        lines = source.read_text(encoding="utf-8").splitlines()
        for n, text in references(lines):
            for path in paths_of(text):
                if not exists(root, path):
                    found.append(f"{where}:{n}: Tested by path {path} does not exist")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="repository root (default: this script's repository)")
    args = parser.parse_args()
    found = problems(args.root)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
