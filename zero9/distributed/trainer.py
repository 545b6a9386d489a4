"""``zero9 trainer URL RUN_DIR``: train on a server's games and submit each new net as a candidate.

Leela Zero's training machine sat beside its server: it read the uploaded chunks, trained,
and posted a net every so many steps; the server gated it. This is that machine.

Vocabulary:

- **RUN_DIR**: the *server's* run directory. Its ``chunks/`` are the data (the server names
  them ``<time>-<sha>-<N>p.gz``, so they sort by arrival and the window rule counts positions
  without opening them); the trainer keeps its own state in ``RUN_DIR/trainer/`` (a
  :class:`zero9.learn.rundir.RunDir`: checkpoints, the training log, the resumable step state).
- **round**: once at least ``--min-games`` new games have arrived, train ``--steps`` steps on
  the newest window (:func:`zero9.learn.training.train.train_generation`: the newest 20% of positions,
  as ``autotrain``), save the checkpoint, and ``POST /submit-network`` its Leela Zero weights
  with the API key (``RUN_DIR/api_key``, or ``--api-key``).
- **lineage**: training continues from the trainer's own previous net (as Leela Zero's
  trainer did), starting from the server's best net (``GET /best-network``).

A round interrupted by ``kill -9`` resumes from its last saved step; a round whose net was
trained but not yet accepted by the server is submitted again on the next start.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import time
from pathlib import Path

from zero9.distributed.client import NET_GZ_MAX_BYTES, ServerError, http, multipart
from zero9.learn.rundir import RunDir, sorted_chunk_files
from zero9.learn.training.train import StateHolder, clear_train_state, train_generation
from zero9.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from zero9.nn.weights import lz_text
from zero9.settings import TrainOptions
from zero9.util.files import atomic_write_bytes

log = logging.getLogger(__name__)

POLL_SECONDS = 5.0


class Trainer:
    """The wait -> train -> submit loop (see the module docstring)."""

    def __init__(self, url: str, server_dir: Path, opts: TrainOptions, api_key: str | None = None):
        self.url = url.rstrip("/")
        self.data_dir = server_dir / "chunks"
        self.state = RunDir(server_dir / "trainer")
        self.state.nets_dir.mkdir(parents=True, exist_ok=True)
        self.opts = opts
        key_file = server_dir / "api_key"
        if api_key is None and not key_file.exists():
            raise ValueError(f"no API key: pass --api-key or run on the server's machine ({key_file})")
        self.api_key = api_key or key_file.read_text().strip()

    def games(self) -> int:
        return len(sorted_chunk_files(self.data_dir))

    def start_net(self):
        """(net, meta, optimizer state, global step): the trainer's last net, else the server's best."""
        status = self.state.status()
        if status.get("trainer"):
            ckpt = load_checkpoint(self.state.net_path(status["trainer"]), self.opts.device)
            return ckpt.net, ckpt.meta, ckpt.optimizer_state, int(status.get("global_step", 0))
        path = self.state.nets_dir / "server-best.gz"
        atomic_write_bytes(path, http(f"{self.url}/best-network", max_bytes=NET_GZ_MAX_BYTES))
        net, meta = load_net(path, device=self.opts.device)
        return net.train(), meta, None, 0

    def round(self, generation: int) -> str:
        """Train one round and save it; returns the new net's hash."""
        net, meta, optimizer_state, global_step = self.start_net()
        result = train_generation(self.state, net, meta, self.opts, generation=generation,
                                  optimizer_state=optimizer_state, global_step=global_step,
                                  data_paths=[self.data_dir], progress=False)
        new_meta = save_checkpoint(self.state.nets_dir / ".trained.pt", result.net,
                                   {"game": meta["game"], "parent": meta.get("hash"),
                                    "generation": generation + 1, "step": result.global_step,
                                    "optimizer": self.opts.optimizer},
                                   StateHolder(result.optimizer_state))
        os.replace(self.state.nets_dir / ".trained.pt", self.state.net_path(new_meta["hash"]))
        clear_train_state(self.state)
        self.state.write_status(trainer=new_meta["hash"], generation=generation + 1,
                                global_step=result.global_step, submitted=False)
        return new_meta["hash"]

    def submit(self) -> str:
        """Post the trainer's newest net to the server (idempotent: a known net counts as sent).

        Returns its Leela Zero hash (sha256 of the text), the name the server knows it by."""
        status = self.state.status()
        ckpt = load_checkpoint(self.state.net_path(status["trainer"]), "cpu")
        text = lz_text(ckpt.net, drop_ownership=True).encode("ascii")
        weights = gzip.compress(text, mtime=0)
        fields = {"training_steps": str(status.get("global_step", 0))}
        body, content_type = multipart(fields, {"weights": weights})
        headers = {"Content-Type": content_type, "X-Api-Key": self.api_key}
        try:
            http(f"{self.url}/submit-network", body, headers)
        except ValueError as e:  # Refused
            if "already known" not in str(e):
                raise
        self.state.write_status(submitted=True)
        return hashlib.sha256(text).hexdigest()

    def run(self, rounds: int | None, min_games: int, timeout_min: float | None) -> int:
        start = time.monotonic()
        status = self.state.status()
        if status.get("trainer") and not status.get("submitted"):
            self.submit()  # trained before a crash, never accepted
        done = 0
        seen = int(status.get("games_seen", 0))
        while rounds is None or done < rounds:
            if timeout_min is not None and time.monotonic() - start > 60 * timeout_min:
                break
            games = self.games()
            if games < seen + min_games:
                time.sleep(POLL_SECONDS)
                continue
            generation = int(self.state.status().get("generation", 0))
            self.round(generation)
            while True:
                try:
                    net_hash = self.submit()
                    break
                except ServerError as e:
                    log.warning("submit failed (%s); retrying in %.0fs", e, POLL_SECONDS)
                    time.sleep(POLL_SECONDS)
            self.state.write_status(games_seen=games)
            seen, done = games, done + 1
            log.info("round %s: trained on %s games, submitted %s", generation + 1, games, net_hash[:8])
        return 0
