#!/usr/bin/env python3
"""Self-test of tools/check_layers.py, so the layer check cannot pass silently: on a temporary fake
tree it must exit 0 when every include looks down, and exit 1 naming exactly the include that looks
up, the one between siblings and the one of a folder the block does not list.

Run: python3 tools/test_check_layers.py (ctest: layer_check_selftest).
"""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_layers.py"
DOC = """# Architecture
<!-- layers:begin -->
```text
0: core
1: kernels
2: nn comm
```
<!-- layers:end -->
"""


def write(root: pathlib.Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run(root: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True,
                          text=True, check=False)


def expect(cond: bool, what: str, result: subprocess.CompletedProcess) -> None:
    if not cond:
        sys.exit(f"[check_layers selftest] {what}: exit {result.returncode}, output:\n"
                 f"{result.stdout}{result.stderr}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        write(root, "docs/ARCHITECTURE.md", DOC)
        write(root, "src/zerotrain/core/tensor.h", '#pragma once\n#include "zerotrain/core/dtype.h"\n')
        write(root, "src/zerotrain/kernels/cuda/gemm.cu", '#include "zerotrain/core/tensor.h"\n')
        write(root, "src/zerotrain/nn/linear.cpp",
              '#include "zerotrain/nn/linear.h"\n#include "zerotrain/kernels/gemm.h"\n')
        clean = run(root)
        expect(clean.returncode == 0 and clean.stdout == "", "a clean tree must pass", clean)

        write(root, "src/zerotrain/kernels/cuda/gemm.cu",
              '#include "zerotrain/core/tensor.h"\n#include "zerotrain/nn/linear.h"\n')
        write(root, "src/zerotrain/comm/group.cpp", '// x\n#include "zerotrain/nn/linear.h"\n')
        write(root, "src/zerotrain/zero/stage.cpp", '#include "zerotrain/core/tensor.h"\n')
        bad = run(root)
        want = [
            "src/zerotrain/comm/group.cpp:2: folder comm includes nn, which is on its own level "
            "(siblings do not include each other)",
            "src/zerotrain/kernels/cuda/gemm.cu:2: folder kernels includes nn, which is above it",
            "src/zerotrain/zero/stage.cpp:1: folder zero is not in the layer block of "
            "docs/ARCHITECTURE.md",
        ]
        expect(bad.returncode == 1, "a tree with bad includes must fail", bad)
        expect(bad.stdout.splitlines() == want, f"expected exactly {want}", bad)
    print("[check_layers selftest] passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
