"""``zero9 autotrain``: the resumable loop that turns a random net into a strong one.

One **round** (generation ``g``, counted from 0):

1. **self-play**: the best net plays ``--games-per-gen`` games; each finished game is a
   record under ``chunks/gen{g}/`` (:mod:`zero9.learn.selfplay.pool`). Every game ends in its
   round; with ``--straddle`` the workers' games in flight when the round has its games
   go on into the next round with its net (:mod:`zero9.learn.selfplay.pool`'s rounds and
   sessions).
2. **train**: the trainer's latest net learns ``--steps`` steps on the newest window
   (:mod:`zero9.learn.training.train`); the result is the **candidate**, saved as
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

Where each part lives: the round loop is this module; the matches, gating and ratings are
:mod:`zero9.learn.loop.rating`; the run's nets (the first one, each candidate, Go's Leela Zero
weights) are :mod:`zero9.learn.loop.nets`; training beside self-play is
:mod:`zero9.learn.loop.concurrent`; the command line is :mod:`zero9.cli.autotrain`, which fills
the settings this loop takes (:class:`zero9.settings.AutotrainConfig`, :class:`NetShape`,
:class:`zero9.settings.SelfPlayConfig`, :class:`zero9.settings.TrainOptions`).

Until ``--generations`` rounds are done, ``--hours`` would pass in the next round (as long as the
last round of its kind took), or Ctrl-C / SIGTERM,
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

**Ray** (``--ray auto|ADDRESS``, :mod:`zero9.learn.cluster.pool`): self-play and rating games
run on actors across a cluster's nodes; this process still writes every file, so a
run switches between local and Ray mode and resumes either way (``docs/ray.md``). Ray's
actors end every game with its round (no straddling).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from pathlib import Path
from typing import Any

import torch

from zero9.games import Game
from zero9.learn.loop.nets import (
    NetShape,
    check_config,
    identity_config,
    initial_net,
    train_candidate,
)
from zero9.learn.loop.rating import RunMatches, default_anchors, gate, rate
from zero9.learn.rundir import RunDir
from zero9.learn.selfplay.pool import Pool, config_summary, make_pool
from zero9.learn.training.train import clear_train_state
from zero9.learn.training.window import ChunkCache
from zero9.nn.checkpoint import check_net_file
from zero9.nn.net import resolve_device
from zero9.search import fastpath
from zero9.settings import AutotrainConfig, SelfPlayConfig, TrainOptions
from zero9.util.files import append_jsonl, atomic_write_json
from zero9.util.interrupts import StopRequested, check_stop, stop_requested, stop_signals
from zero9.util.runlock import RunLock

log = logging.getLogger(__name__)

CONFIG_VERSION = 1
PLOT_EVERY_S = 60.0  # redraw the plots at most this often (and when the loop stops)


class AutoTrain:
    """One invocation of the loop over a run directory (see the module docstring)."""

    pool: Pool  # this host's workers or Ray's actors, the same protocol
    matches: RunMatches  # gate and rating games, played on the pool

    def __init__(self, run_dir: str | Path, game: Game, net: NetShape, config: AutotrainConfig,
                 selfplay: SelfPlayConfig, train: TrainOptions, command: dict[str, Any] | None = None):
        """The loop over ``run_dir`` (created with ``game`` and ``net``, or resumed: then they must be the
        run's own); ``command``: the options as given, recorded in config.json as ``last_command``."""
        if config.rate_every < 1:
            raise ValueError(f"--rate-every must be >= 1, got {config.rate_every}")
        self.settings, self.selfplay, self.train_opts = config, selfplay, train
        self.net_shape, self.command = net, dict(command or {})
        self.run_dir = RunDir(run_dir)
        self.device = str(resolve_device(config.device))
        if self.run_dir.exists():
            stored = self.run_dir.config()
            if net.ownership is None:  # the default is the run's own: older Go runs have no ownership head
                net = dataclasses.replace(net, ownership=stored.get("net", {}).get("ownership", False))
            check_config(stored, identity_config(game, net), self.run_dir.root)
            self.config = stored
        else:
            self.config = dict(identity_config(game, net), version=CONFIG_VERSION, created=time.time())
        self.game = game
        self.chunk_cache = ChunkCache()  # the window's chunks stay read from one round to the next
        self.last_plot = -math.inf
        self.started = time.monotonic()
        self.round_seconds: dict[bool, float] = {}  # the last round's seconds, rated (True) or not
        threads = self.torch_threads()
        if threads:
            torch.set_num_threads(threads)

    def torch_threads(self) -> int | None:
        """CPU: torch threads for this process (``--threads``, else 1 for tiny nets, else every core)."""
        if self.device != "cpu":
            return None
        shape = self.config["net"]
        small = shape["blocks"] * shape["filters"] <= 256  # measured: threads only fight on tiny convs
        return self.settings.threads or (1 if small else os.cpu_count() or 1)

    # --- setup -------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the run directory (first time) and the generation-0 net; sweep crash leftovers."""
        rd = self.run_dir
        rd.root.mkdir(parents=True, exist_ok=True)
        swept = rd.sweep_temp_files()
        if swept:
            log.info("removed %s half-written temporary file(s) left by an interrupted run", swept)
        uncommitted = rd.sweep_uncommitted_records(int(rd.status().get("generation", 0)))
        if uncommitted:
            log.info("removed %s SGF/LZ file(s) of games killed before their record was complete",
                     uncommitted)
        self.check_nets(rd.status())
        config = dict(self.config)
        config["last_command"] = {k: v for k, v in self.command.items() if _jsonable(v) and k != "recipe"}
        if self.command.get("recipe"):  # the machine's recipe and where each option came from
            config["defaults"] = self.command["recipe"]
        atomic_write_json(rd.config_path, config)
        status = rd.status()
        if not status.get("best"):
            net_hash = initial_net(rd, self.game, self.config["net"], seed=self.settings.seed,
                                   init_from=self.net_shape.init_from)
            status = rd.write_status(generation=0, promoted=0, best=net_hash, trainer=net_hash,
                                     wall_seconds=status.get("wall_seconds", 0.0), global_step=0,
                                     **self.game_counts())
            append_jsonl(rd.events_log, {"event": "created", "net": net_hash, "time": time.time()})
        self.wall_base = float(status.get("wall_seconds", 0.0))

    def check_nets(self, status: dict) -> None:
        """Each net ``status`` names (best, trainer, candidate) is on disk: a ValueError naming the first
        that is not, before any worker would fail on it with a traceback."""
        for role in ("best", "trainer", "candidate"):
            if not status.get(role):
                continue
            path = self.run_dir.net_path(status[role])
            try:
                check_net_file(path)
            except FileNotFoundError:
                raise ValueError(f"the run's {role} net {status[role]} is missing: {path} (deleted?); put it "
                                 f"back, or start a new run in another --dir") from None

    # --- the loop ------------------------------------------------------------------------
    def run(self, pool=None) -> int:
        """Run the loop; ``pool`` (one already started, e.g. by the host bench) instead of a new one."""
        self.prepare()
        log.info("%s", fastpath.describe(self.game, self.selfplay))  # which search self-play runs, and why
        with pool or self.make_pool() as self.pool:
            self.matches = RunMatches(self.run_dir, self.game, self.pool, self.device,
                                      self.settings.eval_visits or self.selfplay.visits, self.settings.seed)
            try:
                self.loop()
            finally:
                if self.settings.plots and not stop_requested():  # a stop must be quick; a rerun draws
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
        wanted = self.settings.gpus or count
        if wanted > count:
            raise ValueError(f"--gpus {wanted}, but torch sees {count} GPU(s)")
        return [f"cuda:{k}" for k in range(wanted)]

    def make_pool(self):
        """Ray's actors, or this host's worker processes with an inference server per GPU."""
        if self.settings.ray:
            from zero9.learn.cluster.pool import RayPool  # imports ray: only with --ray

            return RayPool(self.settings.ray, workers=self.settings.workers, server=self.settings.ray_server)
        devices = self.gpus()
        cores = os.cpu_count() or 1
        # Each GPU's server and (concurrent) the trainer take a core of their own
        spare = cores
        if len(devices) > 1 or self.concurrent:
            spare -= (len(devices) + 1 if devices[0].startswith("cuda") else 0) + int(self.concurrent)
        workers = self.settings.workers or max(len(devices), spare)
        shared = max(1, cores // workers) if self.device == "cpu" else 1
        threads = self.settings.threads or shared
        processes = 0 if workers == 1 else workers
        best = self.run_dir.net_path(self.run_dir.status()["best"])
        return make_pool(best, self.device, processes, threads, self.selfplay, devices=devices)

    @property
    def concurrent(self) -> bool:
        return False  # the alternating loop; zero9.learn.loop.concurrent's loop says True

    def loop(self) -> None:
        rd = self.run_dir
        first = int(rd.status()["generation"])
        while True:
            status = rd.status()
            g = int(status["generation"])
            if self.settings.generations is not None and g >= self.settings.generations:
                log.info("done: %s rounds in %s", g, rd.root)
                break
            if self.out_of_time(self.expected_round(g)):
                log.info("--hours %s: stopped after round %s, before a round that would end past them",
                         self.settings.hours, g - 1)
                break
            check_stop()
            log.info("=== round %s%s ===", g, self.run_progress(g, first))
            began = time.monotonic()
            self.round(g)
            self.round_seconds[self.rates(g)] = time.monotonic() - began

    def rates(self, g: int) -> bool:
        """Whether round ``g`` rates its candidate (such rounds are longer)."""
        return self.settings.eval_games > 0 and (g + 1) % self.settings.rate_every == 0

    def expected_round(self, g: int) -> float:
        """Round ``g``'s length as this invocation measured the last round of its kind (rated or not),
        else the last round; 0 before any, so the first round always runs."""
        kind = self.rates(g)
        return self.round_seconds.get(kind, self.round_seconds.get(not kind, 0.0))

    def run_progress(self, g: int, first: int) -> str:
        """The whole run's progress at round ``g``: " of N, 37% of the run, about 9 min left", from this
        invocation's mean round (``--generations``) or the clock (``--hours``); "" before it can tell."""
        elapsed = time.monotonic() - self.started
        done = g - first
        fractions, left = [], []
        if self.settings.generations is not None and self.settings.generations > first:
            fractions.append((g - first) / (self.settings.generations - first))
            if done:
                left.append(elapsed / done * (self.settings.generations - g))
        if self.settings.hours is not None:
            fractions.append(elapsed / (self.settings.hours * 3600))
            left.append(self.settings.hours * 3600 - elapsed)
        of = f" of {self.settings.generations}" if self.settings.generations is not None else ""
        if not fractions:
            return of
        share = min(1.0, max(fractions))
        seconds = max(0.0, min(left)) if left else None
        eta = "" if seconds is None else (f", about {seconds:.0f} s left" if seconds < 120
                                          else f", about {seconds / 60:.0f} min left")
        return f"{of}, {100 * share:.0f}% of the run{eta}"

    def out_of_time(self, ahead: float = 0.0) -> bool:
        """Whether ``--hours`` have passed, or would in ``ahead`` seconds: the loop starts no round
        that would end past them, so a 20-minute run's last net is one of its 20 minutes."""
        hours = self.settings.hours
        return hours is not None and time.monotonic() - self.started + ahead >= hours * 3600

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
        log.info("net generation %s (%s) plays; %s games so far", g, status["best"],
                 self.game_counts()["games"])
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
        promoted = (gate(self.matches, g, candidate, status["best"], self.settings.gate_games)
                    if self.settings.gate else True)
        lap("gate")
        if (g + 1) % self.settings.rate_every == 0:
            self.rate(g + 1, candidate)
        lap("rate")
        status = rd.status()
        new_best = candidate if promoted else status["best"]
        status = rd.write_status(generation=g + 1, best=new_best, trainer=candidate, candidate=None,
                                 candidate_generation=None,
                                 promoted=int(status.get("promoted", 0)) + bool(promoted),
                                 wall_seconds=self.wall_seconds(), **self.game_counts())
        if self.settings.plots and time.monotonic() - self.last_plot >= PLOT_EVERY_S:
            self.plot()
        lap("other")
        append_jsonl(rd.events_log, {"event": "promoted" if promoted else "rejected", "generation": g + 1,
                                     "net": candidate, "time": time.time(), "games": status["games"],
                                     "seconds": seconds})

    def play_round(self, g: int, best: str) -> None:
        rd = self.run_dir
        have = rd.count_games(g)
        need = self.settings.games_per_gen - have
        if need <= 0:
            return
        if have:
            log.info("round %s has %s games on disk; playing the remaining %s", g, have, need)
        cfg = self.selfplay
        # With straddling only the seed of this invocation's first round is used: it starts the sessions.
        seed = None if self.settings.seed is None else self.settings.seed * 100_003 + g * 1009 + have
        cfg = type(cfg)(**{**cfg.__dict__, "seed": seed})
        straddle = self.straddles()
        if straddle and self.per_worker_cap():
            # No more games in flight than a round asks for (as a round without straddling starts): a game
            # then spans about one round. With 4 times as many, a tiny run's rounds were all of games
            # begun 1-3 rounds before, and its held-out loss fell by 0.00-0.02 instead of 0.05-0.12.
            per_worker = -(-self.settings.games_per_gen // self.pool.size)
            cfg = type(cfg)(**{**cfg.__dict__, "parallel_games": min(cfg.parallel_games, per_worker)})
        options = config_summary(cfg)
        lz_dir = rd.root / "lz_chunks" / f"gen{g:04d}" if self.settings.lz_chunks else None
        stats = self.pool.play_round(rd.net_path(best), need, cfg, rd.gen_chunks_dir(g),
                                     rd.gen_sgf_dir(g) if self.settings.sgf else None, device=self.device,
                                     progress=True, options=options, straddle=straddle, lz_dir=lz_dir)
        counts = self.game_counts()
        row = {"generation": g, "net": best, "time": time.time(), "wall_seconds": self.wall_seconds(),
               "total_games": counts["games"], "straddle": straddle}
        row.update(stats.as_dict())
        row.update(self.pool.info())  # Ray: actors now, and actors lost (and replaced) so far
        append_jsonl(rd.selfplay_log, row)
        rd.write_status(wall_seconds=self.wall_seconds(), **counts)
        carried = f" ({stats.carried} begun in an earlier round)" if stats.carried else ""
        log.info("self-play round %s: %s games%s in %.0fs, %.1f moves/s, %.0f evals/s, mean length %.1f, "
                 "results %s", g, stats.games, carried, stats.seconds, row["moves_per_s"], row["evals_per_s"],
                 row["mean_length"], stats.wins)

    def per_worker_cap(self) -> bool:
        """Straddling rounds start no more games than a round asks for (the concurrent loop: no cap)."""
        return True

    def straddles(self) -> bool:
        """Whether games go on from one round into the next (with --straddle, and not on Ray, whose
        actors play each round's games as sessions of their own)."""
        return self.settings.straddle and not self.settings.ray

    def train_round(self, g: int, status: dict) -> str:
        trainer = status.get("trainer") or status["best"]
        net_hash, result = train_candidate(self.run_dir, self.game, self.device, self.train_opts, trainer,
                                           generation=g, global_step=int(status.get("global_step", 0)),
                                           cache=self.chunk_cache)
        self.run_dir.write_status(candidate=net_hash, candidate_generation=g + 1,
                                  global_step=result.global_step)
        clear_train_state(self.run_dir)
        return net_hash

    # --- matches (zero9.learn.loop.rating) -------------------------------------------------
    def anchors(self) -> list[str]:
        asked = self.settings.anchors
        return list(asked) if asked is not None else default_anchors(self.game)

    def rate(self, generation: int, candidate: str) -> None:
        """Rating games for a new net vs the last rated net and the anchors; refit ratings.json."""
        rate(self.matches, generation, candidate, self.settings.eval_games, self.anchors(),
             self.wall_seconds)

    def plot(self) -> None:
        self.last_plot = time.monotonic()
        try:
            from zero9.learn.loop.plot import plot_run

            plot_run(self.run_dir)
        except ImportError:
            pass  # matplotlib missing: plots are optional on training machines


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
    except TypeError:
        return False
    return True


def concurrent_by_default(config: AutotrainConfig) -> bool:
    """``--concurrent`` as asked, else on for a host with two GPUs or more (``--gpus`` of them)."""
    if config.concurrent is not None:
        return config.concurrent
    if config.ray or not torch.cuda.is_available() or str(config.device) not in ("auto", "cuda"):
        return False
    return (config.gpus or torch.cuda.device_count()) >= 2


def run_loop(loop: AutoTrain) -> int:
    """Run ``loop`` (either loop) holding its run directory, a SIGINT/SIGTERM a clean stop; the exit code."""
    with RunLock(loop.run_dir.root), stop_signals():
        try:
            return loop.run()
        except (StopRequested, KeyboardInterrupt) as stop:
            if hasattr(loop, "wall_base"):
                loop.save_wall()
            how = f"{stop}: stopped" if isinstance(stop, StopRequested) else "interrupted"
            log.warning("\n%s; every finished game and training step is saved: rerun the same command to "
                        "continue %s", how, loop.run_dir.root)
            return 0 if isinstance(stop, StopRequested) else 130
