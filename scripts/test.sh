#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#  0. the layer check (tools/check_layers.py: no include points up docs/ARCHITECTURE.md's order)
#     with the function-length check of train/ and cli/ (tools/check_function_length.py) and the
#     Tested-by check (tools/check_tested_by.py: every test src/ names exists);
#  1. the default build (CUDA backend too when nvcc is present: it must compile and link; its tests
#     skip without a GPU), all tests;
#     then parity with PyTorch on the CPU (scripts/parity_cpu.sh);
#  2. a CPU-only build under AddressSanitizer + UndefinedBehaviorSanitizer, all tests;
#  3. the libFuzzer targets of fuzz/ (clang, only the sources they reach), one minute in all
#     (tools/fuzz_all.sh: every target in parallel; docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs="$(nproc)"

echo "== [0] layer check, function-length check, Tested-by check"
python3 tools/check_layers.py
python3 tools/test_check_layers.py
python3 tools/check_function_length.py
python3 tools/test_check_function_length.py
python3 tools/check_tested_by.py
python3 tools/test_check_tested_by.py

echo "== [1/2] default build + tests"
scripts/build.sh build
ctest --test-dir build --output-on-failure --parallel "$jobs"
echo "== [1b] parity with PyTorch on the CPU (${SECONDS}s so far)"
scripts/parity_cpu.sh build/parity_cpu.json build

echo "== [2/2] CPU-only build with ASan + UBSan + tests (${SECONDS}s so far)"
# -O1 -g1 (line tables only): half the compile time of -O2 -g, still full line numbers in reports.
scripts/build.sh build-asan -DZT_CUDA=OFF -DZT_SANITIZE=address,undefined \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DZT_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --parallel "$jobs"
echo "== [3] libFuzzer targets: clang build + a short run of each (${SECONDS}s so far)"
tools/fuzz_all.sh -t 60
echo "== all tests passed in ${SECONDS}s"
