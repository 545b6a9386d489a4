"""Search benchmark: tree speed with a free evaluator, and the net's share of self-play wall time.

    python scripts/bench_search.py                 # both figures (about a minute on 2 cores)
    python scripts/bench_search.py --play-mode     # + single tree vs root parallel at equal time
    python scripts/bench_search.py --tune --match-games 60   # + c_puct / FPU grid (zero9.search.puct's table)
    python scripts/bench_search.py --skip-net --profile      # + cProfile of the 9x9 K=8 tree search
    python scripts/bench_search.py --per-core [--profile] [--in-flight 2]   # only figure 3 (+ its cProfile)
    python scripts/bench_search.py --per-core --steps 300 600 --eval-cache 0 --core-shape 32x16   # variants

1. ``9x9 go: N sims/s``: simulations per second of :mod:`zero9.search.puct` with the
   :class:`~zero9.search.evaluator.UniformEvaluator` on one core (mid-game 9x9 Go, 8x8
   Gomoku), with the cyclic garbage collector on, frozen (``gc.freeze()``) and off.
   Reference measured in the same run: ``position.play()`` calls per second on the
   same position (the board's own speed); the ratio says how many board moves one
   simulation costs.
2. ``X% of wall time inside the net``: self-play with a 10x64 net (random weights)
   on this machine's CPU, G games x K leaves per call, through
   :func:`zero9.learn.selfplay.lockstep.play_games`.
3. ``per core: N net evaluations/s`` (``--per-core``): what one CPU core of GPU self-play can
   ask of a net (issue 25): 9x9 Go self-play, 64 games x 8 leaves, 400 visits, root noise,
   through the real :class:`~zero9.search.evaluator.NetEvaluator` (features, random
   symmetry, cache) in front of a **free net** that answers uniform priors at once; counted
   after a warm-up, cache hits excluded. Reference in the same run: the board's
   ``play()``/s of figure 1; the ratio says how many board moves' time one evaluation costs.
   ``--in-flight 2``: the same through the two-halves driver that workers of the inference
   server run (:func:`zero9.search.batched.search_in_flight`), the free net answering at
   ``collect``: what splitting each step's batch in two costs a core. ``--steps A B``: count
   evaluator calls A to B instead of a time window (seeded self-play: every version of the
   search that plays the same games does the same work there, so A/B runs compare like with
   like). ``--eval-cache N``: the evaluator's cache, as self-play's ``--eval-cache`` (default
   :class:`~zero9.settings.SelfPlayConfig`'s); ``--core-shape GxK``: games x leaves per worker;
   ``--gumbel``: the Go recipe's search instead (Gumbel, 32 visits; with ``--core-shape 96x4
   --in-flight 2``, the recipe's worker).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import sys
import time

import numpy as np

from zero9.games import make_game
from zero9.learn.selfplay.lockstep import play_games, warm_up_native
from zero9.search import puct as search
from zero9.search.evaluator import NetEvaluator, UniformEvaluator
from zero9.search.puct import Tree, run_simulations
from zero9.settings import PlayConfig, SearchConfig, SelfPlayConfig

PAUSED = search.gc_paused
BAR_SIMS = 20_000
BAR_NET_SHARE = 75.0


def midgame(game, moves: int, seed: int = 1):
    """A position after ``moves`` random moves (Go: no eye filling, no pass)."""
    rng = random.Random(seed)
    pos = game.new_position()
    for _ in range(moves):
        legal = [
            a
            for a in pos.legal_moves()
            if a != game.pass_action and not (hasattr(pos, "is_eye") and pos.is_eye(a, pos.to_play))
        ]
        pos = pos.play(rng.choice(legal))
    return pos


def sims_per_second(position, playouts: int, repeats: int, batch_size: int, gc_mode: str) -> float:
    evaluator = UniformEvaluator(position.game)
    config = SearchConfig(virtual_loss=1.0 if batch_size > 1 else 0.0)
    gc.collect()
    # zero9.search.puct pauses the collector itself ("off"); for "on" and "freeze" we switch that off.
    if gc_mode != "off":
        search.gc_paused = contextlib.nullcontext
    if gc_mode == "freeze":
        gc.freeze()
    try:
        start = time.perf_counter()
        done = 0
        for r in range(repeats):
            tree = Tree(position, config, np.random.default_rng(r))
            done += run_simulations(tree, evaluator, playouts, batch_size=batch_size)
            del tree
        return done / (time.perf_counter() - start)
    finally:
        search.gc_paused = PAUSED
        gc.enable()
        gc.unfreeze()


def plays_per_second(position, n: int = 20_000) -> float:
    moves = position.legal_moves()[:20]
    start = time.perf_counter()
    for i in range(n):
        position.play(moves[i % len(moves)])
    return n / (time.perf_counter() - start)


def bench_tree(args) -> None:
    # The figure swings by +-20% between back-to-back runs on a shared 2-core machine, so every
    # setting is measured in several interleaved rounds and its median is reported.
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min) on {os.cpu_count()} cores")
    settings = [(k, mode) for k in (1, 8) for mode in ("on", "freeze", "off")]
    for label, game, moves in (
        ("9x9 go", make_game("go", 9), 30),
        ("8x8 gomoku", make_game("gomoku", 8), 12),
    ):
        pos = midgame(game, moves)
        refs, rates = [], {s: [] for s in settings}
        for _ in range(args.rounds):
            refs.append(plays_per_second(pos))
            for k, mode in settings:
                rates[k, mode].append(sims_per_second(pos, args.playouts, args.repeats, k, mode))
        ref = float(np.median(refs))
        print(
            f"{label}: reference board speed {ref:,.0f} play()/s ({1e6 / ref:.1f} us per move), "
            f"median of {args.rounds}"
        )
        best = 0.0
        for (k, mode), values in rates.items():
            rate = float(np.median(values))
            best = max(best, rate)
            print(
                f"  K={k} gc {mode:<6}: {rate:,.0f} sims/s median "
                f"(range {min(values):,.0f}-{max(values):,.0f}; "
                f"{ref / rate:.1f} board moves' time per sim)"
            )
        print(f"{label}: {best:,.0f} sims/s  (bar {BAR_SIMS:,}: {'met' if best >= BAR_SIMS else 'NOT met'})")


def fast_vs_readable(args) -> None:
    """The fast path against the readable search: simulations per CPU second, free evaluator, 9x9 Go
    mid-game, K = 8 leaves per call. The readable :mod:`zero9.search.mcts` searches one tree at a time;
    the native fast path is measured as self-play runs it, ``--forest`` trees of the position stepped
    together (and alone, one tree, beside it); :mod:`zero9.search.puct`, the Python fast twin, too."""
    from zero9.search import mcts, native

    warm_up_native()
    game = make_game("go", 9)
    pos = midgame(game, 30)
    evaluator = UniformEvaluator(game)
    config = SearchConfig()
    playouts = args.playouts

    def readable() -> int:
        tree = mcts.Tree(pos, config, np.random.default_rng(0))
        return mcts.search(tree, evaluator, playouts=playouts, leaves_per_call=8)

    def python_twin() -> int:
        return run_simulations(Tree(pos, config, np.random.default_rng(0)), evaluator, playouts, batch_size=8)

    def forest(trees: int):
        slots = native.Forest(game, config, trees)  # kept from search to search, as self-play keeps it

        def run() -> int:
            planted = [slots.plant(g, pos, config, np.random.default_rng(g)) for g in range(trees)]
            for tree in planted:
                tree.begin_search(playouts=playouts)
            with native.gc_paused():
                while (batch := slots.select(range(trees), 8)) is not None:
                    native.evaluate(evaluator, batch)
            return sum(tree.playouts for tree in planted)
        return run

    def rate(search) -> float:
        search()  # the first search grows the forest's arrays to what the trees need
        best = []
        for _ in range(args.rounds):
            start, done = time.process_time(), 0
            while time.process_time() - start < 1.0:
                done += search()
            best.append(done / (time.process_time() - start))
        return float(np.median(best))

    readable_rate = rate(readable)
    rates = {"python fast twin (puct.py), one tree": rate(python_twin),
             "native fast path, one tree": rate(forest(1)),
             f"native fast path, {args.forest} trees stepped together": rate(forest(args.forest))}
    print(f"9x9 go mid-game, {playouts} simulations a search, K=8, free evaluator, simulations per CPU "
          f"second (median of {args.rounds}): readable mcts {readable_rate:,.0f}")
    for label, value in rates.items():
        print(f"  {label}: {value:,.0f} ({value / readable_rate:.1f}x)")
    best = rates[f"native fast path, {args.forest} trees stepped together"]
    print(f"fast path vs readable mcts: {best / readable_rate:.1f}x")


def profile_tree(args) -> None:
    """cProfile of the mid-game 9x9 tree search (K=8, gc off): where a simulation's time goes."""
    import cProfile
    import pstats

    pos = midgame(make_game("go", 9), 30)
    profiler = cProfile.Profile()
    profiler.runcall(sims_per_second, pos, args.playouts, args.repeats, 8, "off")
    print(f"profile: 9x9 go, K=8, {args.repeats} x {args.playouts} simulations (profiler inflates times)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile_lines)


def bench_net_share(args) -> None:
    import torch

    from zero9.nn.net import ZeroNet

    torch.manual_seed(0)
    game = make_game("go", 9)
    net = ZeroNet(18, 9, 82, 10, 64)
    evaluator = NetEvaluator(net, cache_size=args.eval_cache, rng=np.random.default_rng(0))
    config = SelfPlayConfig(
        visits=args.selfplay_visits,
        parallel_games=args.games,
        leaves_per_tree=args.leaves,
        seed=0,
        resign_threshold=None,
    )
    planes = np.zeros((args.games * args.leaves, 18, 9, 9), np.float32)
    net.predict(planes)  # warm-up
    t = time.perf_counter()
    net.predict(planes)
    ref = time.perf_counter() - t
    print(
        f"reference: one net call on {len(planes)} positions: {1000 * ref:.0f} ms "
        f"({len(planes) / ref:,.0f} positions/s, torch threads {torch.get_num_threads()})"
    )
    gc.freeze()
    start = time.perf_counter()
    moves = 0
    games = play_games(game, evaluator, args.games, config)
    deadline = start + args.seconds
    step = "submit" if args.in_flight == 2 else "evaluate"  # the evaluator call that starts each step
    inner = getattr(evaluator, step)

    def evaluate_until_deadline(positions):
        # Stop after the time budget at a step boundary: the share is over whole steps, not whole games.
        if time.perf_counter() > deadline:
            raise TimeoutError
        return inner(positions)

    setattr(evaluator, step, evaluate_until_deadline)
    try:
        for record in games:
            moves += len(record.moves)
    except TimeoutError:
        pass
    wall = time.perf_counter() - start
    gc.unfreeze()
    share = 100 * evaluator.net_seconds / wall
    print(
        f"self-play G={args.games} x K={args.leaves}, {args.selfplay_visits} visits: "
        f"{evaluator.calls} net calls, "
        f"{evaluator.positions:,} leaves ({evaluator.cache_hits:,} cache hits) in {wall:.1f} s"
    )
    print(
        f"{share:.1f}% of wall time inside the net  (bar {BAR_NET_SHARE:.0f}%: "
        f"{'met' if share >= BAR_NET_SHARE else 'NOT met'})"
    )


class FreeNet:
    """``predict`` of a net that costs nothing: uniform priors, value 0, new arrays each call (like a net)."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions
        self.evaluations = 0

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.evaluations += len(planes)
        return (np.full((len(planes), self.num_actions), 1.0 / self.num_actions, np.float32),
                np.zeros(len(planes), np.float32))


class LaterFreeNet(FreeNet):
    """The free net with the inference server's API (:class:`zero9.nn.inference.RemoteNet`): ``submit``
    keeps a batch of 0/1 bytes and their symmetries (the server turns the planes on the GPU),
    ``collect`` answers."""

    takes_bytes = takes_symmetries = True

    def submit(self, planes: np.ndarray, syms: np.ndarray | None = None) -> np.ndarray:
        return planes

    def collect(self, ticket: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.predict(ticket)


def per_core_selfplay(args) -> tuple[float, float, float, float]:
    """Figure 3: net evaluations per second and per CPU second of this process after the warm-up (or
    from evaluator call ``args.steps[0]`` to ``args.steps[1]``), the seconds measured (self-play on
    this core; on a shared machine the CPU-second figure is the steadier one), and the share of the
    positions asked that the evaluator's cache answered then."""
    warm_up_native()  # numba compiles (or loads its cache) before the clock starts
    game = make_game("go", 9)
    net = (LaterFreeNet if args.in_flight == 2 else FreeNet)(game.num_actions)
    evaluator = NetEvaluator(net, cache_size=args.eval_cache, rng=np.random.default_rng(0))
    games, leaves = args.core_shape
    config = SelfPlayConfig(visits=32 if args.gumbel else 400, parallel_games=games, leaves_per_tree=leaves,
                            search=SearchConfig(noise=not args.gumbel), seed=1, resign_threshold=None,
                            in_flight=args.in_flight, gumbel=args.gumbel)
    steps = args.steps
    start = time.perf_counter()
    warm_at, measured_from, deadline = start + args.core_warmup, None, start + args.core_warmup + args.seconds
    calls = 0
    step = "submit" if args.in_flight == 2 else "evaluate"  # the evaluator call that starts each step

    def count_step():
        # Self-play's step boundaries: count from the first step after the warm-up, stop at the deadline.
        nonlocal measured_from, calls
        now, calls = time.perf_counter(), calls + 1
        if measured_from is None and (calls >= steps[0] if steps else now >= warm_at):
            measured_from = (now, time.process_time(), net.evaluations, evaluator.positions,
                             evaluator.cache_hits)
        if (calls > steps[1]) if steps else now >= deadline:
            raise TimeoutError

    # positions (the Python search) or encoded leaves (the native fast path): the same step either way
    for name in (step, f"{step}_encoded"):
        inner = getattr(evaluator, name)
        setattr(evaluator, name, lambda x, _inner=inner, **kw: (count_step(), _inner(x, **kw))[1])
    try:
        for _ in play_games(game, evaluator, 10**9, config):
            pass
    except TimeoutError:
        pass
    seconds, cpu = time.perf_counter() - measured_from[0], time.process_time() - measured_from[1]
    evaluations = net.evaluations - measured_from[2]
    hits = (evaluator.cache_hits - measured_from[4]) / max(1, evaluator.positions - measured_from[3])
    return evaluations / seconds, evaluations / cpu, seconds, hits


def bench_per_core(args) -> None:
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min) on {os.cpu_count()} cores")
    ref = plays_per_second(midgame(make_game("go", 9), 30), 50_000)
    rate, cpu_rate, seconds, hits = per_core_selfplay(args)
    games, leaves = args.core_shape
    window = (f"evaluator calls {args.steps[0]} to {args.steps[1]}" if args.steps else
              f"{seconds:.0f} s after {args.core_warmup:.0f} s warm-up")
    print(f"reference: 9x9 go board speed {ref:,.0f} play()/s")
    print(f"per core: {rate:,.0f} net evaluations/s, {cpu_rate:,.0f} per CPU second (9x9 go self-play, "
          f"{games} games x {leaves} leaves, {'Gumbel 32' if args.gumbel else 'PUCT 400'} visits, "
          f"{args.in_flight} batch(es) in flight, "
          f"free net behind NetEvaluator, {window}; cache {args.eval_cache:,} entries: "
          f"{100 * hits:.1f}% hits); "
          f"{ref / rate:.2f} board moves' time per evaluation")
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(per_core_selfplay, args)
        print("profile of the per-core self-play (profiler inflates times; read shares):")
        pstats.Stats(profiler).sort_stats(args.profile_sort).print_stats(args.profile_lines)


def match(make_a, make_b, game, n_games: int) -> tuple[float, int]:
    """Score of A against B over ``n_games`` (colours alternate)."""
    score = 0.0
    for g in range(n_games):
        a, b = make_a(g), make_b(g)
        players = {1: a, 2: b} if g % 2 == 0 else {1: b, 2: a}
        pos = game.new_position()
        while not pos.is_terminal():
            pos = pos.play(players[pos.to_play].genmove(pos))
        a_colour = 1 if g % 2 == 0 else 2
        score += 1.0 if pos.winner() == a_colour else 0.5 if pos.winner() == 0 else 0.0
    return score, n_games


def bench_play_mode(args) -> None:
    """Single tree (K=8) vs root parallel (4 trees x K=2) at equal time per move, rollout evaluator."""
    from zero9.search.mcts_pure import rollout_player

    game = make_game("gomoku", 7, connect=4)
    t = args.move_time

    def single(g):
        return rollout_player(game, playouts=10**9, seed=g, time_per_move=t, batch_size=8)

    def parallel(g):
        return rollout_player(
            game, playouts=10**9, seed=1000 + g, time_per_move=t, batch_size=2, root_parallel=4
        )

    score, n = match(single, parallel, game, args.match_games)
    print(
        f"play mode, gomoku 7x7 connect 4, {t} s/move: single tree K=8 scores {score}/{n} "
        f"against root-parallel 4 trees x K=2"
    )


class HeuristicPrior:
    """Tuning evaluator: one random rollout for the value, a prior that favours points next to stones.

    A uniform prior makes first-play reduction meaningless; this one is crude but informative.
    """

    def __init__(self, game, seed: int):
        from zero9.search.mcts_pure import RolloutEvaluator

        self.rollouts = RolloutEvaluator(game, seed=seed)
        self.n = game.size

    def evaluate(self, positions):
        _, values = self.rollouts.evaluate(positions)
        n, priors = self.n, []
        for p in positions:
            stones = p.board_array().reshape(n, n) != 0
            pad = np.pad(stones, 1)
            shifts = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
            near = sum(pad[1 + dy : 1 + dy + n, 1 + dx : 1 + dx + n] for dy, dx in shifts)
            w = (1.0 + 8.0 * near).ravel() * (~stones.ravel())
            priors.append(w / w.sum())
        return np.array(priors, np.float32), values


def tune_pair(job) -> str:
    (c, f), (rc, rf), games, visits = job
    from zero9.search.player import SearchPlayer

    game = make_game("gomoku", 7, connect=4)

    def make(cp, fpu, offset):
        return lambda g: SearchPlayer(
            game,
            HeuristicPrior(game, offset + g),
            PlayConfig(visits=visits, resign_threshold=None, batch_size=1),
            SearchConfig(c_puct=cp, fpu_reduction=fpu),
            seed=offset + g,
        )

    score, n = match(make(c, f, 0), make(rc, rf, 1000), game, games)
    return f"tune: c_puct={c} fpu={f} scores {score}/{n} against c_puct={rc} fpu={rf} ({visits} visits)"


def bench_tune(args) -> None:
    """c_puct x fpu_reduction grid at equal visits against a reference setting, small Gomoku."""
    from multiprocessing import Pool

    grid = [(c, f) for c in args.tune_c for f in args.tune_fpu]
    jobs = [(setting, tuple(args.tune_reference), args.match_games, args.tune_visits) for setting in grid]
    with Pool(args.jobs) as pool:
        for line in pool.imap(tune_pair, jobs):
            print(line, flush=True)


def shape(text: str) -> tuple[int, int]:
    """``GxK`` (games x leaves) as two ints."""
    games, leaves = text.lower().split("x")
    return int(games), int(leaves)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--playouts", type=int, default=1600, help="simulations per search (tree speed)")
    parser.add_argument("--repeats", type=int, default=4, help="searches per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurements per setting (median)")
    parser.add_argument("--games", type=int, default=32, help="G for the net-share measurement")
    parser.add_argument("--leaves", type=int, default=8, help="K for the net-share measurement")
    parser.add_argument("--selfplay-visits", type=int, default=32)
    parser.add_argument(
        "--seconds",
        type=float,
        default=20.0,
        help="self-play time for the net share (stops at the first game done after it)",
    )
    parser.add_argument("--skip-net", action="store_true")
    parser.add_argument("--fast-only", action="store_true",
                        help="only the fast path against the readable search (its first lines)")
    parser.add_argument("--forest", type=int, default=64,
                        help="trees the native fast path steps together in that comparison (self-play's)")
    parser.add_argument("--per-core", action="store_true",
                        help="only figure 3: self-play net evaluations/s of one core with a free net")
    parser.add_argument("--in-flight", type=int, default=1, choices=(1, 2),
                        help="--per-core: 2 runs the two-halves driver of the inference server's workers "
                             "(its CPU cost: half the batch per call)")
    parser.add_argument("--gumbel", action="store_true",
                        help="--per-core: the Go recipe's search (Gumbel, 32 visits) instead of PUCT 400")
    parser.add_argument("--core-warmup", type=float, default=20.0, help="--per-core: seconds before counting")
    parser.add_argument("--steps", type=int, nargs=2, metavar=("A", "B"),
                        help="--per-core: count evaluator calls A to B instead of a time window")
    parser.add_argument("--core-shape", type=shape, default=(64, 8), metavar="GxK",
                        help="--per-core: games x leaves per worker (default 64x8)")
    parser.add_argument("--eval-cache", type=int, default=SelfPlayConfig.eval_cache, metavar="N",
                        help="entries of the evaluator's cache (--per-core and the net share; 0: none)")
    parser.add_argument("--profile-sort", default="tottime", help="pstats sort key of --profile")
    parser.add_argument("--profile", action="store_true", help="cProfile the 9x9 tree search")
    parser.add_argument("--profile-lines", type=int, default=20, help="functions listed by --profile")
    parser.add_argument("--play-mode", action="store_true")
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--move-time", type=float, default=0.3)
    parser.add_argument("--match-games", type=int, default=10)
    parser.add_argument("--tune-visits", type=int, default=300)
    parser.add_argument("--tune-c", type=float, nargs="+", default=[0.8, 1.5, 2.5, 4.0])
    parser.add_argument("--tune-fpu", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0])
    parser.add_argument("--tune-reference", type=float, nargs=2, default=[1.5, 0.5], metavar=("C", "FPU"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes for --tune")
    args = parser.parse_args(argv)
    if args.per_core:
        bench_per_core(args)
        return 0
    fast_vs_readable(args)
    if args.fast_only:
        return 0
    bench_tree(args)
    if args.profile:
        profile_tree(args)
    if not args.skip_net:
        bench_net_share(args)
    if args.play_mode:
        bench_play_mode(args)
    if args.tune:
        bench_tune(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
