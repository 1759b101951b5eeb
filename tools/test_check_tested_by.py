#!/usr/bin/env python3
"""Self-test of tools/check_tested_by.py, so the check cannot pass silently: on a temporary fake
tree it must exit 0 when every named test exists (wrapped comments, "Tested in", bare names after
a folder path, folders, globs, words that are no paths), and exit 1 naming exactly the paths that do not.

Run: python3 tools/test_check_tested_by.py (ctest: tested_by_check_selftest).
"""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_tested_by.py"


def write(root: pathlib.Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True,
                          text=True, check=False)


def expect(cond: bool, what: str, result: subprocess.CompletedProcess) -> None:
    if not cond:
        sys.exit(f"[check_tested_by selftest] {what}: exit {result.returncode}, output:\n"
                 f"{result.stdout}{result.stderr}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for test in ("tests/optim/test_adam.cpp", "tests/optim/test_isa.cpp",
                     "tests/mpi/test_parity.cpp", "tests/kernels/test_rope_cuda.cpp",
                     "tools/parity/check_generate.py"):
            write(root, test)
        write(root, "src/zerotrain/optim/adam.h",
              "// Adam. Tested by tests/optim/test_adam.cpp, test_isa.cpp (SIMD, see kernels.h)\n"
              "// and tests/mpi/test_parity.cpp. Used by zero/stage.cpp: not a test.\n"
              "#pragma once\n")
        write(root, "src/zerotrain/optim/adam.cpp",
              "// See adam.h. Tested by the other tests/optim/ files and the ctest optim_cli;\n"
              "// uses tests/missing.cpp after the sentence ends.\n")
        write(root, "src/zerotrain/kernels/cuda/rope.cu",
              "// Tested in tests/kernels/test_rope*.cpp and, against transformers,\n"
              "// tools/parity/check_generate.py.\n//\n// [Note: rope]\n")
        clean = run(root)
        expect(clean.returncode == 0 and clean.stdout == "", "a clean tree must pass", clean)

        write(root, "src/zerotrain/optim/adam.h",
              "// Adam. Tested by tests/optim/test_adam.cpp, test_gone.cpp and\n"
              "// tests/mpi/test_parity_gone.cpp.\n")
        write(root, "src/zerotrain/optim/lion.cpp", "#include <x>\n// Lion; tested by test_lion.cpp.\n")
        write(root, "src/zerotrain/kernels/cuda/rope.cu",
              "// Tested by tests/kernels/test_norm*.cpp and tests/nn/.\n")
        bad = run(root)
        want = [
            "src/zerotrain/kernels/cuda/rope.cu:1: Tested by path tests/kernels/test_norm*.cpp "
            "does not exist",
            "src/zerotrain/kernels/cuda/rope.cu:1: Tested by path tests/nn/ does not exist",
            "src/zerotrain/optim/adam.h:1: Tested by path tests/optim/test_gone.cpp does not exist",
            "src/zerotrain/optim/adam.h:1: Tested by path tests/mpi/test_parity_gone.cpp does not "
            "exist",
            "src/zerotrain/optim/lion.cpp:2: Tested by path test_lion.cpp does not exist",
        ]
        expect(bad.returncode == 1, "a tree with missing tests must fail", bad)
        expect(bad.stdout.splitlines() == want, f"expected exactly {want}", bad)
    print("[check_tested_by selftest] passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
