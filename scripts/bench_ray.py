"""Self-play games/s with Ray actors against local worker processes, on one machine.

    python3 scripts/bench_ray.py --workers 16 --games 256 --repeats 3
    python3 scripts/bench_ray.py --workers 16 --game gomoku --size 9 --blocks 6 --filters 64 --visits 100

Both modes play the same games with the same net on the CPU (the GPU is hidden, so
Ray's actors cannot take a share of it): a local :class:`zero9.learn.selfplay.pool.WorkerPool`
of ``--workers`` processes, and a :class:`zero9.learn.cluster.pool.RayPool` of as many
actors on a one-machine Ray instance started here. After one warm-up round each,
the two alternate ``--repeats`` times. Prints games/s per repeat, the means, and
``ray/local`` with the overhead of Ray (1 - ray/local, negative when Ray is faster).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def add_workload_arguments(p: argparse.ArgumentParser, games: int, games_parallel: int) -> None:
    """The measured self-play: rounds of games of a fresh net (also scripts/bench_ray_server.py's)."""
    p.add_argument("--games", type=int, default=games, help="games per measured round")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--game", default="gomoku", choices=["go", "gomoku"])
    p.add_argument("--size", type=int, default=6)
    p.add_argument("--connect", type=int, default=4, help="Gomoku only")
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--filters", type=int, default=16)
    p.add_argument("--visits", type=int, default=16)
    p.add_argument("--games-parallel", type=int, default=games_parallel)
    p.add_argument("--leaves", type=int, default=4)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, default=2, help="local processes = Ray actors")
    add_workload_arguments(p, games=64, games_parallel=32)
    args = p.parse_args(argv)
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch and Ray look for GPUs

    import torch

    from zero9.games import make_game
    from zero9.learn.cluster.pool import RayPool
    from zero9.learn.selfplay.pool import WorkerPool, play_selfplay
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.net import make_net
    from zero9.settings import SelfPlayConfig

    tmp = Path(tempfile.mkdtemp())
    torch.manual_seed(0)
    params = {"connect": args.connect} if args.game == "gomoku" else {}
    game = make_game(args.game, args.size, **params)
    save_checkpoint(tmp / "net.pt", make_net(game, args.blocks, args.filters), {"game": game.to_dict()})
    cfg = SelfPlayConfig(visits=args.visits, parallel_games=args.games_parallel, leaves_per_tree=args.leaves)
    print(f"{game}: {args.blocks}x{args.filters} net, {args.visits} visits, {args.workers} workers, "
          f"{args.games} games per round, {os.cpu_count()} CPUs")

    def play(mode: str, pool, n: int, tag: str):
        out = (tmp / tag / "chunks", tmp / tag / "sgf")
        if mode == "local":
            return play_selfplay(tmp / "net.pt", n, cfg, *out, pool=pool, device="cpu", progress=False)
        return pool.play_round(tmp / "net.pt", n, cfg, *out, progress=False)

    t = time.monotonic()
    with WorkerPool(args.workers, 1) as local, RayPool("auto", workers=args.workers) as ray_pool:
        print(f"pools ready in {time.monotonic() - t:.1f} s")
        pools = {"local": local, "ray": ray_pool}
        for mode, pool in pools.items():
            play(mode, pool, args.workers * 2, f"warm-{mode}")
        rates: dict[str, list[float]] = {mode: [] for mode in pools}
        for rep in range(args.repeats):
            for mode, pool in pools.items():
                t = time.monotonic()
                stats = play(mode, pool, args.games, f"{mode}{rep}")
                rates[mode].append(stats.games / (time.monotonic() - t))
                print(f"{mode} rep {rep}: {rates[mode][-1]:.2f} games/s", flush=True)
    local_rate, ray_rate = (sum(r) / len(r) for r in rates.values())
    ratio = ray_rate / local_rate
    print(f"mean: local {local_rate:.2f} games/s, ray {ray_rate:.2f} games/s")
    print(f"ray/local = {ratio:.3f} (Ray overhead {100 * (1 - ratio):+.1f}%)")
    return 0


if __name__ == "__main__":
    from zero9.util.logs import configure_logging

    configure_logging()  # the library logs its progress lines (no CLI here to set that up)
    raise SystemExit(main())
