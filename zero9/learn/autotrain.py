"""``zero9 autotrain``: the resumable loop that turns a random net into a strong one.

One **round** (generation ``g``, counted from 0):

1. **self-play**: the best net plays ``--games-per-gen`` games; each finished game is a
   record under ``chunks/gen{g}/`` (:mod:`zero9.learn.selfplay`). Every game ends in its
   round; with ``--straddle`` the workers' games in flight when the round has its games
   go on into the next round with its net (:mod:`zero9.learn.selfplay`'s rounds and
   sessions).
2. **train**: the trainer's latest net learns ``--steps`` steps on the newest window
   (:mod:`zero9.learn.train`); the result is the **candidate**, saved as
   ``nets/<hash>.pt`` (with optimizer state) and, for Go, ``nets/<hash>.txt.gz``.
3. **gate** (``--gate``, off by default like leelaz-ninenine): the candidate plays
   the best net under SPRT (elo0 = 0, elo1 = 35, alpha = beta = 0.05, the Leela Zero
   server's test) for at most ``--gate-games``; it is **promoted** if H1 is accepted
   (or, when the games run out undecided, if it scored at least 55%). Without
   gating every candidate is promoted. The trainer always continues from its own
   latest net (Leela Zero's trainer does too); gating only decides which net plays.
4. **rate** (every ``--rate-every`` rounds): the candidate plays ``--eval-games`` against
   the last rated net and against each **anchor** (``random`` = 0 Elo, the pure-MCTS ladder ``mcts:N``,
   and for Go ``gnugo`` when installed); every game is appended to
   ``ratings/games.jsonl`` and :func:`zero9.arena.elo.bayeselo` refits ``ratings/ratings.json``.

Until ``--generations`` rounds are done, ``--hours`` have passed, or Ctrl-C / SIGTERM,
which stop at the next safe point (:mod:`zero9.util.interrupts`): games in flight (and
games held for the next round) are dropped whole, a training round saves its state
after the current step, and the command exits 0. One process owns a run directory at a
time (:mod:`zero9.util.runlock`): a second ``autotrain`` on the same ``--dir`` exits at
once, naming the first one's PID and host.

**Resuming**: the run directory (``--dir``) holds the config; rerunning the same
command continues. Each step is idempotent against what is on disk: self-play
plays only the games a round still lacks (records are counted, not remembered);
training resumes from ``nets/train_state.pt``; a saved candidate is not retrained
(``status.json`` names it before the gate); rating and gate games are appended
one by one with their round and opponent, and only the missing ones are played.
``status.json`` is rewritten atomically after the files it describes. The game
and net shape are fixed when the run is created (a different ``--game``,
``--size``, ``--blocks`` ... on a rerun is an error); every other option is taken
from the command line of each invocation.

**Ray** (``--ray auto|ADDRESS``, :mod:`zero9.learn.raypool`): self-play and rating games
run on actors across a cluster's nodes; this process still writes every file, so a
run switches between local and Ray mode and resumes either way (``docs/ray.md``). Ray's
actors end every game with its round (no straddling).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import torch

from zero9.arena.elo import bayeselo, sprt
from zero9.arena.gtpclient import find_gnugo
from zero9.arena.match import play_match_segments
from zero9.games import add_game_arguments, game_from_args, make_game
from zero9.learn.rundir import RunDir
from zero9.learn.selfplay import Pool, config_summary, make_pool
from zero9.learn.train import (
    ChunkCache,
    StateHolder,
    add_training_arguments,
    clear_train_state,
    train_generation,
    train_options,
)
from zero9.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from zero9.nn.net import make_net, resolve_device
from zero9.nn.weights import save_lz_weights
from zero9.settings import AutotrainConfig, NetConfig, SelfPlayConfig
from zero9.util.files import append_jsonl, atomic_write_json, read_json, read_jsonl
from zero9.util.interrupts import StopRequested, check_stop, stop_requested, stop_signals
from zero9.util.runlock import RunLock

CONFIG_VERSION = 1
IDENTITY_KEYS = ("game", "net")  # fixed at creation; a rerun that disagrees is an error
GATE_ELO0, GATE_ELO1, GATE_ALPHA, GATE_BETA = 0.0, 35.0, 0.05, 0.05
GATE_FALLBACK_SCORE = 0.55
PLOT_EVERY_S = 60.0  # redraw the plots at most this often (and when the loop stops)


# --------------------------------------------------------------------------------------
# options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", required=True, help="run directory (created, or resumed if it exists)")
    g = parser.add_argument_group("game and net (fixed when the run is created)")
    add_game_arguments(g)
    g.add_argument("--blocks", type=int, default=NetConfig.run_blocks, help="residual blocks")
    g.add_argument("--filters", type=int, default=NetConfig.run_filters, help="filters per conv")
    g.add_argument("--ownership", action=argparse.BooleanOptionalAction, default=None,
                   help="Go: KataGo's ownership head as an auxiliary target (default: on for Go; it won "
                        "33-7 at equal compute, docs/training-the-shipped-nets.md)")
    g.add_argument("--score-head", action="store_true",
                   help="Go with ownership: a score-lead head too, learnt from the ownership target and komi "
                        "(a run keeps it for life; its held-out error is logged beside the ownership sum's)")
    g.add_argument("--init-from", default=None, metavar="NET",
                   help="start from this net's conv tower (heads rebuilt when the board differs)")
    loop = parser.add_argument_group("loop")
    loop.add_argument("--generations", type=int, default=None, help="stop after this many rounds in all")
    loop.add_argument("--hours", type=float, default=None, help="stop after this many hours")
    loop.add_argument("--games-per-gen", type=int, default=AutotrainConfig.games_per_gen,
                      help="self-play games per round")
    loop.add_argument("--device", default="auto", help="auto, cpu or cuda")
    loop.add_argument("--seed", type=int, default=None)
    loop.add_argument("--gate", action="store_true", help="promote only candidates that pass an SPRT match")
    loop.add_argument("--gate-games", type=int, default=AutotrainConfig.gate_games,
                      help="most games of a gating match")
    loop.add_argument("--eval-games", type=int, default=AutotrainConfig.eval_games,
                      help="rating games per opponent per round (0: no rating)")
    loop.add_argument("--rate-every", type=int, default=1, metavar="K",
                      help="rate the candidate of every K-th round only (rating games cost a share of each "
                           "round: on a GPU run, rate less often and with more --eval-games)")
    loop.add_argument("--eval-visits", type=int, default=None,
                      help="net visits in rating/gate games (default --visits)")
    loop.add_argument("--anchors", default=None,
                      help="comma-separated anchors: random, mcts:N (pure MCTS, N playouts), gnugo[:level] "
                           "(default: random,mcts:100 ; Go adds gnugo:1 when installed)")
    loop.add_argument("--no-plots", action="store_true",
                      help="draw no plots (else: after a round, at most once a minute, and at the end)")
    loop.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                      help="self-play and rating games on a Ray cluster (auto: the running one, else a local "
                           "one); --workers is then actors per node (0: one per CPU). See docs/ray.md")
    loop.add_argument("--straddle", action=argparse.BooleanOptionalAction, default=False,
                      help="the workers' games in flight when a round has its games go on into the next "
                           "round with its net, so no round waits for its longest games (default off: a tiny "
                           "run learned less per round with it; see docs/cli-autotrain.md)")
    loop.add_argument("--concurrent", action=argparse.BooleanOptionalAction, default=None,
                      help="train beside self-play: a trainer process follows the window while the games go "
                           "on, and each net plays from the next round on (default: on with 2 or more GPUs; "
                           "--concurrent forces it on one device, a CPU too). See docs/cli-autotrain.md")
    loop.add_argument("--gpus", type=int, default=0, metavar="N",
                      help="CUDA: self-play on the first N GPUs, one inference server each (0: all)")
    loop.add_argument("--train-device", default=None, metavar="DEVICE",
                      help="concurrent mode: the trainer's device (default: the last GPU, or the CPU)")
    loop.add_argument("--threads", type=int, default=0,
                      help="torch CPU threads per process (0: training 1 for small nets, else one per core; "
                           "self-play workers share the cores)")
    tr = parser.add_argument_group("training")
    add_training_arguments(tr, AutotrainConfig.steps, "training steps per round")


def identity_config(args: argparse.Namespace) -> dict[str, Any]:
    """The parts of the config a run keeps for life: the game and the net's shape."""
    if args.ownership and args.game != "go":
        raise ValueError("--ownership is for Go only")
    ownership = args.game == "go" if args.ownership is None else args.ownership
    game = game_from_args(args)
    net = {"blocks": args.blocks, "filters": args.filters, "ownership": ownership}
    if getattr(args, "score_head", False):
        if not ownership:
            raise ValueError("--score-head needs the ownership head (Go; its target is the ownership sum)")
        net["score"] = True  # only when on: runs made before it compare equal
    return {"game": game.to_dict(), "net": net}


def check_config(stored: dict, wanted: dict, root: Path) -> None:
    for key in IDENTITY_KEYS:
        if stored.get(key) != wanted.get(key):
            raise ValueError(f"run directory {root} was created with {key} {json.dumps(stored.get(key))}, "
                             f"but this command asks for {json.dumps(wanted.get(key))}: use another --dir, "
                             f"or repeat the original options")


# --------------------------------------------------------------------------------------
# the loop


class AutoTrain:
    """One invocation of the loop over a run directory (see the module docstring)."""

    pool: Pool  # this host's workers or Ray's actors, the same protocol

    def __init__(self, args: argparse.Namespace, selfplay: SelfPlayConfig):
        if args.rate_every < 1:
            raise ValueError(f"--rate-every must be >= 1, got {args.rate_every}")
        self.args = args
        self.run_dir = RunDir(args.dir)
        self.device = str(resolve_device(args.device))
        if self.run_dir.exists():
            stored = self.run_dir.config()
            if args.ownership is None:  # the default is the run's own: older Go runs have no ownership head
                args.ownership = stored.get("net", {}).get("ownership", False)
            check_config(stored, identity_config(args), self.run_dir.root)
            self.config = stored
        else:
            self.config = dict(identity_config(args), version=CONFIG_VERSION, created=time.time())
        self.game = make_game(**self.config["game"])
        self.selfplay = selfplay
        self.train_opts = train_options(args, args.device)
        self.chunk_cache = ChunkCache()  # the window's chunks stay read from one round to the next
        self.last_plot = -math.inf
        self.started = time.monotonic()
        self.set_threads()
        self.sgf = not args.no_sgf

    def set_threads(self) -> None:
        if self.device != "cpu":
            return
        shape = self.config["net"]
        small = shape["blocks"] * shape["filters"] <= 256  # measured: threads only fight on tiny convs
        threads = self.args.threads or (1 if small else os.cpu_count() or 1)
        torch.set_num_threads(threads)

    # --- setup -------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the run directory (first time) and the generation-0 net; sweep crash leftovers."""
        rd = self.run_dir
        rd.root.mkdir(parents=True, exist_ok=True)
        swept = rd.sweep_temp_files()
        if swept:
            print(f"removed {swept} half-written temporary file(s) left by an interrupted run")
        uncommitted = rd.sweep_uncommitted_records(int(rd.status().get("generation", 0)))
        if uncommitted:
            print(f"removed {uncommitted} SGF/LZ file(s) of games killed before their record was complete")
        config = dict(self.config)
        config["last_command"] = {k: v for k, v in vars(self.args).items() if _jsonable(v)}
        atomic_write_json(rd.config_path, config)
        status = rd.status()
        if not status.get("best"):
            net_hash = self.initial_net()
            status = rd.write_status(generation=0, promoted=0, best=net_hash, trainer=net_hash,
                                     wall_seconds=status.get("wall_seconds", 0.0), global_step=0,
                                     **self.game_counts())
            append_jsonl(rd.events_log, {"event": "created", "net": net_hash, "time": time.time()})
        self.wall_base = float(status.get("wall_seconds", 0.0))

    def initial_net(self) -> str:

        if self.args.seed is not None:
            torch.manual_seed(self.args.seed)
        shape = self.config["net"]
        net = make_net(self.game, shape["blocks"], shape["filters"], ownership=shape["ownership"],
                       score=shape.get("score", False))
        if self.args.init_from:
            transplant_tower(net, self.args.init_from)
        meta = save_checkpoint(self.run_dir.nets_dir / ".initial.pt", net, {"game": self.game.to_dict(),
                                                                           "generation": 0})
        os.replace(self.run_dir.nets_dir / ".initial.pt", self.run_dir.net_path(meta["hash"]))
        self.write_lz_weights(net, meta["hash"])
        print(f"created {self.run_dir.root}: {self.game.to_dict()}, net {shape['blocks']}x{shape['filters']} "
              f"{meta['hash']}")
        return meta["hash"]

    def write_lz_weights(self, net, net_hash: str) -> None:
        write_lz_weights(self.run_dir, self.game, net, net_hash)

    # --- the loop ------------------------------------------------------------------------
    def run(self, pool=None) -> int:
        """Run the loop; ``pool`` (one already started, e.g. by the host bench) instead of a new one."""
        self.prepare()
        with pool or self.make_pool() as self.pool:
            try:
                self.loop()
            finally:
                if not self.args.no_plots and not stop_requested():  # a stop must be quick; a rerun draws
                    self.plot()
        self.save_wall()
        return 0

    def gpus(self) -> list[str]:
        """The devices self-play's inference servers use: ``--gpus`` of the host's GPUs on CUDA."""
        if not self.device.startswith("cuda"):
            return [self.device]
        if self.device != "cuda":  # one named GPU (cuda:1)
            return [self.device]
        count = torch.cuda.device_count()
        wanted = self.args.gpus or count
        if wanted > count:
            raise ValueError(f"--gpus {wanted}, but torch sees {count} GPU(s)")
        return [f"cuda:{k}" for k in range(wanted)]

    def make_pool(self):
        """Ray's actors, or this host's worker processes with an inference server per GPU."""
        if self.args.ray:
            from zero9.learn.raypool import RayPool  # imports ray: only with --ray

            return RayPool(self.args.ray, workers=self.args.workers)
        devices = self.gpus()
        cores = os.cpu_count() or 1
        # Each GPU's server and (concurrent) the trainer take a core of their own
        spare = cores
        if len(devices) > 1 or self.concurrent:
            spare -= (len(devices) + 1 if devices[0].startswith("cuda") else 0) + int(self.concurrent)
        workers = self.args.workers or max(len(devices), spare)
        shared = max(1, cores // workers) if self.device == "cpu" else 1
        threads = self.args.threads or shared
        processes = 0 if workers == 1 else workers
        best = self.run_dir.net_path(self.run_dir.status()["best"])
        return make_pool(best, self.device, processes, threads, self.selfplay, devices=devices)

    @property
    def concurrent(self) -> bool:
        return False  # the alternating loop; zero9.learn.concurrent's loop says True

    def loop(self) -> None:
        rd = self.run_dir
        first = int(rd.status()["generation"])
        while True:
            status = rd.status()
            g = int(status["generation"])
            if self.args.generations is not None and g >= self.args.generations:
                print(f"done: {g} rounds in {rd.root}")
                break
            if self.out_of_time():
                print(f"--hours {self.args.hours} reached after round {g - 1}")
                break
            check_stop()
            print(f"=== round {g}{self.run_progress(g, first)} ===")
            self.round(g)

    def run_progress(self, g: int, first: int) -> str:
        """The whole run's progress at round ``g``: " of N, 37% of the run, about 9 min left", from this
        invocation's mean round (``--generations``) or the clock (``--hours``); "" before it can tell."""
        elapsed = time.monotonic() - self.started
        done = g - first
        fractions, left = [], []
        if self.args.generations is not None and self.args.generations > first:
            fractions.append((g - first) / (self.args.generations - first))
            if done:
                left.append(elapsed / done * (self.args.generations - g))
        if self.args.hours is not None:
            fractions.append(elapsed / (self.args.hours * 3600))
            left.append(self.args.hours * 3600 - elapsed)
        of = f" of {self.args.generations}" if self.args.generations is not None else ""
        if not fractions:
            return of
        share = min(1.0, max(fractions))
        seconds = max(0.0, min(left)) if left else None
        eta = "" if seconds is None else (f", about {seconds:.0f} s left" if seconds < 120
                                          else f", about {seconds / 60:.0f} min left")
        return f"{of}, {100 * share:.0f}% of the run{eta}"

    def out_of_time(self) -> bool:
        return self.args.hours is not None and time.monotonic() - self.started >= self.args.hours * 3600

    def game_counts(self) -> dict[str, Any]:
        """status.json's game counts: all games played, and per generation (kept when chunks are pruned)."""
        ledger = self.run_dir.games_ledger()
        return {"games": sum(ledger.values()), "games_by_generation": {str(g): n for g, n in ledger.items()}}

    def wall_seconds(self) -> float:
        return self.wall_base + time.monotonic() - self.started

    def save_wall(self) -> None:
        self.run_dir.write_status(wall_seconds=self.wall_seconds())

    def round(self, g: int) -> None:
        rd = self.run_dir
        status = rd.status()
        print(f"net generation {g} ({status['best']}) plays; {self.game_counts()['games']} games so far")
        seconds = {}  # where the round's wall time went, for events.jsonl
        clock = time.monotonic()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.monotonic()
            seconds[phase] = round(now - clock, 2)
            clock = now

        self.play_round(g, status["best"])
        lap("selfplay")
        check_stop()
        status = rd.status()
        candidate = status.get("candidate")
        if not candidate or status.get("candidate_generation") != g + 1:
            candidate = self.train_round(g, status)
        lap("train")
        check_stop()  # the candidate is saved and named in status.json: a rerun goes on to gate and rate
        promoted = self.gate(g, candidate, status["best"]) if self.args.gate else True
        lap("gate")
        if (g + 1) % self.args.rate_every == 0:
            self.rate(g + 1, candidate)
        lap("rate")
        status = rd.status()
        new_best = candidate if promoted else status["best"]
        status = rd.write_status(generation=g + 1, best=new_best, trainer=candidate, candidate=None,
                                 candidate_generation=None,
                                 promoted=int(status.get("promoted", 0)) + bool(promoted),
                                 wall_seconds=self.wall_seconds(), **self.game_counts())
        if not self.args.no_plots and time.monotonic() - self.last_plot >= PLOT_EVERY_S:
            self.plot()
        lap("other")
        append_jsonl(rd.events_log, {"event": "promoted" if promoted else "rejected", "generation": g + 1,
                                     "net": candidate, "time": time.time(), "games": status["games"],
                                     "seconds": seconds})

    def play_round(self, g: int, best: str) -> None:
        rd = self.run_dir
        have = rd.count_games(g)
        need = self.args.games_per_gen - have
        if need <= 0:
            return
        if have:
            print(f"round {g} has {have} games on disk; playing the remaining {need}")
        cfg = self.selfplay
        # With straddling only the seed of this invocation's first round is used: it starts the sessions.
        seed = None if self.args.seed is None else self.args.seed * 100_003 + g * 1009 + have
        cfg = type(cfg)(**{**cfg.__dict__, "seed": seed})
        straddle = self.straddles()
        if straddle and self.per_worker_cap():
            # No more games in flight than a round asks for (as a round without straddling starts): a game
            # then spans about one round. With 4 times as many, a tiny run's rounds were all of games
            # begun 1-3 rounds before, and its held-out loss fell by 0.00-0.02 instead of 0.05-0.12.
            per_worker = -(-self.args.games_per_gen // self.pool.size)
            cfg = type(cfg)(**{**cfg.__dict__, "parallel_games": min(cfg.parallel_games, per_worker)})
        options = config_summary(cfg)
        lz_dir = rd.root / "lz_chunks" / f"gen{g:04d}" if self.args.lz_chunks else None
        stats = self.pool.play_round(rd.net_path(best), need, cfg, rd.gen_chunks_dir(g),
                                     rd.gen_sgf_dir(g) if self.sgf else None, device=self.device,
                                     progress=True, options=options, straddle=straddle, lz_dir=lz_dir)
        counts = self.game_counts()
        row = {"generation": g, "net": best, "time": time.time(), "wall_seconds": self.wall_seconds(),
               "total_games": counts["games"], "straddle": straddle}
        row.update(stats.as_dict())
        row.update(self.pool.info())  # Ray: actors now, and actors lost (and replaced) so far
        append_jsonl(rd.selfplay_log, row)
        rd.write_status(wall_seconds=self.wall_seconds(), **counts)
        carried = f" ({stats.carried} begun in an earlier round)" if stats.carried else ""
        print(f"self-play round {g}: {stats.games} games{carried} in {stats.seconds:.0f}s, "
              f"{row['moves_per_s']:.1f} moves/s, "
              f"{row['evals_per_s']:.0f} evals/s, mean length {row['mean_length']:.1f}, results {stats.wins}")

    def per_worker_cap(self) -> bool:
        """Straddling rounds start no more games than a round asks for (the concurrent loop: no cap)."""
        return True

    def straddles(self) -> bool:
        """Whether games go on from one round into the next (with --straddle, and not on Ray, whose
        actors play each round's games as sessions of their own)."""
        return self.args.straddle and not self.args.ray

    def train_round(self, g: int, status: dict) -> str:
        trainer = status.get("trainer") or status["best"]
        net_hash, result = train_candidate(self.run_dir, self.game, self.device, self.train_opts, trainer,
                                           generation=g, global_step=int(status.get("global_step", 0)),
                                           cache=self.chunk_cache)
        self.run_dir.write_status(candidate=net_hash, candidate_generation=g + 1,
                                  global_step=result.global_step)
        clear_train_state(self.run_dir)
        return net_hash

    # --- matches -----------------------------------------------------------------------
    def eval_visits(self) -> int:
        return self.args.eval_visits or self.args.visits

    def gate(self, g: int, candidate: str, best: str) -> bool:
        rd = self.run_dir
        key = f"gate-{g + 1}"
        games = [r for r in read_jsonl(rd.logs_dir / "gate.jsonl") if r.get("key") == key]
        decision = None
        while True:
            w = sum(r["score"] == 1 for r in games)
            losses = sum(r["score"] == 0 for r in games)
            d = len(games) - w - losses
            llr, lower, upper, decision = sprt(w, losses, d, GATE_ELO0, GATE_ELO1, GATE_ALPHA, GATE_BETA)
            if decision is not None or len(games) >= self.args.gate_games:
                break
            batch = min(2, self.args.gate_games - len(games))
            for score in self.play_match(f"net:{candidate}", f"net:{best}", batch, first_index=len(games)):
                row = {"key": key, "score": score, "time": time.time()}
                append_jsonl(rd.logs_dir / "gate.jsonl", row)
                games.append(row)
        score = (w + 0.5 * d) / max(1, len(games))
        promoted = decision == "H1" or (decision is None and score >= GATE_FALLBACK_SCORE)
        print(f"gate: candidate {candidate} vs best {best}: +{w} -{losses} ={d}, llr {llr:.2f} "
              f"[{lower:.2f}, {upper:.2f}] -> {'promoted' if promoted else 'rejected'}")
        return promoted

    def anchors(self) -> list[str]:
        if self.args.anchors is not None:
            return [a.strip() for a in self.args.anchors.split(",") if a.strip()]
        found = ["random", "mcts:100"]
        if self.game.name == "go" and find_gnugo():
            found.append("gnugo:1")
        return found

    def rate(self, generation: int, candidate: str) -> None:
        """Rating games for a new net vs the last rated net and the anchors; refit ratings.json."""
        n = self.args.eval_games
        if n <= 0:
            return
        rd = self.run_dir
        name = f"gen{generation:04d}-{candidate}"
        opponents = list(self.anchors())
        rated = {int(rated_name[3:7]): (net, rated_name) for net, rated_name in self.net_names().items()}
        # The newest rated net before this one whose file is still here (the previous candidate when
        # every round is rated): a run directory carried on without its old nets rates against the
        # anchors and the nets it kept.
        kept = [g for g, (net, _) in rated.items() if g < generation and rd.net_path(net).exists()]
        if kept:
            opponents.insert(0, rated[max(kept)][1])
        existing = read_jsonl(rd.rating_games)
        todo = []  # (opponent, its spec, games still to play, first game index)
        for opp in opponents:
            done = sum(r["a"] == name and r["b"] == opp for r in existing)
            if done < n:
                opp_spec = f"net:{opp.split('-', 1)[1]}" if opp.startswith("gen") else opp
                todo.append((opp, opp_spec, n - done, done))
        # All opponents at once: the games are dealt over the workers instead of one match after another.
        results = self.play_matches([(f"net:{candidate}", spec, k, first) for _, spec, k, first in todo])
        for (opp, *_), scores in zip(todo, results, strict=True):
            for score in scores:
                append_jsonl(rd.rating_games, {"a": name, "b": opp, "score": score, "generation": generation,
                                               "time": time.time()})
        self.fit_ratings()

    def net_names(self) -> dict[str, str]:
        """net hash -> its rating name, from the rating games played so far."""
        names = {}
        for r in read_jsonl(self.run_dir.rating_games):
            for key in ("a", "b"):
                if r[key].startswith("gen"):
                    names[r[key].split("-", 1)[1]] = r[key]
        return names

    def fit_ratings(self) -> None:
        rd = self.run_dir
        rows = read_jsonl(rd.rating_games)
        if not rows:
            return
        games = [(r["a"], r["b"], float(r["score"])) for r in rows]
        anchor = "random" if any("random" in (a, b) for a, b, _ in games) else None
        ratings = bayeselo(games, anchor=anchor) if anchor else bayeselo(games, anchor=games[0][0])
        gens = []
        status = rd.status()
        old = read_json(rd.ratings_path, default={}) or {}
        history = {g["name"]: g for g in old.get("generations", [])}
        for name, (elo, lo, hi) in sorted(ratings.items()):
            if not name.startswith("gen"):
                continue
            gen = int(name[3:7])
            entry = history.get(name, {"name": name, "generation": gen,
                                       "wall_seconds": self.wall_seconds(), "games": status.get("games", 0)})
            entry.update({"elo": _finite(elo), "lo": _finite(lo), "hi": _finite(hi)})
            gens.append(entry)
        anchors = {k: _finite(v[0]) for k, v in ratings.items() if not k.startswith("gen")}
        atomic_write_json(rd.ratings_path, {
            "ratings": {k: [_finite(x) for x in v] for k, v in ratings.items()},
            "anchors": anchors, "generations": sorted(gens, key=lambda e: e["generation"]),
            "games": len(games), "updated": time.time()})
        last = gens[-1] if gens else None
        if last:
            print(f"rating: {last['name']} {last['elo']:.0f} Elo [{last['lo']:.0f}, {last['hi']:.0f}] "
                  f"(random = 0; anchors {', '.join(f'{k} {v:.0f}' for k, v in anchors.items())})")

    def play_match(self, a: str, b: str, games: int, first_index: int = 0) -> list[float]:
        """Scores (1, 0.5, 0) of player ``a`` against ``b``, colours alternating by game index."""
        return self.play_matches([(a, b, games, first_index)])[0]

    def play_matches(self, matches: list[tuple[str, str, int, int]]) -> list[list[float]]:
        """Player A's scores for each match ``(a, b, games, first_index)``, all played at once.

        The games of all matches, in order, are cut into one contiguous block per pool
        worker; a block plays its games as segments (runs of one match's game indices),
        so each worker loads each player once.
        """

        games = [(k, i) for k, (_, _, n, first) in enumerate(matches) for i in range(first, first + n)]
        scores: list[list[float]] = [[] for _ in matches]
        if not games:
            return scores
        blocks = min(self.pool.size, len(games))
        bounds = [len(games) * w // blocks for w in range(blocks + 1)]
        calls, owners = [], []  # owners[c]: the match of each segment of call c
        for w in range(blocks):
            segments: list[dict[str, Any]] = []
            keys: list[int] = []
            for k, i in games[bounds[w]:bounds[w + 1]]:
                last = segments[-1] if segments else None
                if last and keys[-1] == k and last["first_index"] + last["games"] == i:
                    last["games"] += 1
                    continue
                seed = None if self.args.seed is None else self.args.seed * 7919 + i
                a, b = matches[k][0], matches[k][1]
                segments.append({"spec_a": self.player_spec(a), "spec_b": self.player_spec(b), "games": 1,
                                 "first_index": i, "seed": seed, "device": self.device})
                keys.append(k)
            calls.append((play_match_segments, {"game": self.game, "segments": segments}))
            owners.append(keys)
        for keys, parts in zip(owners, self.pool.call_all(calls), strict=True):
            for k, part in zip(keys, parts, strict=True):
                scores[k].extend(part)
        return scores

    def player_spec(self, spec: str) -> dict[str, Any]:
        if spec.startswith("net:"):
            return {"kind": "net", "path": str(self.run_dir.net_path(spec[4:])), "visits": self.eval_visits(),
                    "device": self.device}
        return {"kind": spec}

    def plot(self) -> None:
        self.last_plot = time.monotonic()
        try:
            from zero9.learn.plot import plot_run

            plot_run(self.run_dir)
        except ImportError:
            pass  # matplotlib missing: plots are optional on training machines


def write_lz_weights(run_dir: RunDir, game, net, net_hash: str) -> None:
    """Go: the net as Leela Zero weights beside its checkpoint (without the heads LZ cannot hold)."""
    if game.name != "go":
        return  # Leela Zero's text format is a Go format; Gomoku nets live in .pt only
    save_lz_weights(net, run_dir.lz_weights_path(net_hash), drop_ownership=True)  # atomic itself


def train_candidate(run_dir: RunDir, game, device: str, opts, trainer: str, *, generation: int,
                    global_step: int, cache: ChunkCache | None = None, progress: bool = True):
    """Train net ``trainer`` one round on the run's window (resuming a saved state of this round)
    and save the result as ``nets/<hash>.pt`` (and Go's LZ weights): ``(hash, RoundResult)``.

    The candidate is generation ``generation + 1``. The caller names it in status.json and
    then clears the train state; both loops (alternating and concurrent) train through here.
    """
    ckpt = load_checkpoint(run_dir.net_path(trainer), device)
    if ckpt.optimizer_state is not None and ckpt.meta.get("optimizer") not in (None, opts.optimizer):
        print(f"optimizer changed from {ckpt.meta.get('optimizer')} to {opts.optimizer}: "
              "fresh optimizer state")
        ckpt.optimizer_state = None
    result = train_generation(run_dir, ckpt.net, ckpt.meta, opts, generation=generation,
                              optimizer_state=ckpt.optimizer_state, global_step=global_step, cache=cache,
                              progress=progress)
    meta = save_checkpoint(run_dir.nets_dir / ".candidate.pt", result.net,
                           {"game": game.to_dict(), "generation": generation + 1, "parent": trainer,
                            "step": result.global_step, "optimizer": opts.optimizer,
                            "train": result.last_train, "test": result.last_test},
                           StateHolder(result.optimizer_state))
    # named by the hash only known after saving, so save then rename (still atomic)
    os.replace(run_dir.nets_dir / ".candidate.pt", run_dir.net_path(meta["hash"]))
    write_lz_weights(run_dir, game, result.net, meta["hash"])
    test = result.last_test or {}
    nan = float("nan")
    score = (f", score error {test['score_error']:.2f} points "
             f"(ownership sum {test['ownership_sum_error']:.2f})" if "score_error" in test else "")
    print(f"round {generation} trained net generation {generation + 1}: {meta['hash']}, "
          f"test loss {test.get('total', nan):.4f} "
          f"(policy {test.get('policy_loss', nan):.4f}, value {test.get('value_loss', nan):.4f}){score}")
    return meta["hash"], result


def transplant_tower(net, path: str) -> None:
    """Start ``net`` from the net at ``path``: its input block and residual tower, and its heads too
    when every tensor fits (the same board size: the run continues that net).

    Convolutions do not care about the board size, so a 7x7 tower starts a 9x9 run;
    the heads' fully connected layers do, so on another board they are rebuilt.
    """

    source, _ = load_net(path, device="cpu")
    src, dst = source.config, net.config
    if src["filters"] != dst["filters"] or src["in_planes"] != dst["in_planes"]:
        raise ValueError(f"--init-from {path}: its tower ({src['filters']} filters, {src['in_planes']} input "
                         f"planes) does not fit {dst['filters']} filters, {dst['in_planes']} planes")
    own, theirs = net.state_dict(), source.state_dict()
    # The same board: every tensor both nets have (a head only one has, e.g. a new score head, starts fresh)
    same_board = src["size"] == dst["size"] and src["num_actions"] == dst["num_actions"]
    copied = 0
    for key, value in theirs.items():
        tower = key.startswith(("input_block.", "tower."))
        if (same_board or tower) and key in own and own[key].shape == value.shape:
            own[key] = value
            copied += 1
    net.load_state_dict(own)
    fresh = sorted({k.split(".")[0] for k in own if k not in theirs})
    print(f"--init-from {path}: copied {copied} tensors; "
          + ("the whole net (same board)" if same_board else "the tower; heads start fresh")
          + (f"; new: {', '.join(fresh)}" if fresh else ""))


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else (9999.0 if x > 0 else -9999.0)


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except TypeError:
        return False
    return True


def concurrent_by_default(args: argparse.Namespace) -> bool:
    """``--concurrent`` as asked, else on for a host with two GPUs or more (``--gpus`` of them)."""
    if args.concurrent is not None:
        return args.concurrent
    if args.ray or not torch.cuda.is_available() or str(args.device) not in ("auto", "cuda"):
        return False
    return (args.gpus or torch.cuda.device_count()) >= 2


def run_loop(loop: AutoTrain) -> int:
    """Run ``loop`` (either loop) holding its run directory, a SIGINT/SIGTERM a clean stop; the exit code."""
    with RunLock(loop.run_dir.root), stop_signals():
        try:
            return loop.run()
        except (StopRequested, KeyboardInterrupt) as stop:
            if hasattr(loop, "wall_base"):
                loop.save_wall()
            how = f"{stop}: stopped" if isinstance(stop, StopRequested) else "interrupted"
            print(f"\n{how}; every finished game and training step is saved: rerun the same command to "
                  f"continue {loop.run_dir.root}")
            return 0 if isinstance(stop, StopRequested) else 130
