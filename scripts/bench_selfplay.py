"""Self-play throughput against the net's raw batched forward speed, measured in the same run.

    PYTHONPATH=. python3 scripts/bench_selfplay.py --device cuda --game go --size 9 --blocks 10 \\
        --filters 128 --workers 15 --games-parallel 64 --leaves 8 --seconds 60 [--in-flight 1]

Prints: net evaluations/s during self-play (cache hits excluded, counted after a
warm-up), and the reference measured in the same run once self-play has stopped: the
net's *ceiling*, the compiled bf16 channels-last forward with CUDA graphs that the
inference server runs (:func:`zero9.nn.graphed.compiled_forward`), at batch 1024 and
4096 and at the mean batch the server saw; the ratio of the two; and the settings.
On the CPU (and with ``--no-server``) the reference is ``net.predict`` instead, the call
each worker then makes. ``--in-flight 1|2`` (default 2): batches each worker keeps in
flight with the inference server; 1 waits for each answer (the A/B of issue 25).
``--eval-cache N``: each worker's evaluator cache (self-play's option; 0: none).
``--json FILE`` writes ``{"evals_per_s", "ceiling_pos_per_s", "ratio", "batch", "device",
"net", ...}``. A random net of the asked shape is used:
speed does not depend on the weights (games from a random net are longer, if anything).

**A host** (``--gpus N``): one pool of workers with an inference server on each of N GPUs
(:func:`zero9.learn.selfplay.pool.make_pool`, as ``zero9 autotrain`` builds it), measured twice
in the same run: first the first GPU's workers alone (the **1-GPU figure**), then all of
them; ``scaling`` is the ratio. Then (``--train-seconds T``, default 120) the concurrent
autotrain (:mod:`zero9.learn.loop.concurrent`) runs T seconds on that pool from a fresh run
directory, a trainer beside self-play, and its **self-play share** (the share of the
loop's wall time inside self-play rounds) and its self-play rate come out too::

    PYTHONPATH=. python3 scripts/bench_selfplay.py --device cuda --gpus 4 --blocks 10 --filters 128 \
        --games-parallel 64 --leaves 8 --json docs/runs/bench-selfplay-host.json

On the CPU, ``--gpus N --server`` puts N inference servers on the CPU (to test the code path).
``--json`` then writes ``{"gpus", "evals_per_s", "evals_per_s_1gpu", "scaling", "selfplay_share",
"device", "net", ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def raw_throughput(net, planes_shape: tuple[int, ...], batch: int, seconds: float = 5.0) -> float:
    """Positions per second through ``net.predict`` at ``batch`` (after a warm-up)."""
    rng = np.random.default_rng(0)
    x = (rng.random((batch, *planes_shape)) < 0.3).astype(np.float32)
    for _ in range(3):
        net.predict(x)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        net.predict(x)
        n += batch
    return n / (time.perf_counter() - start)


def ceiling_throughput(forward, planes_shape: tuple[int, ...], batch: int, device,
                       seconds: float = 5.0) -> float:
    """Positions per second through the compiled forward at ``batch``, input already on the device."""
    x = (torch.rand(batch, *planes_shape, device=device) < 0.3).to(torch.uint8)
    for _ in range(3):
        forward(x)
    torch.cuda.synchronize(device)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        forward(x)
        n += batch
        if n % (batch * 8) == 0:
            torch.cuda.synchronize(device)
    torch.cuda.synchronize(device)
    return n / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="auto")
    p.add_argument("--game", default="go", choices=["go", "gomoku"])
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--connect", type=int, default=None)
    p.add_argument("--blocks", type=int, default=10)
    p.add_argument("--filters", type=int, default=128)
    p.add_argument("--workers", type=int, default=0, help="0: one per core")
    p.add_argument("--games-parallel", type=int, default=64)
    p.add_argument("--leaves", type=int, default=8)
    p.add_argument("--visits", type=int, default=400)
    p.add_argument("--gumbel", action="store_true")
    p.add_argument("--seconds", type=float, default=60.0, help="self-play time measured (after the warm-up)")
    p.add_argument("--warmup", type=float, default=20.0, help="seconds of self-play before measuring")
    p.add_argument("--no-server", action="store_true",
                   help="CUDA: every worker holds its own net (the old way) instead of one inference server")
    p.add_argument("--server", action="store_true",
                   help="CPU: use the inference server too (one process evaluates, workers search), "
                        "to try --in-flight without a GPU")
    p.add_argument("--in-flight", type=int, default=2, choices=(1, 2),
                   help="batches each worker keeps in flight with the inference server (1: wait for each)")
    p.add_argument("--eval-cache", type=int, default=None, metavar="N",
                   help="entries of each worker's evaluator cache (0: none; default self-play's)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    p.add_argument("--gpus", type=int, default=0, metavar="N",
                   help="a host: self-play on N GPUs (N inference servers) beside the 1-GPU figure of the "
                        "same run, then the concurrent autotrain's self-play share (module docstring)")
    p.add_argument("--pin", action="store_true",
                   help="--gpus: each GPU's workers on its share of the host's cores (default: anywhere, so "
                        "the 1-GPU figure's workers have the otherwise idle host to themselves)")
    p.add_argument("--train-seconds", type=float, default=120.0,
                   help="--gpus: seconds of the concurrent autotrain (0: skip)")
    p.add_argument("--train-games", type=int, default=512, help="--gpus: the autotrain's --games-per-gen")
    p.add_argument("--train-steps", type=int, default=200, help="--gpus: the autotrain's --steps")
    args = p.parse_args(argv)
    if args.gpus:
        return host_bench(args)

    from zero9.games import make_game
    from zero9.learn.selfplay.pool import default_workers, play_selfplay
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.features import num_planes
    from zero9.nn.graphed import compiled_forward
    from zero9.nn.net import make_net, resolve_device
    from zero9.settings import SearchConfig, SelfPlayConfig

    device = str(resolve_device(args.device))
    params = {"connect": args.connect} if args.connect else {}
    game = make_game(args.game, args.size, **params)
    torch.manual_seed(0)
    net = make_net(game, args.blocks, args.filters)
    workers = args.workers or default_workers(device)
    cfg = SelfPlayConfig(visits=args.visits, parallel_games=args.games_parallel, leaves_per_tree=args.leaves,
                         search=SearchConfig(noise=True), gumbel=args.gumbel, seed=1, resign_threshold=None,
                         in_flight=args.in_flight,
                         **({} if args.eval_cache is None else {"eval_cache": args.eval_cache}))
    server = (device.startswith("cuda") and not args.no_server) or args.server
    in_flight = args.in_flight if server else 1  # without the server every net call waits
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.pt"
        save_checkpoint(path, net, {"game": game.to_dict()})
        stats = play_selfplay(path, 10**9, cfg, Path(tmp) / "chunks", None, workers=workers, device=device,
                              progress=False, seconds=args.warmup + args.seconds, warmup_seconds=args.warmup,
                              inference_server=server)
    selfplay_rate = stats.measured_evals / stats.measured_seconds if stats.measured_seconds else 0.0
    batch = max(1, round(stats.evals / stats.calls)) if stats.calls else 1
    shape = (num_planes(game), game.size, game.size)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"settings: {game.to_dict()}, net {args.blocks}x{args.filters}, device {device}, "
          f"workers {workers}, inference server {server}, batches in flight {in_flight}, "
          f"games in flight {args.games_parallel}/worker, leaves {args.leaves}/game, visits {args.visits}, "
          f"gumbel {args.gumbel}, eval cache {cfg.eval_cache:,}, cores {os.cpu_count()}, load {load:.1f}")
    print(f"self-play: {stats.games} games finished, {stats.moves} moves, "
          f"mean batch per worker request {stats.evals / max(1, stats.calls):.1f} over "
          f"{stats.measured_seconds:.1f}s measured")
    print(f"net evaluations/s during self-play: {selfplay_rate:,.0f}")
    waiting = stats.measured_net_seconds / (workers * stats.measured_seconds or 1.0)
    print(f"workers' time inside the net (waiting for it): {100 * waiting:.0f}%")
    result = {"evals_per_s": round(selfplay_rate), "batch": batch, "device": device,
              "net": f"{args.blocks}x{args.filters}", "game": game.to_dict(), "workers": workers,
              "inference_server": server, "in_flight": in_flight, "games_parallel": args.games_parallel,
              "leaves": args.leaves, "visits": args.visits, "eval_cache": cfg.eval_cache,
              "seconds": stats.measured_seconds, "net_wait_share": round(waiting, 3)}
    if device.startswith("cuda"):
        dev = torch.device(device)
        forward = compiled_forward(net, dev, buckets=(1024, 4096))
        ceilings = {b: ceiling_throughput(forward, shape, b, dev) for b in (1024, 4096)}
        ceiling = ceilings[1024]  # issue 25's reference batch; 4096 is printed beside it
        for b, rate in ceilings.items():
            print(f"ceiling, compiled bf16 forward at batch {b}: {rate:,.0f}/s "
                  f"-> ratio {selfplay_rate / rate:.2f}")
        result.update(ceiling_pos_per_s=round(ceiling), ratio=round(selfplay_rate / ceiling, 3),
                      ceiling_by_batch={str(b): round(r) for b, r in ceilings.items()},
                      reference="compiled bf16 channels-last forward with CUDA graphs (zero9.nn.inference)")
    else:
        # Self-play ran W one-thread workers; the fair raw figure is W one-thread forward loops.
        net = net.to(device).eval()
        torch.set_num_threads(1)
        scale = min(workers, os.cpu_count() or 1)
        raw = scale * raw_throughput(net, shape, batch)
        print(f"(cpu: the reference is {scale} one-thread net.predict loops, like the {workers} workers)")
        print(f"raw net.predict throughput at batch {batch}: {raw:,.0f}/s -> ratio {selfplay_rate / raw:.2f}")
        result.update(ceiling_pos_per_s=round(raw), ratio=round(selfplay_rate / raw, 3),
                      reference="net.predict, one thread per worker")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


def host_bench(args: argparse.Namespace) -> int:
    """N GPUs against one, in one run and one pool; then self-play's share beside the trainer."""
    from zero9.games import make_game
    from zero9.learn.selfplay.pool import make_pool, play_selfplay
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.net import make_net, resolve_device
    from zero9.settings import SearchConfig, SelfPlayConfig

    device = str(resolve_device(args.device))
    cuda = device.startswith("cuda")
    if cuda and torch.cuda.device_count() < args.gpus:
        raise SystemExit(f"--gpus {args.gpus}, but torch sees {torch.cuda.device_count()} GPU(s)")
    if not cuda and not args.server:
        raise SystemExit("--gpus on the CPU needs --server (N inference servers on the CPU)")
    devices = [f"cuda:{k}" for k in range(args.gpus)] if cuda else ["cpu"] * args.gpus
    cores = os.cpu_count() or 1
    # every server, the trainer and this process take a core; the rest play, in equal shares per GPU
    per_gpu = args.workers or max(1, (cores - args.gpus - 2) // args.gpus)
    params = {"connect": args.connect} if args.connect else {}
    game = make_game(args.game, args.size, **params)
    torch.manual_seed(0)
    net = make_net(game, args.blocks, args.filters)
    cfg = SelfPlayConfig(visits=args.visits, parallel_games=args.games_parallel, leaves_per_tree=args.leaves,
                         search=SearchConfig(noise=True), gumbel=args.gumbel, seed=1, resign_threshold=None,
                         in_flight=args.in_flight,
                         **({} if args.eval_cache is None else {"eval_cache": args.eval_cache}))
    shape = f"{args.blocks}x{args.filters}"
    result: dict = {"gpus": args.gpus, "device": device, "net": f"{shape} (random weights)",
                    "game": game.to_dict(), "workers_per_gpu": per_gpu, "cores": cores,
                    "games_parallel": args.games_parallel, "leaves": args.leaves, "visits": args.visits,
                    "seconds": args.seconds, "pinned": args.pin}
    if cuda:
        result["gpu_name"] = torch.cuda.get_device_name(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.pt"
        save_checkpoint(path, net, {"game": game.to_dict()})
        began = time.monotonic()
        with make_pool(path, device, per_gpu * args.gpus, 1, cfg, devices=devices, server=True,
                       pin=args.pin) as pool:
            print(f"pool: {per_gpu * args.gpus} workers, {args.gpus} inference servers ready in "
                  f"{time.monotonic() - began:.0f}s", flush=True)
            rates = {}
            for gpus, workers in ((1, per_gpu), (args.gpus, 0)):
                stats = play_selfplay(path, 10**9, cfg, Path(tmp) / f"chunks{gpus}", None, pool=pool,
                                      workers=workers, device=device, progress=False,
                                      seconds=args.warmup + args.seconds, warmup_seconds=args.warmup)
                rates[gpus] = stats.measured_evals / stats.measured_seconds if stats.measured_seconds else 0.0
                print(f"{gpus} GPU(s), {workers or pool.size} workers: {rates[gpus]:,.0f} net evaluations/s "
                      f"({stats.games} games)", flush=True)
            result.update(evals_per_s=round(rates[args.gpus]), evals_per_s_1gpu=round(rates[1]),
                          scaling=round(rates[args.gpus] / max(1.0, rates[1]), 3))
            if args.train_seconds > 0:
                result.update(concurrent_share(args, Path(tmp) / "run", pool, device))
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


def concurrent_share(args: argparse.Namespace, run: Path, pool, device: str) -> dict:
    """Run the concurrent autotrain for ``--train-seconds`` on ``pool``: self-play's share of the wall
    time, the trainer's, and the self-play rate while it trains (rounds after the first)."""
    from zero9.cli import autotrain
    from zero9.learn.loop.concurrent import ConcurrentAutoTrain
    from zero9.util.files import read_jsonl

    parser = argparse.ArgumentParser()
    autotrain.add_arguments(parser)
    game = ["--game", args.game, "--size", str(args.size)] + (["--connect", str(args.connect)] if args.connect
                                                              else [])
    loop_args = parser.parse_args(["--dir", str(run), *game, "--blocks", str(args.blocks),
                                   "--filters", str(args.filters), "--device", device, "--concurrent",
                                   "--gpus", str(args.gpus), "--hours", str(args.train_seconds / 3600),
                                   "--games-per-gen", str(args.train_games), "--steps", str(args.train_steps),
                                   "--eval-games", "0", "--no-plots", "--no-sgf",
                                   "--visits", str(args.visits),
                                   "--games-parallel", str(args.games_parallel), "--leaves", str(args.leaves),
                                   "--in-flight", str(args.in_flight), "--resign-threshold", "-1",
                                   "--seed", "1"])
    loop = ConcurrentAutoTrain(**autotrain.loop_settings(loop_args))
    loop.run(pool=_Kept(pool))
    rows = read_jsonl(loop.run_dir.selfplay_log)[1:]  # the first round starts every worker's games
    evals, seconds = sum(r["evals"] for r in rows), sum(r["seconds"] for r in rows)
    trained = int(loop.run_dir.status().get("nets_trained", 0))
    shares = loop.shares
    print(f"concurrent autotrain, {args.train_seconds:.0f}s: self-play {100 * shares['selfplay_share']:.1f}% "
          f"of the wall time, trainer {100 * shares['train_share']:.1f}%, {trained} nets published, "
          f"self-play {evals / max(seconds, 1e-9):,.0f} evals/s while training", flush=True)
    return {"selfplay_share": shares["selfplay_share"], "train_share": shares["train_share"],
            "concurrent_wall_seconds": shares["wall_seconds"], "nets_published": trained,
            "evals_per_s_while_training": round(evals / seconds) if seconds else 0,
            "train_games_per_round": args.train_games, "train_steps": args.train_steps}


class _Kept:
    """The bench's pool lent to the loop: the loop's ``with`` must not close it."""

    def __init__(self, pool):
        self.pool = pool

    def __enter__(self):
        return self.pool

    def __exit__(self, *exc) -> None:
        pass


if __name__ == "__main__":
    from zero9.util.logs import configure_logging

    configure_logging()  # the library logs its progress lines (no CLI here to set that up)
    sys.exit(main())
