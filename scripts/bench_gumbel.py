"""Gumbel self-play per core: net evaluations per CPU second of :mod:`zero9.search.gumbel` self-play.

    python scripts/bench_gumbel.py                  # the figure (free net), reference: board play()/s
    python scripts/bench_gumbel.py --net probe      # priors not uniform (the fingerprint test's probe net)
    python scripts/bench_gumbel.py --steps 100 500  # fixed work: evaluator calls 100 to 500 (for A/B)
    python scripts/bench_gumbel.py --puct           # + PUCT's per-core figure (bench_search.py --per-core)
    python scripts/bench_gumbel.py --profile        # + a cProfile of the same self-play (read shares)
    python scripts/bench_gumbel.py --eval-cache 0   # the evaluator without its cache (self-play's option)

The figure: 9x9 Go self-play as the shipped net is trained (Gumbel root search, m = 16,
32 simulations per move, 96 games x 4 leaves per evaluator call, 8 opening moves), through
the real :class:`~zero9.search.evaluator.NetEvaluator` (features, random symmetry, cache)
in front of a net that costs (almost) nothing; evaluations that reach the net are counted
per CPU second of this process (``time.process_time``, steadier than wall time on a shared
machine), from the first step after the warm-up to the deadline.

- ``--net free``: :class:`bench_search.FreeNet`, uniform priors at once. With a free net the
  games run long; that is fine for a per-core figure.
- ``--net probe``: the fingerprint test's probe net (priors that depend on the board), so
  that uniform priors hide no cost of the search; its own arithmetic is counted too.
- ``--steps A B``: count from the evaluator's call ``A`` to call ``B`` instead. Self-play is
  seeded, so every version of the search that plays the same games does the same work in
  that window; a fixed time window would measure a faster search later in its games (longer
  games, a fuller evaluator cache, more garbage to collect), which costs more per evaluation.

Reference measured in the same run: the board's ``play()``/s on a mid-game 9x9 position
(figure 1 of ``bench_search.py``); with ``--puct``, PUCT self-play's per-core figure
(400 visits, 64 games x 8 leaves, root noise).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

import bench_search  # noqa: E402  (scripts/)
from test_search_fingerprint import ProbeNet  # noqa: E402  (tests/)

from zero9.games import make_game  # noqa: E402
from zero9.learn.selfplay.lockstep import play_games  # noqa: E402
from zero9.search.evaluator import NetEvaluator  # noqa: E402
from zero9.settings import SearchConfig, SelfPlayConfig  # noqa: E402


class CountedProbeNet(ProbeNet):
    """The probe net, counting the positions it evaluates (as :class:`bench_search.FreeNet` does)."""

    def __init__(self, num_actions: int):
        super().__init__(num_actions)
        self.evaluations = 0

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.evaluations += len(planes)
        return super().predict(planes)


def gumbel_per_core(net_kind: str, warmup: float, seconds: float, steps: tuple[int, int] | None = None,
                    eval_cache: int = SelfPlayConfig.eval_cache) -> tuple[float, float, float]:
    """Net evaluations per CPU second of Gumbel self-play after ``warmup`` s, over ``seconds`` s of wall
    time (``steps``: from evaluator call ``steps[0]`` to ``steps[1]``); the CPU seconds measured; the
    share of positions asked that the evaluator's cache answered then."""
    game = make_game("go", 9)
    net = (bench_search.FreeNet if net_kind == "free" else CountedProbeNet)(game.num_actions)
    evaluator = NetEvaluator(net, cache_size=eval_cache, rng=np.random.default_rng(0))
    config = SelfPlayConfig(visits=32, parallel_games=96, leaves_per_tree=4, gumbel=True, opening_moves=8,
                            search=SearchConfig(noise=False), seed=1, resign_threshold=None)
    start = time.perf_counter()
    warm_at, deadline = start + warmup, start + warmup + seconds
    measured_from, calls = None, 0
    inner = evaluator.evaluate

    def evaluate_until_deadline(positions):
        # Count from the first step after the warm-up, stop at the deadline (a step boundary).
        nonlocal measured_from, calls
        now, calls = time.perf_counter(), calls + 1
        if measured_from is None and (calls >= steps[0] if steps else now >= warm_at):
            measured_from = (time.process_time(), net.evaluations, evaluator.positions, evaluator.cache_hits)
        if (calls > steps[1]) if steps else now >= deadline:
            raise TimeoutError
        return inner(positions)

    evaluator.evaluate = evaluate_until_deadline
    try:
        for _ in play_games(game, evaluator, 10**9, config):
            pass
    except TimeoutError:
        pass
    cpu = time.process_time() - measured_from[0]
    hits = (evaluator.cache_hits - measured_from[3]) / max(1, evaluator.positions - measured_from[2])
    return (net.evaluations - measured_from[1]) / cpu, cpu, hits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", choices=("free", "probe"), default="free")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of self-play before counting")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds counted")
    parser.add_argument("--steps", type=int, nargs=2, metavar=("A", "B"),
                        help="count evaluator calls A to B instead of a time window")
    parser.add_argument("--eval-cache", type=int, default=SelfPlayConfig.eval_cache, metavar="N",
                        help="entries of the evaluator's cache (0: none)")
    parser.add_argument("--puct", action="store_true", help="+ PUCT's per-core figure as a second reference")
    parser.add_argument("--profile", action="store_true", help="+ cProfile of the Gumbel self-play")
    parser.add_argument("--profile-lines", type=int, default=25)
    args = parser.parse_args(argv)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min) on {os.cpu_count()} cores")
    ref = bench_search.plays_per_second(bench_search.midgame(make_game("go", 9), 30), 50_000)
    print(f"reference: 9x9 go board speed {ref:,.0f} play()/s")
    rate, cpu, hits = gumbel_per_core(args.net, args.warmup, args.seconds, args.steps, args.eval_cache)
    window = (f"evaluator calls {args.steps[0]} to {args.steps[1]}" if args.steps else
              f"after {args.warmup:.0f} s warm-up")
    print(f"gumbel per core: {rate:,.0f} net evaluations per CPU second (9x9 go self-play, m=16, 32 sims, "
          f"96 games x 4 leaves, {args.net} net, {cpu:.1f} CPU s, {window}, cache {args.eval_cache:,} "
          f"entries: {100 * hits:.1f}% hits); "
          f"{ref / rate:.2f} board moves' time per evaluation")
    if args.puct:
        puct = argparse.Namespace(in_flight=1, core_warmup=args.warmup, seconds=args.seconds, steps=None,
                                  core_shape=(64, 8), eval_cache=args.eval_cache)
        _, puct_rate, _, _ = bench_search.per_core_selfplay(puct)
        print(f"reference: PUCT per core {puct_rate:,.0f} net evaluations per CPU second (400 visits, "
              f"64 games x 8 leaves, free net); gumbel/PUCT {rate / puct_rate:.2f}")
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(gumbel_per_core, args.net, args.warmup, args.seconds, args.steps, args.eval_cache)
        print("profile of the Gumbel self-play (profiler inflates times; read shares):")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile_lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
