"""``zero9 supervised``: SGF games -> training chunks, as Leela Zero's ``dump_supervised``.

Vocabulary:

- **collection**: an SGF file may hold one game or many (``(;...)(;...)``, as the
  game archives Leela Zero's ``dump_supervised`` reads); folders are searched
  recursively for ``*.sgf``. Each file is read whole, so only a regular file of at most
  :data:`MAX_COLLECTION_BYTES`: a path named on the command line that is absent, no
  regular file (a pipe would block, ``/dev/zero`` never ends) or larger is refused at
  once, one line naming it (``zero9 supervised`` exits 2); such a file found in a folder
  is an *unreadable file*.
- **sample**: every move of a kept game becomes one position: the planes before
  the move, a one-hot policy on the move played (the human's choice stands in for
  the search's visits), and the game result from the side to move's view.
- **skipped game**: one of the wrong game or size, without a usable result
  (``RE`` missing, ``?``, ``Void``, a time-out without winner...), with setup stones
  (handicap ``AB``/``AW``: the rules' positions start empty), with moves out of
  turn, or with an illegal move. Each reason is counted and reported.
- **unreadable file**: one that cannot be read, is no regular file or too large, is binary,
  empty or truncated (a game
  tree never closed), or holds a game tree the SGF parser rejects. Each is listed with
  its reason, and the command exits 1 when there was any, unless ``--skip-bad`` (the
  chunks of the readable games are written either way).
- **output**: Go games become Leela Zero text chunks (``.gz``, the format
  ``zero9 train`` and Leela Zero's own tools read), which cannot hold draws: a Go
  game without a winner is skipped as ``draw`` unless ``--npz`` asks for zero9's npz
  shards. Gomoku always writes npz shards. ``--games-per-chunk`` games per file;
  files are named in input order so the trainer's "newest" window follows it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from zero9.games import BLACK, EMPTY, WHITE, Game, IllegalMove
from zero9.games.sgf import BINARY_DATA, SgfError, collection_problem, parse_sgf, split_collection
from zero9.nn import planes_fast
from zero9.nn.chunks import ChunkData, write_lz_chunk, write_npz_shard
from zero9.util.files import check_regular_file, read_regular_file

RESULT = re.compile(r"^\s*([BW])\s*\+", re.IGNORECASE)
DRAW_RESULTS = {"0", "draw", "jigo", "d"}
MAX_COLLECTION_BYTES = 256 << 20  # an SGF file read whole: a collection of over 100,000 9x9 games


def format_report(report: dict[str, Any]) -> str:
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(report["skipped"].items())) or "none"
    return (f"{report['games']} games, {report['positions']} positions in {report['chunks']} chunk files "
            f"under {report['out']}; skipped: {skipped}; unreadable files: {unreadable_files(report)}")


def unreadable_files(report: dict[str, Any]) -> int:
    return len({path for path, _ in report["unreadable"]})


def sgf_files(paths: list[str | os.PathLike]) -> list[Path]:
    """The SGF files under ``paths``: each file named (ValueError naming it unless it is a regular
    file of at most :data:`MAX_COLLECTION_BYTES`), and every ``*.sgf`` in each folder named,
    whatever it is (one that is no regular file is listed as unreadable, not skipped unsaid)."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(f for f in p.rglob("*") if f.suffix.lower() == ".sgf" and not f.is_dir()))
        else:
            found.append(check_regular_file(p, MAX_COLLECTION_BYTES, "SGF file"))
    return found


def parse_result(text: str | None) -> int | None:
    """RE text -> BLACK, WHITE, EMPTY (draw), or None when there is no usable result."""
    if not text:
        return None
    m = RESULT.match(text)
    if m:
        return BLACK if m.group(1).upper() == "B" else WHITE
    if text.strip().lower() in DRAW_RESULTS:
        return EMPTY
    return None


def game_positions(sgf_bytes: bytes, game: Game) -> tuple[list[Any], list[int], int] | str:
    """(positions before each move, actions, winner) of one SGF game, or the reason to skip it."""

    try:
        record = parse_sgf(sgf_bytes)
    except SgfError as e:
        if e.reason == "unknown game":
            return "wrong game"
        return f"unreadable SGF ({e.detail})" if e.reason == "unreadable SGF" else e.reason
    if record.game.name != game.name:
        return "wrong game"
    if record.game.size != game.size:
        return "wrong size"
    winner = parse_result(record.result)
    if winner is None:
        return "no result"
    if record.setup:
        return "setup stones"
    position = game.new_position()
    positions, actions = [], []
    for colour, action in record.moves:
        if colour != position.to_play:
            return "moves out of turn"
        if position.is_terminal():
            return "moves after the end"
        try:
            nxt = position.play(action)
        except IllegalMove:
            return "illegal move"
        positions.append(position)
        actions.append(action)
        position = nxt
    if not positions:
        return "no moves"
    return positions, actions, winner


def game_chunk(positions: list[Any], actions: list[int], winner: int, game: Game):
    planes = planes_fast.encode_batch(positions)
    to_play = np.array([p.to_play for p in positions], dtype=np.int8)
    policy = np.zeros((len(actions), game.num_actions), np.float32)
    policy[np.arange(len(actions)), actions] = 1.0
    value = np.zeros(len(actions), np.float32) if winner == EMPTY else \
        np.where(to_play == winner, 1.0, -1.0).astype(np.float32)
    planes = planes.astype(np.uint8) if np.all((planes == 0) | (planes == 1)) else planes
    return ChunkData(planes, to_play, policy, value, None, game.to_dict(), {"source": "supervised"}, [])


def read_collection(path: Path) -> tuple[list[bytes], str | None]:
    """The game trees of one SGF file and, when some or all of it is unreadable, why."""
    try:
        data = read_regular_file(path, MAX_COLLECTION_BYTES, "SGF file")
    except (OSError, ValueError) as e:  # absent, a pipe, a device, too large: the message says which
        return [], str(e)
    games = split_collection(data)
    problem = collection_problem(data, games)
    return ([] if problem == BINARY_DATA else games), problem


def dump_supervised(paths: list[str | os.PathLike], out: str | os.PathLike, game: Game,
                    games_per_chunk: int = 50, npz: bool = False) -> dict[str, Any]:
    """Convert every game under ``paths``: counts (games, positions, chunks, skipped by reason) and
    ``unreadable``, a list of (file, reason)."""

    if games_per_chunk < 1:
        raise ValueError(f"--games-per-chunk must be >= 1, got {games_per_chunk}")
    files = sgf_files(paths)  # a bad path named refuses the whole command before anything is written
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lz = game.name == "go" and not npz
    skipped: Counter[str] = Counter()
    pending: list = []
    report = {"games": 0, "positions": 0, "chunks": 0, "out": str(out)}

    def flush() -> None:
        if not pending:
            return
        data = ChunkData.concatenate(pending)
        stem = f"supervised-{report['chunks']:06d}-{len(data)}p"
        if lz:
            write_lz_chunk(out / f"{stem}.gz", data)
        else:
            write_npz_shard(out / f"{stem}.npz", data)
        report["chunks"] += 1
        pending.clear()

    unreadable: list[tuple[str, str]] = []
    for path, tree in _games(files, unreadable):
        parsed = game_positions(tree, game)
        if isinstance(parsed, str):
            skipped[parsed] += 1
            if parsed.startswith("unreadable SGF"):
                unreadable.append((str(path), parsed))
            continue
        positions, actions, winner = parsed
        if lz and winner == EMPTY:
            skipped["draw (Leela Zero chunks hold none; use --npz)"] += 1
            continue
        pending.append(game_chunk(positions, actions, winner, game))
        report["games"] += 1
        report["positions"] += len(actions)
        if len(pending) >= games_per_chunk:
            flush()
    flush()
    report["skipped"] = dict(skipped)
    report["unreadable"] = unreadable
    return report


def _games(files: list[Path], unreadable: list[tuple[str, str]]) -> Iterator[tuple[Path, bytes]]:
    """Each game tree of each SGF file; a file's problem (see *unreadable file*) goes into ``unreadable``."""
    for path in files:
        games, problem = read_collection(path)
        if problem:
            unreadable.append((str(path), problem))
        for tree in games:
            yield path, tree
