"""``zero9 autotrain --concurrent``: training beside self-play, on every GPU and core of a host.

The alternating loop (:mod:`zero9.learn.loop.autotrain`) stops self-play while it trains; on a
GPU host training was about half of each round. Here, as in Leela Zero's and KataGo's
pipelines, nothing waits:

- **self-play** plays rounds back to back on every GPU: one inference server per GPU
  (:class:`zero9.nn.inference.ServerGroup`), the worker processes spread over the cores,
  games straddling rounds (each worker's games go on from one round into the next, so no
  round waits for its longest games). Round ``g`` writes ``chunks/gen{g}/`` with the newest
  **published** net at the round's start; its records name that net.
- **the trainer** (:class:`Trainer`, one process of its own, on ``--train-device``: the
  last GPU by default) trains the latest net one round of ``--steps`` on the newest window
  (the same rule: ``--window`` of all positions, newest first) whenever ``--games-per-gen``
  new games have come since its last round began, while the games keep coming. Each
  trained net is **published** between two self-play rounds: it becomes ``best``, the
  inference servers load it, and the next round plays with it. Net generation ``k`` is the
  ``k``-th trained net (``nets_trained`` in status.json); a round's row in
  ``logs/selfplay.jsonl`` names the net it played with.
- **rating** (``--eval-games``, every ``--rate-every`` nets) runs on spare capacity: a
  process of its own, one at a time, on the trainer's device; a net published while the
  rater is busy is not rated. ``--gate`` is for the alternating loop only.

Durable as the alternating loop: one process writes status.json (this one); the trainer
writes only its train state and the nets, then says which; a SIGINT/SIGTERM stops both at
the next safe point (the trainer saves its step, so a rerun resumes it); ``kill -9`` takes
every process with it (they die with their parent); a full disk in any of them ends the
command with docs/durability.md's one line and exit 2. ``--generations N`` ends after
``N`` self-play rounds, once the training under way is published.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing as mp
import os
import queue
import signal
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from zero9.games import Game, make_game
from zero9.learn.loop.autotrain import PLOT_EVERY_S, AutoTrain
from zero9.learn.loop.nets import NetShape, train_candidate
from zero9.learn.loop.rating import RunMatches, rate
from zero9.learn.rundir import RunDir
from zero9.learn.selfplay.pool import WorkerPool
from zero9.learn.selfplay.worker import die_with_parent
from zero9.learn.training.train import clear_train_state
from zero9.learn.training.window import ChunkCache
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.settings import AutotrainConfig, SelfPlayConfig, TrainOptions
from zero9.util.files import DiskFullError, append_jsonl
from zero9.util.interrupts import (
    StopRequested,
    check_stop,
    ctrl_c_held,
    ignore_ctrl_c,
    request_stop,
    stop_requested,
    stop_signals,
)
from zero9.util.logs import configure_logging

log = logging.getLogger(__name__)

STOP_WAIT_S = 30.0  # how long a stop waits for the trainer to save its step


# --------------------------------------------------------------------------------------
# the trainer and the rater: processes of their own


class Background:
    """A spawned process that takes jobs one at a time and answers each (the trainer, the rater).

    ``target(job, state) -> answer`` runs in the process; ``state`` is a dict kept there
    between jobs (the trainer's chunk cache). Answers: ``("done", answer)``, ``("stopped",)``
    after a SIGINT/SIGTERM, ``("error", text, disk)`` (``disk``: ``(path, errno)`` of a full disk).
    """

    def __init__(self, name: str, target, setup: dict[str, Any]):
        ctx = mp.get_context("spawn")
        self.name, self.jobs, self.answers = name, ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=_background_main, name=f"zero9-{name}", daemon=True,
                                args=(target, setup, self.jobs, self.answers, os.getpid()))
        with ctrl_c_held():  # it ignores Ctrl-C from its first line (util.interrupts: held Ctrl-C)
            self.proc.start()
        self.busy = False

    def submit(self, job: Any) -> None:
        self.jobs.put(job)
        self.busy = True

    def poll(self, timeout: float = 0.0) -> tuple | None:
        """The answer to the job under way, or None while it runs; raises what the process raised."""
        if not self.busy:
            return None
        try:
            answer = self.answers.get(timeout=timeout) if timeout else self.answers.get_nowait()
        except queue.Empty:
            if not self.proc.is_alive():
                raise RuntimeError(f"the {self.name} process died without answering") from None
            return None
        self.busy = False
        if answer[0] == "error":
            if answer[2] is not None:
                path, errno = answer[2]
                raise DiskFullError(path, OSError(errno, os.strerror(errno)))
            raise RuntimeError(f"the {self.name} failed: {answer[1]}")
        return answer

    def close(self, wait: float = STOP_WAIT_S) -> None:
        """Stop the process: a job under way stops at its next safe point (SIGTERM), saving its state."""
        if self.proc.is_alive():
            self.jobs.put(None)
            if self.busy:
                os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.join(wait)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(1.0)


def _background_main(target, setup: dict, jobs, answers, parent: int) -> None:
    die_with_parent(parent)
    configure_logging()  # spawned: the trainer's and the rater's info lines need a handler here
    with stop_signals():
        # Ctrl-C reaches the whole process group: the parent decides when this stops (SIGTERM, close()),
        # and says so itself
        ignore_ctrl_c()
        signal.signal(signal.SIGTERM, lambda signum, _frame: request_stop(signum))
        state: dict[str, Any] = dict(setup)
        threads = setup.get("threads") or 0
        if threads:
            torch.set_num_threads(threads)
        while True:
            try:
                job = jobs.get(timeout=1.0)
            except queue.Empty:
                if stop_requested():
                    return
                continue
            if job is None:
                return
            try:
                answers.put(("done", target(job, state)))
            except StopRequested:
                answers.put(("stopped",))
                return
            except BaseException as e:  # the main process must hear about it, not wait forever
                disk = (str(e.path), e.errno) if isinstance(e, DiskFullError) else None
                answers.put(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}", disk))
                return


def train_job(job: dict, state: dict) -> dict:
    """The trainer's job: one round of training of ``job["trainer"]`` (see :func:`train_candidate`)."""
    run_dir = RunDir(state["run_dir"])
    if state["device"].startswith("cuda:"):
        torch.cuda.set_device(torch.device(state["device"]))
    cache = state.setdefault("cache", ChunkCache())  # the window's chunks stay read between rounds
    _, meta = load_net(run_dir.net_path(job["trainer"]), device="cpu")
    net_hash, result = train_candidate(run_dir, game_from_meta(meta), state["device"], state["opts"],
                                       job["trainer"], generation=job["generation"],
                                       global_step=job["global_step"], cache=cache, progress=False)
    return {"net": net_hash, "global_step": result.global_step, "generation": job["generation"] + 1,
            "test": result.last_test, "started": job["started"]}


def rate_job(job: dict, state: dict) -> dict:
    """The rater's job: rating games of one net (the alternating loop's :func:`zero9.learn.loop.rating.rate`,
    on a pool of one thread in this process)."""
    began = time.monotonic()
    with WorkerPool(0, 1) as pool:
        matches = RunMatches(RunDir(state["run_dir"]), make_game(**state["game"]), pool, state["device"],
                             state["visits"], state["seed"])
        rate(matches, job["generation"], job["net"], state["games"], state["anchors"],
             lambda: job["wall_seconds"] + time.monotonic() - began)
    return {"generation": job["generation"], "net": job["net"]}


# --------------------------------------------------------------------------------------
# the loop


class ConcurrentAutoTrain(AutoTrain):
    """The loop with the trainer beside self-play (see the module docstring)."""

    def __init__(self, run_dir: str | Path, game: Game, net: NetShape, config: AutotrainConfig,
                 selfplay: SelfPlayConfig, train: TrainOptions, command: dict[str, Any] | None = None):
        """The alternating loop's arguments (:class:`zero9.learn.loop.autotrain.AutoTrain`)."""
        if config.gate:
            raise ValueError("--gate needs the alternating loop (--no-concurrent): here every trained net "
                             "plays from the next round on")
        if config.ray:
            raise ValueError("--concurrent runs on one host's GPUs and cores; "
                             "--ray is the alternating loop's")
        # games straddle rounds here: no round waits for its longest games
        super().__init__(run_dir, game, net, dataclasses.replace(config, straddle=True), selfplay, train,
                         command)
        devices = self.gpus()
        self.train_device = config.train_device or devices[-1]
        self.trainer: Background | None = None
        self.rater: Background | None = None
        self.selfplay_seconds = 0.0  # inside self-play rounds, this invocation
        self.train_seconds = 0.0  # the trainer busy, this invocation
        self.train_began: float | None = None

    @property
    def concurrent(self) -> bool:
        return True

    def straddles(self) -> bool:
        return True

    def per_worker_cap(self) -> bool:
        return False  # rounds are short against a game here: every worker keeps its games in flight

    def loop(self) -> None:
        opts = self.train_opts
        self.trainer = Background("trainer", train_job, {"run_dir": str(self.run_dir.root), "opts": opts,
                                                         "device": self.train_device,
                                                         "threads": self.settings.threads or 1})
        self.began = time.monotonic()
        self.shares: dict[str, Any] = {}
        try:
            self.resume_training()
            super().loop()
            self.rounds_ended = time.monotonic()
            if not self.out_of_time():  # --generations reached: the net under way is the run's last
                self.finish_training()
        finally:
            for helper in (self.trainer, self.rater):
                if helper is not None:
                    helper.close()
            self.log_shares()

    def round(self, g: int) -> None:
        rd = self.run_dir
        self.publish(self.trainer.poll())
        self.start_training()
        status = rd.status()
        log.info("net generation %s (%s) plays; %s games so far; the trainer is %s",
                 status.get("nets_trained", 0), status["best"], self.game_counts()["games"],
                 "training" if self.trainer.busy else "waiting for games")
        began = time.monotonic()
        self.play_round(g, status["best"])
        selfplay_s = time.monotonic() - began
        self.selfplay_seconds += selfplay_s
        status = rd.write_status(generation=g + 1, wall_seconds=self.wall_seconds(), **self.game_counts())
        append_jsonl(rd.events_log, {"event": "round", "generation": g + 1, "net": status["best"],
                                     "time": time.time(), "games": status["games"],
                                     "seconds": {"selfplay": round(selfplay_s, 2)},
                                     "training": self.trainer.busy})
        if self.settings.plots and time.monotonic() - self.last_plot >= PLOT_EVERY_S:
            self.plot()

    def resume_training(self) -> None:
        """A training round that an earlier invocation began and did not publish goes on first (from
        the step its train state saved)."""
        status = self.run_dir.status()
        if status.get("training") is not None:
            self.submit_training(status)

    def submit_training(self, status: dict) -> None:
        self.trainer.submit({"trainer": status.get("trainer") or status["best"],
                             "generation": int(status.get("nets_trained", 0)),
                             "global_step": int(status.get("global_step", 0)), "started": time.time()})
        self.train_began = time.monotonic()

    def start_training(self) -> None:
        """Start the trainer's next round once ``--games-per-gen`` games have come since its last began."""
        if self.trainer.busy:
            return
        status = self.run_dir.status()
        games = self.game_counts()["games"]
        since = games - int(status.get("trained_at_games", 0))
        if since < self.settings.games_per_gen or games == 0:
            return
        status = self.run_dir.write_status(trained_at_games=games,
                                           training=int(status.get("nets_trained", 0)))
        self.submit_training(status)

    def publish(self, answer: tuple | None) -> None:
        """A trained net becomes the best one: status.json names it, the servers load it, the next round
        plays with it."""
        if answer is None:
            return
        if answer[0] == "stopped":
            raise StopRequested("the trainer stopped")
        done = answer[1]
        if self.train_began is not None:
            self.train_seconds += time.monotonic() - self.train_began
            self.train_began = None
        rd = self.run_dir
        status = rd.status()
        status = rd.write_status(best=done["net"], trainer=done["net"], global_step=done["global_step"],
                                 nets_trained=done["generation"], training=None,
                                 wall_seconds=self.wall_seconds(),
                                 promoted=int(status.get("promoted", 0)) + 1)
        clear_train_state(rd)
        append_jsonl(rd.events_log, {"event": "promoted", "generation": done["generation"],
                                     "net": done["net"], "round": int(status["generation"]),
                                     "time": time.time(), "games": status.get("games", 0),
                                     "seconds": {"train": round(time.time() - done["started"], 2)}})
        log.info("published net generation %s %s: round %s plays with it", done["generation"], done["net"],
                 status["generation"])
        if self.settings.eval_games > 0 and done["generation"] % self.settings.rate_every == 0:
            self.start_rating(done["generation"], done["net"])

    def start_rating(self, generation: int, net: str) -> None:
        if self.rater is None:
            self.rater = Background("rater", rate_job, {
                "run_dir": str(self.run_dir.root), "game": self.game.to_dict(), "device": self.train_device,
                "visits": self.settings.eval_visits or self.selfplay.visits, "seed": self.settings.seed,
                "games": self.settings.eval_games, "anchors": self.anchors(),
                "threads": self.torch_threads() or 1})
        if self.rater.busy and self.rater.poll() is None:
            log.warning("rating: the rater is still busy; net generation %s is not rated", generation)
            return
        self.rater.submit({"generation": generation, "net": net, "wall_seconds": self.wall_seconds()})

    def finish_training(self) -> None:
        """After the last round: wait for the training under way and publish it (a stop does not wait)."""
        while self.trainer.busy:
            check_stop()  # a stop here is a stop: the trainer saves its step and the rerun goes on
            self.publish(self.trainer.poll(timeout=1.0))
        if self.rater is not None and self.rater.busy:
            while self.rater.busy and self.rater.poll(timeout=1.0) is None:
                check_stop()

    def log_shares(self) -> None:
        """Where this invocation's wall time went: self-play's share of it, and the trainer's."""
        end = getattr(self, "rounds_ended", time.monotonic())
        wall = end - self.began  # the rounds' wall time (not the wait for the last net)
        if self.train_began is not None:
            self.train_seconds += max(0.0, end - self.train_began)
        self.train_seconds = min(self.train_seconds, wall)
        shares = {"event": "shares", "time": time.time(), "wall_seconds": round(wall, 2),
                  "selfplay_share": round(self.selfplay_seconds / wall, 4) if wall > 0 else 0.0,
                  "train_share": round(self.train_seconds / wall, 4) if wall > 0 else 0.0}
        self.shares = shares
        try:
            append_jsonl(self.run_dir.events_log, shares)
        except OSError:
            pass  # a full disk is being reported already
        log.info("self-play ran %.1f%% of %.0fs, the trainer %.1f%%", 100 * shares["selfplay_share"], wall,
                 100 * shares["train_share"])
