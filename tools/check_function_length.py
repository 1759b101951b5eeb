#!/usr/bin/env python3
"""Keeps the top floors readable: fails on a function longer than --max-lines (default 120) in the
folders it is given (default src/zerotrain/train and src/zerotrain/cli: the trainer and the CLI,
which grew 300-line functions once; issue 31).

A function is a definition at namespace scope: a statement that opens a brace, is not a namespace,
class, struct, union or enum, and holds a parenthesis before its brace (lambdas and member
functions defined inside a class body count as part of what encloses them). Its length runs from the
first line of its signature to its closing brace. Comments and string literals are ignored when
braces are counted. Prints one line per long function, "file:line: NAME is N lines (over M)", and
exits 1; exits 0 when none is found.

Run: python3 tools/check_function_length.py [--root REPO] [--max-lines N] [FOLDER ...]. ctest runs it
(function_length_check) and its self-test tools/test_check_function_length.py.
"""
import argparse
import pathlib
import re
import sys

DEFAULT_FOLDERS = ["src/zerotrain/train", "src/zerotrain/cli"]
SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}
NOT_FUNCTIONS = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(namespace|class|struct|union|enum|extern)\b")
STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def code_of(line: str, in_block_comment: bool):
    """The line without comments and literals, and whether a /* comment continues past it."""
    out = []
    i = 0
    while i < len(line):
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i = end + 2
            in_block_comment = False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block_comment = True
            i += 2
        else:
            out.append(line[i])
            i += 1
    text = STRING.sub('""', "".join(out))
    return text, in_block_comment


def long_functions(path: pathlib.Path, max_lines: int):
    """(line, name, length) of each function of `path` over max_lines."""
    found = []
    stack = []  # one entry per open brace: "scope" (namespace, extern), "fn" or "other"
    statement, statement_line = "", 0
    fn_start = fn_name = None
    in_comment = False
    raw = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(raw, start=1):
        code, in_comment = code_of(line, in_comment)
        if code.lstrip().startswith("#"):
            continue
        for ch in code:
            at_scope = all(kind == "scope" for kind in stack)
            if ch == "{":
                if not at_scope:
                    stack.append("other")
                    continue
                head = statement.strip()
                if NOT_FUNCTIONS.match(head):
                    stack.append("scope" if re.match(r"^\s*(namespace|extern)\b", head) else "other")
                elif "(" in head:
                    stack.append("fn")
                    fn_start = statement_line
                    fn_name = re.sub(r"\s+", " ", head.split("(")[0]).split(" ")[-1]
                else:
                    stack.append("other")
                statement = ""
            elif ch == "}":
                kind = stack.pop() if stack else "scope"
                if kind == "fn" and all(k == "scope" for k in stack):
                    length = number - fn_start + 1
                    if length > max_lines:
                        found.append((fn_start, fn_name, length))
                statement = ""
            elif ch == ";" and at_scope:
                statement = ""
            elif at_scope:
                if not statement.strip() and not ch.isspace():
                    statement_line = number
                statement += ch
        if all(kind == "scope" for kind in stack):
            statement += " "
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path)
    parser.add_argument("--max-lines", type=int, default=120)
    parser.add_argument("folders", nargs="*", default=DEFAULT_FOLDERS)
    args = parser.parse_args()
    problems = []
    for folder in args.folders:
        base = args.root / folder
        if not base.is_dir():
            sys.exit(f"[check_function_length] {base}: not a folder")
        for path in sorted(p for p in base.rglob("*") if p.suffix in SUFFIXES):
            for line, name, length in long_functions(path, args.max_lines):
                rel = path.relative_to(args.root)
                problems.append(f"{rel}:{line}: {name} is {length} lines (over {args.max_lines})")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
