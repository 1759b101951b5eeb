#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ in parallel for a given time and prints, per target, the
# executions, the seconds and the crashes (docs/fuzzing.md records the runs).
#   tools/fuzz_all.sh [-t SECONDS] [-w WORKERS_PER_TARGET] [-b BUILD_DIR] [-o OUT_DIR] [-n] [TARGET[:W]...]
#     -t  seconds each target runs (default 60)
#     -w  libFuzzer processes per target (default 1); TARGET:W gives one target W of its own. The
#         processes are independent (not -fork: its jobs restart and re-read the corpus, which
#         halved the executions per core on the 16-core run) and share the target's corpus
#         directory, picking up each other's finds as libFuzzer reloads it.
#     -b  the fuzz build (default build-fuzz; configured and built with clang when missing)
#     -o  where corpora, crash artifacts, logs and summary.json go (default BUILD_DIR/runs)
#     -n  run BUILD_DIR/bin/fuzz_* as they are (built elsewhere; this machine needs no clang)
# Targets default to all (ds_config safetensors sharded_index hf_config tokenizer tokenizer_encode
# token_file chat_template manifest accelerate_config). Each starts from the seeds tools/fuzz_seeds.py writes and
# keeps its corpus in OUT_DIR/corpus/<target> across runs. Exit status 1 when any target crashed,
# leaked, timed out or ran out of memory: its inputs are OUT_DIR/artifacts/<target>/{crash,leak,
# timeout,oom}-* (reproduce: build-fuzz/bin/fuzz_<target> FILE).
# The long run the issue asks for (10 million executions per target), on a 16-core machine:
#   tools/fuzz_all.sh -t 3600 -w 2 tokenizer_encode:4
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
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
out="${out:-$build/runs}"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(ds_config safetensors sharded_index hf_config tokenizer
                                 tokenizer_encode token_file chat_template manifest accelerate_config)
targets=() target_workers=()
for spec in "${specs[@]}"; do
  targets+=("${spec%%:*}")
  if [[ "$spec" == *:* ]]; then target_workers+=("${spec#*:}"); else target_workers+=("$workers"); fi
  if ! [[ "${target_workers[-1]}" =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz_all: the worker count of '$spec' must be a positive integer" >&2
    exit 2
  fi
done

# The longest input each target is given. The encoder works a word and a segment at a time: 512
# bytes already hold words past the BPE cache's 256-byte limit and dozens of segments, and run
# 1439 inputs a second on one core against 383 with the 12 kB inputs the corpus had grown to.
max_len_of() {
  case "$1" in
    tokenizer_encode) echo 512 ;;
    *) echo 65536 ;;
  esac
}

if [ "$rebuild" -eq 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      >/dev/null
  fi
  cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null
fi
for t in "${targets[@]}"; do
  [ -x "$build/bin/fuzz_$t" ] || { echo "fuzz_all: no target $build/bin/fuzz_$t" >&2; exit 2; }
done
export ZT_FUZZ_TOKENIZER_DIR="$PWD/tests/fixtures/tokenizer"
python3 tools/fuzz_seeds.py --out "$out/seeds" >/dev/null
mkdir -p "$out/logs"
rm -f "$out"/logs/*.log

pids=()
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  for ((w = 0; w < target_workers[i]; ++w)); do
    # UBSan findings abort (the build has -fno-sanitize-recover), leaks are reported at exit.
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
      "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
      -max_len="$(max_len_of "$t")" -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" \
      "$out/corpus/$t" "$out/seeds/$t" >"$out/logs/$t.$w.log" 2>&1 &
    pids+=($!)
  done
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done

# Executions: the sum of every process's final stats.
python3 - "$out" "$seconds" "${targets[@]}" <<'PY'
import glob, json, os, re, sys
out, seconds, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = []
for t in targets:
    logs = sorted(glob.glob(os.path.join(out, "logs", t + ".*.log")))
    execs = 0
    for path in logs:
        log = open(path, errors="replace").read()
        stat = re.findall(r"stat::number_of_executed_units: (\d+)", log)
        status = re.findall(r"^#(\d+)[:\s]", log, re.M)  # a process killed before its stats
        execs += int(stat[-1]) if stat else (int(status[-1]) if status else 0)
    crashes = sum(len(glob.glob(os.path.join(out, "artifacts", t, kind + "-*")))
                  for kind in ("crash", "leak", "timeout", "oom"))
    corpus = len(os.listdir(os.path.join(out, "corpus", t)))
    rows.append({"target": t, "seconds": seconds, "processes": len(logs), "executions": execs,
                 "crashes": crashes, "corpus": corpus})
print(f"{'target':18} {'seconds':>8} {'procs':>5} {'executions':>12} {'exec/s':>8} {'corpus':>7} crashes")
for r in rows:
    print(f"{r['target']:18} {r['seconds']:8d} {r['processes']:5d} {r['executions']:12d} "
          f"{r['executions'] // max(1, r['seconds']):8d} {r['corpus']:7d} {r['crashes']}")
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
PY
# libFuzzer's findings (slow-unit-* files are only slow, not failures).
found=$(ls "$out"/artifacts/*/{crash,leak,timeout,oom}-* 2>/dev/null || true)
if [ "$failed" -ne 0 ] || [ -n "$found" ]; then
  echo "fuzz_all: a target failed (logs in $out/logs): $(echo $found)" >&2
  exit 1
fi
