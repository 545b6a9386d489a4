"""Group commit: the uploads and tasks of the last few milliseconds made durable together.

Vocabulary:

- **entry**: what one request wants kept: ``files`` (name relative to the run directory ->
  bytes) and ``rows`` (``(table, values)`` pairs to insert), and the caller waiting for it.
- **batch**: every entry that queued while the previous batch was being written. One thread,
  the **writer**, takes a batch, writes all its files atomically (temporary name, fsync,
  rename; each folder fsync'd once per batch: :func:`zero9.util.files.atomic_write_many`),
  then inserts all its rows in **one** database transaction (one executemany per table), and
  only then wakes each caller. Under load a batch holds many entries, so the fsyncs and the
  commit are paid once for all of them; alone, an entry is a batch of one and waits for nobody.
- **isolation**: if a batch fails (a duplicate seed from two racing answers to one task trips
  a unique constraint), its files are removed and each entry is retried alone, so a bad
  entry fails only itself and its caller gets the error.

Durability is exactly that of one transaction per upload: an entry's files are on disk before
its row commits, the caller hears success only after the commit, and a crash in between
leaves files no row names, which the server's start-up sweep deletes. One writer per process
also means the threads of a process never wait on each other for the database's write lock.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Table
from sqlalchemy.engine import Engine

from zero9.distributed import db
from zero9.util.files import atomic_write_many, unlink_quietly

MAX_BATCH = 512  # entries in one transaction, at most


@dataclass
class Entry:
    files: dict[str, bytes]
    rows: list[tuple[Table, dict]]
    done: Future = field(default_factory=Future)


class GroupCommit:
    """The writer thread of one process (see the module docstring)."""

    def __init__(self, engine: Engine, root: Path):
        self.engine, self.root = engine, root
        self.queue: queue.SimpleQueue[Entry] = queue.SimpleQueue()
        self.batches = self.entries = 0  # counters, for the status page and the benchmark
        self.busy_seconds = 0.0  # time spent writing and committing batches
        self.thread = threading.Thread(target=self._run, name="group-commit", daemon=True)
        self.thread.start()

    def submit(self, files: dict[str, bytes], rows: list[tuple[Table, dict]]) -> Future:
        """Queue ``files`` and ``rows``; the future is done once they are committed (or failed)."""
        entry = Entry(files, rows)
        self.queue.put(entry)
        return entry.done

    def commit(self, files: dict[str, bytes], rows: list[tuple[Table, dict]]) -> None:
        """Keep ``files`` and insert ``rows``; returns once they are committed, raises what failed."""
        self.submit(files, rows).result()

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            started = time.perf_counter()
            try:
                self._write(batch)
            except Exception as error:
                if len(batch) == 1:
                    self._finish(batch[0], error)
                else:
                    for entry in batch:  # isolation: only the entry that fails again fails
                        self._finish(entry, self._try_alone(entry))
                continue
            finally:
                self.busy_seconds += time.perf_counter() - started
            self.batches += 1
            self.entries += len(batch)
            for entry in batch:
                entry.done.set_result(None)

    def _next_batch(self) -> list[Entry]:
        batch = [self.queue.get()]  # wait for the first, then take whatever else is queued
        while len(batch) < MAX_BATCH:
            try:
                batch.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _try_alone(self, entry: Entry) -> Exception | None:
        try:
            self._write([entry])
        except Exception as error:
            return error
        return None

    @staticmethod
    def _finish(entry: Entry, error: Exception | None) -> None:
        if error is None:
            entry.done.set_result(None)
            return
        entry.done.set_exception(error)  # the caller reports it (a 409, a 507, or a 500 with its traceback)

    def _write(self, batch: list[Entry]) -> None:
        """Files first (atomically, fsync'd), then one transaction; on failure no file of the batch stays
        (file names hold the arrival time and content hash: a batch never replaces another's file)."""
        files = {os.path.join(self.root, name): data for entry in batch for name, data in entry.files.items()}
        inserts: dict[Table, list[dict]] = {}
        for entry in batch:
            for table, values in entry.rows:
                inserts.setdefault(table, []).append(values)
        atomic_write_many(files)  # all or none
        try:
            with db.transaction(self.engine) as c:
                for table, values in inserts.items():
                    c.execute(table.insert(), values)
        except BaseException:
            for path in files:
                unlink_quietly(path)
            raise
