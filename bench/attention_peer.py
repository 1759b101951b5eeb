#!/usr/bin/env python3
"""PyTorch's cuDNN attention beside kernel_bench's attention rows (issue 14).

Times torch's scaled_dot_product_attention with the cuDNN backend on the shape of kernel_bench's
attention rows (causal, bf16, [B, S, H, D] memory seen as [B, H, S, D], grouped heads) the way
bench/bench_harness.h times ours: warm-up runs, then runs queued back to back, each between two
CUDA events, one synchronization at the end, the median. FLOPs as ../shared/DEVICE.md counts them:
4 S^2 D Hq / 2 per batch row forward, x2.5 backward.

Each mode runs the backward twice on the same inputs and says whether dQ, dK and dV came out
bitwise equal: "default" is torch's default, "deterministic" runs under
torch.use_deterministic_algorithms(True).

    python3 bench/attention_peer.py --json out.json
    python3 bench/attention_peer.py --seq 8192 --reps 50
"""
import argparse
import json
import os
import sys

# cuBLAS is deterministic under torch.use_deterministic_algorithms only with a fixed workspace.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402


def time_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for a, b in zip(starts, ends):
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return sorted(a.elapsed_time(b) for a, b in zip(starts, ends))[reps // 2]


def run_mode(args, deterministic):
    torch.use_deterministic_algorithms(deterministic)
    g = torch.Generator(device="cuda").manual_seed(19)

    def randn(heads):
        x = torch.randn(args.batch, args.seq, heads, args.head_dim, device="cuda",
                        dtype=torch.bfloat16, generator=g)
        return x.transpose(1, 2)  # [B, H, S, D] over [B, S, H, D] memory, as our tensors lie

    q = randn(args.heads).requires_grad_()
    k = randn(args.kv_heads).requires_grad_()
    v = randn(args.kv_heads).requires_grad_()
    dout = randn(args.heads)
    gqa = args.heads != args.kv_heads
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        def forward():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

        fwd_ms = time_ms(forward, args.warmup, args.reps)
        out = forward()

        def backward():
            return torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)

        bwd_ms = time_ms(backward, args.warmup, args.reps)
        first = backward()
        second = backward()
    torch.cuda.synchronize()
    bitwise = all(torch.equal(a, b) for a, b in zip(first, second))
    fwd_flops = 4.0 * args.seq * args.seq * args.head_dim * args.heads / 2 * args.batch
    return {
        "mode": "deterministic" if deterministic else "default",
        "fwd_ms": fwd_ms,
        "bwd_ms": bwd_ms,
        "fwd_tflops": fwd_flops / (fwd_ms * 1e-3) / 1e12,
        "bwd_tflops": 2.5 * fwd_flops / (bwd_ms * 1e-3) / 1e12,
        "fwd_bwd_tflops": 3.5 * fwd_flops / ((fwd_ms + bwd_ms) * 1e-3) / 1e12,
        "backward_bitwise_repeatable": bitwise,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--json", help="write the results here as JSON")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("attention_peer: no CUDA device")
    if args.heads % args.kv_heads != 0:
        sys.exit(f"attention_peer: --heads {args.heads} is not a multiple of --kv-heads {args.kv_heads}")
    rows = []
    for deterministic in (False, True):
        try:
            rows.append(run_mode(args, deterministic))
        except RuntimeError as e:  # torch refuses a mode it cannot run deterministically
            rows.append({"mode": "deterministic" if deterministic else "default",
                         "error": str(e).splitlines()[0]})
    report = {
        "peer": "torch scaled_dot_product_attention, cuDNN backend",
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(),
        "shape": {"B": args.batch, "S": args.seq, "Hq": args.heads, "Hkv": args.kv_heads,
                  "D": args.head_dim, "dtype": "bf16", "causal": True},
        "timing": f"median of {args.reps} back-to-back runs between CUDA events",
        "rows": rows,
    }
    print(f"{'mode':<14} {'fwd ms':>8} {'bwd ms':>8} {'fwd TF/s':>9} {'bwd TF/s':>9} "
          f"{'f+b TF/s':>9}  bitwise")
    for r in rows:
        if "error" in r:
            print(f"{r['mode']:<14} not run: {r['error']}")
            continue
        print(f"{r['mode']:<14} {r['fwd_ms']:8.3f} {r['bwd_ms']:8.3f} {r['fwd_tflops']:9.1f} "
              f"{r['bwd_tflops']:9.1f} {r['fwd_bwd_tflops']:9.1f}  "
              f"{'yes' if r['backward_bitwise_repeatable'] else 'no'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
