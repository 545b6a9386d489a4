"""The training window: which chunk files a round learns from, read into memory and split.

Vocabulary:

- **sample** (or position): one training example: input ``planes`` ``[C, N, N]``,
  the search's visit distribution ``policy`` ``[A]`` (the policy target), the game
  result ``value`` in ``{-1, 0, +1}`` from the side to move's view, and for Go with
  an ownership head the final Tromp-Taylor ``ownership`` ``[N*N]`` (+1 = the side to
  move's area, -1 the opponent's, 0 neither). Samples are held as one type from self-play
  through the chunk files to the batches: :class:`zero9.nn.chunks.ChunkData`.
- **window**: the newest share of the run's positions, by creation order of the
  chunk files (``window`` fraction of all positions, clamped to
  ``[window_min, window_max]``), as leelaz-ninenine's trainpipe trained on the
  newest 20% of chunks.
- **test split**: a chunk is a *test* chunk when the CRC of its file name falls in
  the lowest 10%: the split is by game file (positions of one game never sit on
  both sides) and stable across generations (a test chunk stays one forever). Small
  windows top the test set up to :data:`MIN_TEST_CHUNKS` chunks (the next-lowest CRCs).
- **down-sampling**: keep one position in ``downsample`` (Leela Zero keeps 1 in
  16) so a window of many games fits in memory and one batch mixes many games.
  ``0`` = automatic: keep everything in small windows, thin big ones to about
  :data:`AUTO_KEEP` positions (at most 1 in 16).
- **bad chunk**: a chunk file that cannot be read (truncated by a full disk, damaged
  by a crash elsewhere). It is skipped with a warning naming it and counted in the
  window's summary; when more than ``max_bad_share`` of the window's files are bad
  the data itself is suspect and training stops with an error instead.

The round that learns from the window is :mod:`zero9.learn.training.train`; its batches and
losses are :mod:`zero9.learn.training.losses`.
"""

from __future__ import annotations

import math
import os
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from zero9.learn.rundir import RECORD_NAME, sorted_chunk_files
from zero9.nn import chunks
from zero9.nn.chunks import BAD_CHUNK_ERRORS, ChunkData, warn_bad_chunk
from zero9.settings import TrainOptions
from zero9.util.interrupts import check_stop

AUTO_KEEP = 250_000  # positions held in memory at most when --downsample is automatic
TEST_SHARE = 10  # percent of chunks (by file-name CRC) kept for testing
MIN_TEST_CHUNKS = 4  # ... but at least this many (at most a quarter of the window)


def read_chunk(path: str | os.PathLike, game: Any) -> ChunkData:
    """All positions of one chunk file (zero9 npz or Leela Zero text chunk) as one ChunkData.

    The formats belong to :mod:`zero9.nn.chunks`; this only adapts its output to arrays.
    Corrupt files raise ValueError naming the file.
    """

    path = Path(path)
    try:
        data = chunks.read_chunk(path, game)
    except ValueError:
        raise
    except Exception as e:  # zlib/zip/EOF errors from a damaged file
        raise ValueError(f"corrupt training chunk {path}: {e}") from e
    planes = np.asarray(data["planes"])
    if planes.dtype != np.uint8 and np.all((planes == 0) | (planes == 1)):
        planes = planes.astype(np.uint8)  # binary planes: 4x less memory
    own = data.ownership
    return ChunkData(
        planes=planes,
        to_play=data.to_play,
        policy=np.asarray(data.policy, dtype=np.float32),
        value=np.asarray(data.value, dtype=np.float32),
        ownership=None if own is None else np.asarray(own, dtype=np.int8),
        game=data.game,
        sources=[str(path)],
    )


def positions_in(path: Path, game: Any) -> int:
    """Positions in a chunk: from the record name when it says, else by reading it."""
    m = RECORD_NAME.search(path.name)
    if m:
        return int(m.group(1))
    return len(read_chunk(path, game))


def _test_key(path: Path) -> int:
    return zlib.crc32(path.name.encode()) % 100


def is_test_chunk(path: Path) -> bool:
    return _test_key(path) < TEST_SHARE


def held_out_chunks(window: list[Path]) -> set[Path]:
    """The window's test chunks: CRC-chosen, topped up to a few so tiny runs get a usable test loss.

    The top-up takes the chunks with the next-lowest CRC keys, so it is stable too.
    """
    chosen = {f for f in window if is_test_chunk(f)}
    want = min(MIN_TEST_CHUNKS, len(window) // 4)
    if len(chosen) < want:
        chosen.update(sorted(window, key=lambda f: (_test_key(f), f.name))[:want])
    return chosen


def select_window(files: list[Path], game: Any, opts: TrainOptions,
                  bad: dict[Path, str] | None = None) -> tuple[list[Path], int, int]:
    """The newest files holding the window: (files oldest first, window positions, total positions).

    A file whose size can only be learnt by reading it and that cannot be read goes into
    ``bad`` (path -> reason) and out of the window.
    """
    sized = []  # (file, positions) of the readable files
    for f in files:
        try:
            sized.append((f, positions_in(f, game)))
        except BAD_CHUNK_ERRORS as e:
            _skip_chunk(f, e, bad)
    files, counts = [f for f, _ in sized], [n for _, n in sized]
    total = sum(counts)
    want = min(max(int(total * opts.window), opts.window_min), opts.window_max)
    chosen, have = [], 0
    for f, n in zip(reversed(files), reversed(counts), strict=True):
        if have >= want:
            break
        chosen.append(f)
        have += n
    return list(reversed(chosen)), have, total


def downsample_factor(opts: TrainOptions, window_positions: int) -> int:
    if opts.downsample > 0:
        return opts.downsample
    return int(min(16, max(1, math.ceil(window_positions / AUTO_KEEP))))


class ChunkCache:
    """Chunks already read, by path, so that a loop's next round reads only its new games.

    A window slides by one round's games while most of it stays: ``autotrain`` keeps one
    cache for the run, and each round reads the new files and forgets those that left the
    window. Chunk files are written once and never change, so a path names its contents.
    It holds the window un-thinned: about 2 KB a Go position (1 GB at ``--window-max 500000``),
    0.7 KB a 9x9 Gomoku one.
    """

    def __init__(self) -> None:
        self._samples: dict[Path, ChunkData] = {}

    def read(self, path: Path, game: Any) -> ChunkData:
        if path not in self._samples:
            self._samples[path] = read_chunk(path, game)
        return self._samples[path]

    def keep_only(self, paths: list[Path]) -> None:
        wanted = set(paths)
        for path in [p for p in self._samples if p not in wanted]:
            del self._samples[path]

    def __len__(self) -> int:
        return len(self._samples)

    def __contains__(self, path: Path) -> bool:
        return path in self._samples


def load_window(data_paths: list[Path], game: Any, opts: TrainOptions,
                rng: np.random.Generator,
                cache: ChunkCache | None = None) -> tuple[ChunkData, ChunkData, dict]:
    """Read the window, down-sample it and split it by chunk into (train, test, info).

    With a ``cache`` (see :class:`ChunkCache`) the chunks read before are not read again.
    """
    files = []
    for p in data_paths:
        files.extend(sorted_chunk_files(p))
    if not files:
        raise ValueError(f"no training chunks (.npz or .gz) under {', '.join(map(str, data_paths))}")
    bad: dict[Path, str] = {}
    window, window_positions, total = select_window(files, game, opts, bad)
    keep_one_in = downsample_factor(opts, window_positions)
    train_parts, test_parts = [], []
    testing = held_out_chunks(window)
    if cache is None:
        cache = ChunkCache()  # one round's: read each chunk once
    cache.keep_only(window)
    for f in window:
        check_stop()
        try:
            s = cache.read(f, game)
        except BAD_CHUNK_ERRORS as e:
            _skip_chunk(f, e, bad)
            continue
        if keep_one_in > 1:
            s = s.take(np.nonzero(rng.random(len(s)) < 1.0 / keep_one_in)[0])
        if len(s):
            (test_parts if f in testing else train_parts).append(s)
    check_bad_share(bad, len(window) + len(set(bad) - set(window)), opts)
    if not test_parts and len(train_parts) > 1:
        test_parts.append(train_parts.pop())  # tiny windows: still test on one held-out game
    if not train_parts:
        raise ValueError(f"the training window ({len(window)} chunks) left no training positions")
    info = {
        "chunks": len(window) - len(set(bad) & set(window)),
        "window_positions": window_positions,
        "total_positions": total,
        "downsample": keep_one_in,
        "skipped": sorted(map(str, bad)),
    }
    test = ChunkData.concatenate(test_parts) if test_parts else None
    return ChunkData.concatenate(train_parts), test, info


def _skip_chunk(path: Path, error: BaseException, bad: dict[Path, str] | None) -> None:
    if bad is None:
        raise error
    warn_bad_chunk(path, error)
    bad[path] = str(error)


def check_bad_share(bad: dict[Path, str], examined: int, opts: TrainOptions) -> None:
    """ValueError when more than ``opts.max_bad_share`` of the ``examined`` chunk files were unreadable."""
    if bad and len(bad) > opts.max_bad_share * max(1, examined):
        first, reason = next(iter(bad.items()))
        raise ValueError(f"{len(bad)} of {examined} training chunk files are unreadable (more than "
                         f"{opts.max_bad_share:.0%}; the data looks damaged, e.g. {first}: {reason}); "
                         f"move the bad files away or raise --max-bad-share")
