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
- **a run without its status**: an autotrain run (``config.json``) that holds training
  chunks or an events log but whose ``status.json`` is missing or unreadable is refused
  (:class:`StatusLost`), never started over: starting over would retrain from a new
  random net and orphan every net on disk. :meth:`RunDir.rebuild_status` (the command
  ``zero9 rebuild-status --dir DIR``) writes it again from ``logs/events.jsonl``, the
  nets' own meta and the chunks on disk.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from zero9.nn.checkpoint import read_meta
from zero9.util.files import (
    TMP_PREFIX,
    atomic_write_json,
    read_json,
    read_jsonl,
    unlink_quietly,
)

CHUNK_SUFFIXES = (".npz", ".gz")
RECORD_NAME = re.compile(r"-(\d+)p\.(npz|gz)$")  # a record's chunk: its stem, then its position count
GEN_FOLDER = "gen[0-9][0-9][0-9][0-9]"
REBUILD_COMMAND = "zero9 rebuild-status --dir"


class StatusLost(ValueError):
    """A run's status.json is missing or unreadable while the run holds games: refused, never restarted."""

    def __init__(self, root: Path, why: str):
        super().__init__(f"run directory {root}: {why}, but the run holds training chunks or an events log; "
                         f"refusing to start it over (that would retrain from a new random net). "
                         f"Rebuild status.json from the files on disk with '{REBUILD_COMMAND} {root}', "
                         f"then rerun (docs/durability.md)")
        self.root = root


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

    # --- reading -----------------------------------------------------------------
    def exists(self) -> bool:
        return self.config_path.exists()

    def config(self) -> dict:
        cfg = read_json(self.config_path)
        if cfg is None:
            raise ValueError(f"{self.root} is not a zero9 run directory (no config.json)")
        return cfg

    def status(self) -> dict:
        """status.json's content; {} for a run not begun; :class:`StatusLost` when it is gone from a run."""
        try:
            status = read_json(self.status_path)
        except ValueError as e:  # corrupt JSON, or not a regular file, or too large
            if self.holds_games():
                raise StatusLost(self.root, f"status.json is unreadable ({e})") from None
            raise
        if status is None:
            if self.holds_games():
                raise StatusLost(self.root, "status.json is missing")
            return {}
        if not isinstance(status, dict):
            raise StatusLost(self.root, f"status.json holds a {type(status).__name__}, not an object")
        return status

    def holds_games(self) -> bool:
        """Whether this is an autotrain run (config.json) with training chunks or an events log."""
        if not self.config_path.exists():
            return False
        return self.events_log.exists() or self.count_games() > 0

    def chunk_folders(self) -> list[Path]:
        return sorted(self.chunks_dir.glob(GEN_FOLDER)) if self.chunks_dir.is_dir() else []

    def write_status(self, **updates: Any) -> dict:
        """Merge ``updates`` into status.json (atomically) and return the new status.

        Without a status.json only a whole new status may be written (one naming ``generation``
        and ``best`` or ``trainer``): the merge into a lost one is :class:`StatusLost`.
        """
        whole = "generation" in updates and ("best" in updates or "trainer" in updates)
        status = {} if whole and not os.path.lexists(self.status_path) else self.status()
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
        for g, n in self._games_on_disk().items():
            ledger[g] = max(ledger.get(g, 0), n)
        return dict(sorted(ledger.items()))

    def _games_on_disk(self) -> dict[int, int]:
        generations = [int(folder.name[3:]) for folder in self.chunk_folders()]
        return {g: self.count_games(g) for g in generations}

    def rebuild_status(self) -> dict:
        """Write status.json again from what is on disk; returns it. Only where it is missing or unreadable.

        From ``logs/events.jsonl``: the generation (the last promoted or rejected one), the best net
        (the last promoted, else the created one), the trainer (the last one trained) and the
        promotion count. From the nets' meta: the global step, and a candidate trained but not yet
        gated. From the chunks: the games per generation (a generation whose chunks are gone keeps
        the count self-play logged). The wall time from the self-play log.
        """
        if not self.config_path.exists():
            raise ValueError(f"{self.root} is not an autotrain run directory (no config.json)")
        try:
            readable = isinstance(read_json(self.status_path), dict)
        except ValueError:
            readable = False
        if readable:
            raise ValueError(f"{self.status_path} is readable; there is nothing to rebuild "
                             f"(move it away first to rebuild it from the files on disk)")
        status = self._status_from_disk()
        atomic_write_json(self.status_path, status)
        return status

    def _status_from_disk(self) -> dict:
        events = [e for e in read_jsonl(self.events_log) if isinstance(e, dict)]
        created = next((e["net"] for e in events if e.get("event") == "created"), None)
        if created is None:
            raise ValueError(f"cannot rebuild {self.status_path}: {self.events_log} has no 'created' event "
                             f"naming the run's first net")
        rounds = [e for e in events if e.get("event") in ("promoted", "rejected")]
        generation = max((int(e["generation"]) for e in rounds), default=0)
        promoted = [e["net"] for e in rounds if e.get("event") == "promoted"]
        best = promoted[-1] if promoted else created
        trainer = rounds[-1]["net"] if rounds else created
        for name in {best, trainer}:
            if not self.net_path(name).is_file():
                raise ValueError(f"cannot rebuild {self.status_path}: net {self.net_path(name)} named in "
                                 f"{self.events_log} is missing")
        status: dict[str, Any] = {"generation": generation, "best": best, "trainer": trainer,
                                  "promoted": len(promoted), "candidate": None, "candidate_generation": None,
                                  "global_step": int(read_meta(self.net_path(trainer)).get("step") or 0)}
        candidate = self._candidate(trainer, generation + 1)
        if candidate is not None:
            status.update(candidate=candidate[0], candidate_generation=generation + 1,
                          global_step=candidate[1])
        ledger = self._logged_games()
        ledger.update(self._games_on_disk())
        status["games_by_generation"] = {str(g): n for g, n in sorted(ledger.items())}
        status["games"] = sum(ledger.values())
        walls = [r.get("wall_seconds") for r in read_jsonl(self.selfplay_log) if isinstance(r, dict)]
        phases = [sum(v for v in e["seconds"].values() if isinstance(v, (int, float)))
                  for e in rounds if isinstance(e.get("seconds"), dict)]
        status["wall_seconds"] = max([float(w) for w in walls if isinstance(w, (int, float))] + [sum(phases)])
        status["rebuilt"] = time.time()
        status["updated"] = time.time()
        return status

    def _candidate(self, trainer: str, generation: int) -> tuple[str, int] | None:
        """(hash, step) of the newest net trained from ``trainer`` for ``generation``, or None."""
        found = []
        for path in self.nets_dir.glob("*.pt"):
            if path.name.startswith(".") or path == self.train_state_path:
                continue
            try:
                meta = read_meta(path)
            except (ValueError, OSError):
                continue  # a damaged net is no candidate; it is left where it is
            if meta.get("generation") == generation and meta.get("parent") == trainer and meta.get("hash"):
                found.append((float(meta.get("created") or 0), meta["hash"], int(meta.get("step") or 0)))
        return (max(found)[1], max(found)[2]) if found else None

    def _logged_games(self) -> dict[int, int]:
        """Games per generation as the self-play log counted them (for generations whose chunks are gone)."""
        ledger: dict[int, int] = {}
        for row in read_jsonl(self.selfplay_log):
            g, n = (row.get("generation"), row.get("games")) if isinstance(row, dict) else (None, None)
            if isinstance(g, int) and isinstance(n, int):
                ledger[g] = ledger.get(g, 0) + n
        return ledger

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
