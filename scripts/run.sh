#!/usr/bin/env bash
# The main job on its default: install, build, check the kernels, then train a small Llama-style
# model (4M parameters) on the King James Bible (Debian's bible-kjv) and write the model in Hugging
# Face layout and a loss-curve image under runs/kjv/, and print a short greedy sample of what it learned
# (--sample-tokens 0 turns it off). On 2 CPU cores it trains for about 5 minutes; with
# a GPU it runs there. Extra arguments go to `zerotrain train` (e.g. --steps 50).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh build >/dev/null
scripts/get_corpus.sh
build/bin/zerotrain selfcheck --device cpu >/dev/null && echo "[run] kernel self-check passed"
build/bin/zerotrain data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \
  --input data/corpus/kjv.txt --split-on-blank-lines --append-eos --output data/kjv.bin
# libgomp's threads spin between parallel regions by default and starve OpenBLAS's threads of the
# two cores; sleeping waiters make CPU training about twice as fast.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
build/bin/zerotrain train --model assets/models/kjv-llama-4m/config.json --data data/kjv.bin --out runs/kjv \
  --steps 500 --micro-batch 16 --seq-len 128 --lr 3e-3 --warmup 20 --log-every 25 \
  --sample-tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json "$@"
