"""Self-play rounds with games that straddle rounds against rounds that end all their games.

    python3 scripts/bench_straddle.py --mode straddle
    python3 scripts/bench_straddle.py --mode rounds      # autotrain's default (every game ends in its round)
    python3 scripts/bench_straddle.py --mode straddle --device cuda --workers 15 --games-parallel 96 \
        --games 1024 --blocks 10 --filters 64 --leaves 4  # the H100 run of docs/runs/go9-h100-59min

Plays ``--rounds`` rounds of ``--games`` games each on a pool of ``--workers`` processes, as
``zero9 autotrain`` does (without its training: two nets of the same shape take turns,
so every round changes the net, as a promotion does). ``rounds``: each round splits its
games among the workers, who end them all (the round waits for its longest game);
``straddle``: the workers' games go on from one round into the next
(:func:`zero9.learn.selfplay.pool.play_selfplay` with ``straddle=True``). A worker keeps at most
``ceil(--games / --workers)`` games in flight, autotrain's cap. Prints, per round,
seconds, games/s, net evaluations/s, the games begun in an earlier round, and from the
workers' scheduler statistics (Linux ``/proc/PID/schedstat``): ``idle``, their share of
the round's wall time neither on a core nor waiting for one (a worker with no game left,
waiting for the round's end), and net evaluations per CPU second. Other jobs on a shared
machine move both far less than evaluations per wall second. Then the totals of the rounds
after the first (the first round starts every game in both modes, and pays the pool's
start). Alternate the two modes in separate runs to compare them.

A round's games/s, moves/s and mean length count the games it finished: with
straddling, some of their moves were played in the round before (and the first round
finishes the short games first), so over a few rounds net evaluations/s is the fair
measure of work done.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def sched_seconds(pids: list[int]) -> tuple[float, float]:
    """Seconds the processes ``pids`` ran on a CPU, and waited for one while runnable, so far (summed)."""
    ran = waited = 0
    for pid in pids:
        on_cpu, delay, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
        ran, waited = ran + int(on_cpu), waited + int(delay)
    return ran / 1e9, waited / 1e9


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["straddle", "rounds"], required=True)
    p.add_argument("--rounds", type=int, default=8, help="rounds, the first one a warm-up")
    p.add_argument("--games", type=int, default=32, help="games per round")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--games-parallel", type=int, default=16, help="games in flight per worker")
    p.add_argument("--leaves", type=int, default=4)
    p.add_argument("--size", type=int, default=9, help="Go board")
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--filters", type=int, default=16)
    p.add_argument("--visits", type=int, default=32)
    p.add_argument("--puct", action="store_true", help="PUCT with root noise (default: Gumbel)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu, or cuda: one inference server evaluates for every "
                                                   "worker, as in autotrain")
    args = p.parse_args(argv)

    import torch

    from zero9.games import make_game
    from zero9.learn.selfplay.pool import WorkerPool, play_selfplay
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.inference import InferenceServer
    from zero9.nn.net import make_net
    from zero9.settings import SelfPlayConfig

    torch.set_num_threads(1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-straddle-"))
    game = make_game("go", args.size)
    nets = []
    for i in range(2):
        torch.manual_seed(args.seed + i)
        nets.append(tmp / f"net{i}.pt")
        save_checkpoint(nets[-1], make_net(game, args.blocks, args.filters), {"game": game.to_dict()})
    in_flight = min(args.games_parallel, -(-args.games // args.workers))  # autotrain's cap (and the quotas')
    cfg = SelfPlayConfig(visits=args.visits, parallel_games=in_flight, leaves_per_tree=args.leaves,
                         gumbel=not args.puct)
    search = "PUCT" if args.puct else "Gumbel"
    print(f"{args.mode}: {game}, {args.blocks}x{args.filters} net, {search} {args.visits}, {args.workers} "
          f"workers x {in_flight} games in flight, {args.games} games per round, "
          f"{os.cpu_count()} CPUs")
    rows = []
    server = None
    if args.device.startswith("cuda"):
        server = InferenceServer(str(nets[0]), args.device, args.workers, args.games_parallel * args.leaves)
    with WorkerPool(args.workers, 1, inference=server) as pool:
        pids = [p.pid for p in pool.procs]
        for r in range(args.rounds):
            t, (cpu, delay) = time.monotonic(), sched_seconds(pids)
            seeded = dataclasses.replace(cfg, seed=args.seed * 100_003 + r * 1009)  # autotrain's: new games
            stats = play_selfplay(nets[r % 2], args.games, seeded, tmp / f"r{r}", None, pool=pool,
                                  device=args.device, progress=False, straddle=args.mode == "straddle")
            seconds, (cpu_now, delay_now) = time.monotonic() - t, sched_seconds(pids)
            cpu, delay = cpu_now - cpu, delay_now - delay
            idle = seconds * args.workers - cpu - delay  # neither running nor waiting for a core: no work
            rows.append((seconds, stats.games, stats.evals, stats.moves, cpu, idle))
            print(f"round {r}: {seconds:6.1f} s, {stats.games / seconds:5.2f} games/s, "
                  f"{stats.evals / seconds:6.0f} evals/s, {stats.moves / seconds:5.1f} moves/s, "
                  f"mean length {stats.moves / stats.games:5.1f}, {stats.carried:2d} begun earlier; "
                  f"idle {idle / (seconds * args.workers):4.0%}, {stats.evals / cpu:5.0f} evals/CPU-s",
                  flush=True)
    measured = rows[1:]
    seconds, games, evals, moves, cpu, idle = (sum(col) for col in zip(*measured, strict=True))
    print(f"{args.mode} rounds 1-{args.rounds - 1}: {seconds:.1f} s, {games / seconds:.3f} games/s, "
          f"{evals / seconds:.0f} evals/s, {moves / seconds:.1f} moves/s, "
          f"idle {idle / (seconds * args.workers):.1%}, {evals / cpu:.0f} evals/CPU-s; "
          f"median round {statistics.median(r[0] for r in measured):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
