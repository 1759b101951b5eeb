#!/usr/bin/env bash
# A change that must move no trained value (issue 31's renovation), checked on the CPU: runs the
# default job (30 steps), a 2-rank stage-3 bf16 run, 2-rank stage-2 optimizer-offload runs (cpu and
# nvme) and a 2-rank --deepspeed run, and prints one hash per run and artefact: the metrics (step,
# loss, lr, grad_norm), the model's files, the checkpoint shards, the manifests without the fields
# that name the run or the time. Run it with the build before and after the change and diff the two.
#   tools/renovation_hashes.sh BUILD_DIR OUT_DIR [TOKENS]   (TOKENS: the default job's kjv.bin,
#   prepared here from scripts/get_corpus.sh's corpus when missing; default OUT_DIR/kjv.bin)
set -euo pipefail
cd "$(dirname "$0")/.."
zt=$(realpath "$1")/bin/zerotrain; out=$2
rm -rf "$out"; mkdir -p "$out"; out=$(realpath "$out")
data=${3:-$out/kjv.bin}
if [ ! -f "$data" ]; then
  scripts/get_corpus.sh "$out/corpus" > /dev/null
  "$zt" data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \
    --input "$out/corpus/kjv.txt" --split-on-blank-lines --append-eos --output "$data" > /dev/null
fi
export OMP_WAIT_POLICY=PASSIVE
cat > "$out/ds_config.json" <<'JSON'
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 2,
  "gradient_clipping": 1.0,
  "bf16": {"enabled": true},
  "optimizer": {"type": "AdamW", "params": {"lr": 2e-3, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
  "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 2e-3, "warmup_num_steps": 3, "total_num_steps": 12}},
  "zero_optimization": {"stage": 1, "reduce_bucket_size": 5e5, "overlap_comm": true}
}
JSON
M="--model assets/models/kjv-llama-4m/config.json --data $data"
run() { local name=$1; shift; "$zt" train $M --out "$out/$name" "$@" > "$out/$name.log" 2>&1 || { echo "$name FAILED"; tail -5 "$out/$name.log"; return 1; }; }
run default --steps 30 --micro-batch 16 --seq-len 128 --lr 3e-3 --warmup 20 --log-every 1 &
run s3bf16 --nproc 2 --zero-stage 3 --dtype bf16 --steps 8 --micro-batch 4 --seq-len 64 --lr 2e-3 --warmup 2 --log-every 1 --save-every 4
wait
run s2cpu --nproc 2 --zero-stage 2 --offload-optimizer cpu --steps 8 --micro-batch 4 --seq-len 64 --lr 2e-3 --warmup 2 --log-every 1
mkdir -p "$out/nvme"
run s2nvme --nproc 2 --zero-stage 2 --offload-optimizer nvme --nvme-path "$out/nvme" --steps 8 --micro-batch 4 --seq-len 64 --lr 2e-3 --warmup 2 --log-every 1
wait
run deepspeed --deepspeed "$out/ds_config.json" --nproc 2 --steps 12 --seq-len 64 --log-every 1
for name in default s3bf16 s2cpu s2nvme deepspeed; do
  d="$out/$name"
  m=$(python3 - "$d" <<'PY'
import json, sys, hashlib, glob, os
d = sys.argv[1]
f = [p for p in glob.glob(d + "/**/*.jsonl", recursive=True)]
rows = []
for p in sorted(f):
    for line in open(p):
        r = json.loads(line)
        if "step" in r and "loss" in r and "lr" in r:
            rows.append((r["step"], repr(r["loss"]), repr(r["lr"]), repr(r.get("grad_norm"))))
print(hashlib.sha256(repr(rows).encode()).hexdigest()[:16], len(rows))
PY
)
  model=$(cd "$d/model" && find . -type f | sort | xargs sha256sum | sha256sum | cut -c1-16)
  ck=$(cd "$d/checkpoints" && find . -type f ! -name 'manifest.json' | sort | xargs -r sha256sum | sed 's|  \./[^/]*/|  |' | sort -k2 | sha256sum | cut -c1-16)
  man=$(python3 - "$d" <<'PY'
import json, sys, glob, hashlib
d = sys.argv[1]
out = []
for p in sorted(glob.glob(d + "/checkpoints/*/manifest.json")):
    m = json.load(open(p))
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if not any(s in k for s in ("time", "run_id", "date", "host", "seconds", "path", "dir", "version", "commit"))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    out.append(json.dumps(strip(m), sort_keys=True))
print(hashlib.sha256("\n".join(out).encode()).hexdigest()[:16], len(out))
PY
)
  echo "$name metrics=$m model=$model checkpoints=$ck manifest=$man"
done
