#!/usr/bin/env python3
"""Forward-pass speed of the residual tower: positions per second at several batch sizes.

Vocabulary:

- **net** ``BxF``: B residual blocks of F filters (``10x64``, ``10x128``, ``20x256``),
  on a 9x9 Go board with 18 input planes unless ``--size`` / ``--planes`` say otherwise.
- **dtype**: ``fp32`` (on CUDA with torch's default TF32 convolutions, so its peak
  is measured as a TF32 matmul), ``bf16`` (autocast, as :meth:`zero9.nn.net.ZeroNet.predict`
  runs on CUDA) or ``bf16w`` (weights and inputs cast to bf16, no autocast).
- **layout**: ``nchw`` (contiguous) or ``nhwc`` (channels-last).
- **FLOPs/pos**: from :func:`zero9.nn.net.flops_per_position` (convs and FCs, 2 per
  multiply-add).
- **peak**: the FLOP rate of one large matmul in the same dtype, measured in the same
  run on the same device (the reference); ``% peak`` = best measured net FLOP rate
  over it.

Run from the repository root; needs only torch and numpy (``PYTHONPATH=.`` if zero9
is not installed)::

    python3 scripts/bench_net.py                      # CPU, 2 threads, 10x64 and 10x128
    python3 scripts/bench_net.py --device cuda --nets 10x128,20x256 --dtypes fp32,bf16 --compile
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from zero9.nn.net import ZeroNet, flops_per_position, resolve_device  # noqa: E402

BATCHES = (1, 8, 64, 256)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nets", default="10x64,10x128", help="comma-separated BLOCKSxFILTERS")
    p.add_argument("--device", default="cpu", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--dtypes", default="fp32", help="comma-separated: fp32, bf16 (autocast), bf16w")
    p.add_argument("--layouts", default="nchw,nhwc", help="comma-separated: nchw, nhwc (channels-last)")
    p.add_argument("--batches", default=",".join(map(str, BATCHES)))
    p.add_argument("--compile", action="store_true", help="also time torch.compile'd nets")
    p.add_argument("--compile-mode", default="reduce-overhead",
                   help="torch.compile mode (reduce-overhead = CUDA graphs; default, max-autotune, ...)")
    p.add_argument("--compile-layouts", default=None, help="layouts for compiled nets (default: --layouts)")
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--planes", type=int, default=18)
    p.add_argument("--seconds", type=float, default=1.0, help="timing per measurement")
    return p.parse_args(argv)


def parse_net(text: str) -> tuple[int, int]:
    try:
        blocks, filters = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"bad net {text!r}: expected BLOCKSxFILTERS, e.g. 10x128") from None
    return blocks, filters


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_rate(fn, device: torch.device, seconds: float, min_iters: int = 2) -> float:
    """Calls per second of ``fn``: one warm-up call, then calls until ``seconds`` have passed."""
    fn()
    sync(device)
    iters, start = 0, time.perf_counter()
    while True:
        fn()
        iters += 1
        if iters % 4 == 0 or iters <= min_iters:
            sync(device)  # no per-call sync: GPU calls queue as they would in use
            elapsed = time.perf_counter() - start
            if iters >= min_iters and elapsed >= seconds:
                return iters / elapsed


def matmul_peak(device: torch.device, dtype: str, seconds: float) -> float:
    """FLOP/s of a large square matmul: the reference the nets are compared with."""
    n = 8192 if device.type == "cuda" else 1024
    tdtype = torch.bfloat16 if dtype.startswith("bf16") else torch.float32
    a = torch.randn(n, n, device=device, dtype=tdtype)
    b = torch.randn(n, n, device=device, dtype=tdtype)
    with torch.inference_mode():
        rate = timed_rate(lambda: torch.mm(a, b), device, seconds)
    return rate * 2 * n**3


def bench_net(blocks: int, filters: int, dtype: str, layout: str, compiled: bool,
              args: argparse.Namespace, device: torch.device, batches: list[int]) -> dict:
    net = ZeroNet(args.planes, args.size, args.size * args.size + 1, blocks, filters).to(device).eval()
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    net = net.to(memory_format=fmt)
    in_dtype = torch.float32
    if dtype == "bf16w":
        net, in_dtype = net.to(torch.bfloat16), torch.bfloat16
    forward = torch.compile(net, mode=args.compile_mode) if compiled else net
    rates = {}
    compile_s = 0.0
    for batch in batches:
        x = (torch.rand(batch, args.planes, args.size, args.size, device=device) < 0.3).float()
        x = x.to(in_dtype).contiguous(memory_format=fmt)

        def step(x=x):
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=dtype == "bf16"):
                return forward(x)

        with torch.inference_mode():
            if compiled:
                start = time.perf_counter()
                step()
                sync(device)
                compile_s += time.perf_counter() - start
            rates[batch] = timed_rate(step, device, args.seconds) * batch
    return {"rates": rates, "flops": flops_per_position(net.config), "compile_s": compile_s}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = resolve_device(args.device)
    torch.set_num_threads(args.threads)
    batches = [int(b) for b in args.batches.split(",")]
    dtypes = args.dtypes.split(",")
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32  # fp32 peak as the convs run
        name = torch.cuda.get_device_name(device)
    else:
        name = f"CPU, {args.threads} threads"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_net: {name}, torch {torch.__version__}, board {args.size}x{args.size}, "
          f"{args.planes} planes, load average {load:.2f}\n")
    peaks = {d: matmul_peak(device, d, args.seconds) for d in dtypes}
    for d, peak in peaks.items():
        print(f"reference: {d} matmul peak {peak / 1e12:.3f} TFLOP/s (measured now)")
    print()
    head = "| net | dtype | compiled | layout | GFLOP/pos | " + " | ".join(f"pos/s @{b}" for b in batches)
    print(head + " | ms/pos @64 | best TFLOP/s | % of peak |")
    print("|" + "---|" * (head.count("|") + 3))
    compiles = [False, True] if args.compile else [False]
    for net_text in args.nets.split(","):
        blocks, filters = parse_net(net_text)
        for dtype in dtypes:
            for compiled in compiles:
                layouts = args.compile_layouts if compiled and args.compile_layouts else args.layouts
                for layout in layouts.split(","):
                    r = bench_net(blocks, filters, dtype, layout, compiled, args, device, batches)
                    best = max(r["rates"].values()) * r["flops"]
                    ms64 = f"{1000 / r['rates'][64]:.3f}" if 64 in r["rates"] else "-"
                    cells = " | ".join(f"{r['rates'][b]:,.0f}" for b in batches)
                    comp = f"{args.compile_mode} ({r['compile_s']:.0f} s)" if compiled else "no"
                    gflop = r["flops"] / 1e9
                    print(f"| {blocks}x{filters} | {dtype} | {comp} | {layout} | {gflop:.3f} | {cells} "
                          f"| {ms64} | {best / 1e12:.3f} | {100 * best / peaks[dtype]:.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
