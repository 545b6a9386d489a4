"""The run directory: where one learning run keeps everything, and how it writes safely.

Vocabulary:

- **run directory** (``--dir``): one folder per learning run. Its layout is the
  reference in ``docs/run-directory.md``; :class:`RunDir` names every path in it so
  no other module builds paths by hand.
- **generation**: a promoted (or, without gating, trained) net. Generation 0 is the
  random initial net; self-play of generation ``g`` uses the best net after ``g``
  trainings and writes its games under ``chunks/gen{g:04d}/``.
- **record**: one finished self-play game on disk: a training chunk (``.npz`` or
  Leela Zero ``.gz``) plus, optionally, its SGF (and Leela Zero chunk under
  ``lz_chunks/``), all named by one **stem**. Records are written atomically as soon
  as each game ends, the chunk last: the chunk *commits* the record, so the number
  of chunks on disk *is* the game count, nothing is counted that is not there and
  nothing twice. A kill between a game's SGF and its chunk leaves an uncommitted SGF,
  removed on restart (:meth:`RunDir.sweep_uncommitted_records`).
- **atomic write**: write to a temporary file in the same folder, flush, fsync,
  then ``os.replace`` onto the final name. A reader (or a rerun after ``kill -9``)
  sees the old file or the new one, never half of one. Temporary names start with
  ``.tmp-`` and are ignored (and swept) by every reader here.
- **status** (``status.json``): a summary rewritten atomically after the files it
  summarises: ``generation``, ``games``, ``best`` (net hash), ``positions`` and
  timings. The loop recounts each generation's records from disk
  (:meth:`RunDir.games_ledger`), so a stale status can lag; a generation whose
  records are gone (pruned, or not carried to another machine) keeps its count in
  ``games_by_generation``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from zero9.util.files import (
    TMP_PREFIX,
    atomic_write_json,
    read_json,
    unlink_quietly,
)

CHUNK_SUFFIXES = (".npz", ".gz")
RECORD_NAME = re.compile(r"-(\d+)p\.(npz|gz)$")  # a record's chunk: its stem, then its position count
class RunDir:
    """Paths of a run directory and the few operations on them (see module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    # --- paths -------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def status_path(self) -> Path:
        return self.root / "status.json"

    @property
    def nets_dir(self) -> Path:
        return self.root / "nets"

    @property
    def chunks_dir(self) -> Path:
        return self.root / "chunks"

    @property
    def sgf_dir(self) -> Path:
        return self.root / "sgf"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def plots_dir(self) -> Path:
        return self.root / "plots"

    @property
    def train_log(self) -> Path:
        return self.logs_dir / "train_log.jsonl"

    @property
    def selfplay_log(self) -> Path:
        return self.logs_dir / "selfplay.jsonl"

    @property
    def events_log(self) -> Path:
        return self.logs_dir / "events.jsonl"

    @property
    def rating_games(self) -> Path:
        return self.root / "ratings" / "games.jsonl"

    @property
    def ratings_path(self) -> Path:
        return self.root / "ratings" / "ratings.json"

    @property
    def train_state_path(self) -> Path:
        """The in-progress training state (model, optimizer, step) for resuming mid-training."""
        return self.nets_dir / "train_state.pt"

    def gen_chunks_dir(self, generation: int) -> Path:
        return self.chunks_dir / f"gen{generation:04d}"

    def gen_sgf_dir(self, generation: int) -> Path:
        return self.sgf_dir / f"gen{generation:04d}"

    def net_path(self, net_hash: str) -> Path:
        return self.nets_dir / f"{net_hash}.pt"

    def lz_weights_path(self, net_hash: str) -> Path:
        return self.nets_dir / f"{net_hash}.txt.gz"

    def best_net_path(self) -> Path | None:
        best = self.status().get("best")
        return self.net_path(best) if best else None

    # --- reading -----------------------------------------------------------------
    def exists(self) -> bool:
        return self.config_path.exists()

    def config(self) -> dict:
        cfg = read_json(self.config_path)
        if cfg is None:
            raise ValueError(f"{self.root} is not a zero9 run directory (no config.json)")
        return cfg

    def status(self) -> dict:
        return read_json(self.status_path, default={}) or {}

    def write_status(self, **updates: Any) -> dict:
        """Merge ``updates`` into status.json (atomically) and return the new status."""
        status = self.status()
        status.update(updates)
        status["updated"] = time.time()
        atomic_write_json(self.status_path, status)
        return status

    def chunk_files(self, generation: int | None = None) -> list[Path]:
        """Finished training chunks in creation order (generation, then name), temp files excluded."""
        base = self.gen_chunks_dir(generation) if generation is not None else self.chunks_dir
        return sorted_chunk_files(base)

    def count_games(self, generation: int | None = None) -> int:
        """Self-play games on disk: one chunk per game (see module docstring).

        Counts names only (no sorting, no stat per file): a long run has tens of
        thousands of chunks and the loop counts them several times a round.
        """
        base = self.gen_chunks_dir(generation) if generation is not None else self.chunks_dir
        return sum(_is_chunk_name(name) for _, _, names in os.walk(base) for name in names)

    def games_ledger(self) -> dict[int, int]:
        """Games played per generation: status.json's ``games_by_generation``, refreshed from the chunks.

        A generation whose chunks were pruned, or not carried to another machine, keeps the
        count it had; one with more chunks on disk than recorded takes the disk's count.
        """
        ledger = {int(g): int(n) for g, n in self.status().get("games_by_generation", {}).items()}
        if self.chunks_dir.exists():
            for folder in self.chunks_dir.glob("gen[0-9][0-9][0-9][0-9]"):
                g = int(folder.name[3:])
                ledger[g] = max(ledger.get(g, 0), self.count_games(g))
        return dict(sorted(ledger.items()))

    def sweep_uncommitted_records(self, generation: int) -> int:
        """Delete the SGFs and Leela Zero chunks of ``generation``'s games killed before their shard.

        Only the round in progress can hold such files; older rounds are left alone, since
        their chunks may have been pruned on purpose. Returns how many files went.
        """
        chunk_dir = self.gen_chunks_dir(generation)
        if not chunk_dir.exists():
            return 0
        committed = {record_stem(p.name) for p in sorted_chunk_files(chunk_dir)}
        n = 0
        for folder in (self.gen_sgf_dir(generation), self.root / "lz_chunks" / chunk_dir.name):
            for path in folder.iterdir() if folder.exists() else []:
                if path.suffix in (".sgf", ".gz") and path.name.split(".")[0] not in committed:
                    unlink_quietly(path)
                    n += 1
        return n

    def sweep_temp_files(self) -> int:
        """Delete temp files a crash left behind; returns how many."""
        n = 0
        if self.root.exists():
            for p in self.root.rglob(f"{TMP_PREFIX}*"):
                unlink_quietly(p)
                n += 1
        return n


def record_stem(chunk_name: str) -> str:
    """The stem a record's files share: ``{time}-w{worker}-{seq}`` of ``{stem}-{P}p.npz``."""
    return RECORD_NAME.sub("", chunk_name)


def sorted_chunk_files(base: str | os.PathLike) -> list[Path]:
    """Chunk files under ``base`` (recursively) sorted by path: generation folders then names.

    Writers name records ``{time_ns:019d}-...`` so path order is creation order.
    """
    base = Path(base)
    if not base.exists():
        return []
    if base.is_file():
        return [base]
    files = [Path(root, name) for root, _, names in os.walk(base) for name in names if _is_chunk_name(name)]
    return sorted(files)


def _is_chunk_name(name: str) -> bool:
    return name.endswith(CHUNK_SUFFIXES) and not name.startswith(TMP_PREFIX)
