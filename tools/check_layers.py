#!/usr/bin/env python3
"""Keeps the floors one-way: fails on an include under src/zerotrain/ that points up the layer order.

The order is the one machine-readable block of docs/ARCHITECTURE.md, between the markers
<!-- layers:begin --> and <!-- layers:end -->: one line per level, bottom-up, "N: folder folder ...".
A file of folder A may include "zerotrain/B/..." only when B is A itself or B's level is strictly
lower than A's: siblings on one level do not include each other. A sub-folder (kernels/cuda,
optim/cpu, comm/nccl, ...) belongs to its parent. Prints one line per bad include,
"file:line: folder A includes B, which is above it", and exits 1; exits 0 when none is found.

Run: python3 tools/check_layers.py [--root REPO]. ctest runs it (layer_check) and its self-test
tools/test_check_layers.py (layer_check_selftest); scripts/test.sh runs it first.
"""
import argparse
import pathlib
import re
import sys

BEGIN = "<!-- layers:begin -->"
END = "<!-- layers:end -->"
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"zerotrain/([^/"]+)/')


def read_levels(doc: pathlib.Path) -> dict:
    """folder -> level, from the block between the markers of `doc`."""
    text = doc.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        sys.exit(f"[check_layers] {doc}: expected one {BEGIN} ... {END} block")
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    levels = {}
    for line in block.splitlines():
        m = re.match(r"^\s*(\d+):\s*(.+?)\s*$", line)
        if not m:
            continue
        for folder in m.group(2).split():
            if folder in levels:
                sys.exit(f"[check_layers] {doc}: folder {folder} is listed twice")
            levels[folder] = int(m.group(1))
    if not levels:
        sys.exit(f"[check_layers] {doc}: the layer block lists no folder")
    return levels


def violations(root: pathlib.Path, levels: dict) -> list:
    src = root / "src" / "zerotrain"
    found = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(src)
        if len(rel.parts) < 2:
            continue
        folder = rel.parts[0]
        where = path.relative_to(root)
        if folder not in levels:
            found.append(f"{where}:1: folder {folder} is not in the layer block of docs/ARCHITECTURE.md")
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == folder:
                continue
            target = m.group(1)
            if target not in levels:
                found.append(f"{where}:{n}: folder {folder} includes {target}, which is not in the "
                             "layer block")
            elif levels[target] > levels[folder]:
                found.append(f"{where}:{n}: folder {folder} includes {target}, which is above it")
            elif levels[target] == levels[folder]:
                found.append(f"{where}:{n}: folder {folder} includes {target}, which is on its own "
                             "level (siblings do not include each other)")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="repository root (default: this script's repository)")
    args = parser.parse_args()
    levels = read_levels(args.root / "docs" / "ARCHITECTURE.md")
    found = violations(args.root, levels)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
