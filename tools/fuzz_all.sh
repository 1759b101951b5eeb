#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ in parallel for a given time and prints, per target, the
# executions, the seconds and the crashes (docs/fuzzing.md records the runs).
#   tools/fuzz_all.sh [-t SECONDS] [-w WORKERS_PER_TARGET] [-b BUILD_DIR] [-o OUT_DIR] [-n] [TARGET...]
#     -t  seconds each target runs (default 60)
#     -w  libFuzzer workers per target (-fork=W; default 1). On 16 cores: -w 2 runs 8 x 2 workers.
#     -b  the fuzz build (default build-fuzz; configured and built with clang when missing)
#     -o  where corpora, crash artifacts, logs and summary.json go (default BUILD_DIR/runs)
#     -n  run BUILD_DIR/bin/fuzz_* as they are (built elsewhere; this machine needs no clang)
# Targets default to all (ds_config safetensors sharded_index hf_config tokenizer tokenizer_encode
# token_file manifest). Each starts from the seeds tools/fuzz_seeds.py writes and keeps its
# corpus in OUT_DIR/corpus/<target> across runs. Exit status 1 when any target crashed, leaked,
# timed out or ran out of memory: its inputs are OUT_DIR/artifacts/<target>/{crash,leak,timeout,
# oom}-* (reproduce: build-fuzz/bin/fuzz_<target> FILE).
# The long run the issue asks for (10 million executions per target), on a 16-core machine:
#   tools/fuzz_all.sh -t 3600 -w 2
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60 workers=1 build=build-fuzz out="" rebuild=1
while getopts "t:w:b:o:n" opt; do
  case "$opt" in
    t) seconds="$OPTARG" ;;
    w) workers="$OPTARG" ;;
    b) build="$OPTARG" ;;
    o) out="$OPTARG" ;;
    n) rebuild=0 ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
out="${out:-$build/runs}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ds_config safetensors sharded_index hf_config tokenizer
                                     tokenizer_encode token_file chat_template manifest)

if [ "$rebuild" -eq 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      >/dev/null
  fi
  cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null
fi
export ZT_FUZZ_TOKENIZER_DIR="$PWD/tests/data/tokenizer"
python3 tools/fuzz_seeds.py --out "$out/seeds" >/dev/null
mkdir -p "$out/logs"

pids=()
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  fork=()
  [ "$workers" -gt 1 ] && fork=(-fork="$workers" -ignore_crashes=0)
  # UBSan findings abort (the build has -fno-sanitize-recover), leaks are reported at exit.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 "${fork[@]}" -artifact_prefix="$out/artifacts/$t/" \
    "$out/corpus/$t" "$out/seeds/$t" >"$out/logs/$t.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || failed=1
done

# Executions: the final stats of a single process, or the last "#N" status line of -fork.
python3 - "$out" "$seconds" "${targets[@]}" <<'PY'
import glob, json, os, re, sys
out, seconds, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = []
for t in targets:
    log = open(os.path.join(out, "logs", t + ".log"), errors="replace").read()
    stat = re.findall(r"stat::number_of_executed_units: (\d+)", log)
    status = re.findall(r"^#(\d+)[:\s]", log, re.M)
    execs = sum(map(int, stat)) if stat else (int(status[-1]) if status else 0)
    crashes = sum(len(glob.glob(os.path.join(out, "artifacts", t, kind + "-*")))
                  for kind in ("crash", "leak", "timeout", "oom"))
    corpus = len(os.listdir(os.path.join(out, "corpus", t)))
    rows.append({"target": t, "seconds": seconds, "executions": execs, "crashes": crashes,
                 "corpus": corpus})
print(f"{'target':18} {'seconds':>8} {'executions':>12} {'exec/s':>8} {'corpus':>7} crashes")
for r in rows:
    print(f"{r['target']:18} {r['seconds']:8d} {r['executions']:12d} "
          f"{r['executions'] // max(1, r['seconds']):8d} {r['corpus']:7d} {r['crashes']}")
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
PY
# libFuzzer's findings (slow-unit-* files are only slow, not failures).
found=$(ls "$out"/artifacts/*/{crash,leak,timeout,oom}-* 2>/dev/null || true)
if [ "$failed" -ne 0 ] || [ -n "$found" ]; then
  echo "fuzz_all: a target failed (logs in $out/logs): $(echo $found)" >&2
  exit 1
fi
