#!/usr/bin/env bash
# PyTorch parity on the CPU (issue 3's CI check): tools/parity/parity.py against Debian's PyTorch
# (python3-torch, installed by install_deps.sh) and transformers from PyPI, pinned to the last
# release series that still supports torch 1.13. Runs every model family; writes the report to
# $1 (default build/parity_cpu.json) and exits non-zero when a family misses a tolerance.
# Then tools/parity/check_generate.py: `zerotrain generate`'s greedy text against transformers'
# generate on small random models of every family. Then tools/parity/check_consolidate.py: a
# stage-3 checkpoint consolidated to Hugging Face weights loads in transformers with zerotrain's
# logits. Then tools/parity/check_tfevents.py and check_wandb.py: short `zerotrain train` runs
# with DeepSpeed's tensorboard / wandb sections, their files read by the pinned tensorboard and
# wandb packages' own readers (no service is contacted). Last, bench/finetune_vs_trainer.py --tiny:
# a chat fine-tune by zerotrain and by transformers' Trainer on the same rows from the same weights
# (f32): the loss curves and validation losses must coincide.
#   scripts/parity_cpu.sh [REPORT] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
report="${1:-build/parity_cpu.json}"
build="${2:-build}"
venv="$build/parity-venv"
# Debian's interpreter, not whatever python3 is first in PATH: python3-torch lives in its dist-packages.
py=/usr/bin/python3
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
# Exact pins: pip downloads nothing when a kept venv already has them.
"$venv/bin/pip" install -q --disable-pip-version-check "transformers==4.46.3" "safetensors==0.8.0" \
  "tensorboard==2.18.0" "wandb==0.19.1" "accelerate==1.1.1"
OMP_NUM_THREADS=1 "$venv/bin/python" tools/parity/parity.py --runner "$build/bin/parity_runner" \
  --device cpu --out "$report" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
OMP_NUM_THREADS=1 "$venv/bin/python" tools/parity/check_generate.py --zerotrain "$build/bin/zerotrain"
OMP_NUM_THREADS=1 "$venv/bin/python" tools/parity/check_consolidate.py --zerotrain "$build/bin/zerotrain" \
  --runner "$build/bin/parity_runner"
OMP_NUM_THREADS=1 "$venv/bin/python" tools/parity/check_tfevents.py --zerotrain "$build/bin/zerotrain"
OMP_NUM_THREADS=1 WANDB_MODE=offline WANDB_ERROR_REPORTING=false "$venv/bin/python" tools/parity/check_wandb.py \
  --zerotrain "$build/bin/zerotrain"
# Debian's torch 1.13 predates the SDPA transformers needs: the Trainer's model uses eager attention.
"$venv/bin/python" bench/finetune_vs_trainer.py make-data --out "$build/finetune-tiny/data" >/dev/null
OMP_NUM_THREADS=1 "$venv/bin/python" bench/finetune_vs_trainer.py run --dir "$build/finetune-tiny/data" \
  --zerotrain "$build/bin/zerotrain" --work "$build/finetune-tiny/work" --device cpu --tiny --attn eager \
  --json "$build/finetune-tiny/result.json"
