#!/usr/bin/env python3
"""Self-test of tools/check_function_length.py, so the check cannot pass silently: on a temporary
fake tree it must exit 0 when every function is short (a long class body of short members, a
long brace-initialised table and braces inside comments and strings do not count), and exit 1
naming exactly the long free function and the long member defined out of its class.

Run: python3 tools/test_check_function_length.py (ctest: function_length_check_selftest).
"""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_function_length.py"


def body(n: int) -> str:
    return "".join(f"  x += {i};\n" for i in range(n))


def run(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--max-lines", "10",
                           "src"], capture_output=True, text=True, check=False)


def expect(cond: bool, what: str, result: subprocess.CompletedProcess) -> None:
    if not cond:
        sys.exit(f"[check_function_length selftest] {what}: exit {result.returncode}, output:\n"
                 f"{result.stdout}{result.stderr}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        src = root / "src"
        src.mkdir()
        short = ("namespace a {\nnamespace {\n"
                 "int short_one(int x) {\n" + body(5) + "  return x;\n}\n}  // namespace\n"
                 "class Big {\n public:\n" + "".join(f"  int m{i}() {{ return {i}; }}\n"
                                                       for i in range(20)) + "};\n"
                 "const int kTable[] = {\n" + "".join(f"  {i},\n" for i in range(20)) + "};\n"
                 "// a comment with a { brace\n"
                 "const char* s = \"{ not a block\";\n"
                 "}  // namespace a\n")
        (src / "good.cpp").write_text(short, encoding="utf-8")
        clean = run(root)
        expect(clean.returncode == 0 and clean.stdout == "", "a tree of short functions must pass",
               clean)

        long_text = ("namespace a {\n"
                     "void long_free(int x,\n               int y) {\n" + body(12) +
                     "  auto f = [&] {\n    return 1;\n  };\n}\n"
                     "int Big::long_member() const {\n  int x = 0;\n" + body(9) + "  return x;\n}\n"
                     "}  // namespace a\n")
        (src / "bad.cpp").write_text(long_text, encoding="utf-8")
        bad = run(root)
        want = ["src/bad.cpp:2: long_free is 18 lines (over 10)",
                "src/bad.cpp:20: Big::long_member is 13 lines (over 10)"]
        expect(bad.returncode == 1 and bad.stdout.splitlines() == want,
               f"expected exactly {want}", bad)
    print("[check_function_length selftest] passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
