"""Self-play records: one finished game on disk, named and written here and nowhere else.

A **record** is written *as soon as its game ends*, atomically: an npz shard
(:mod:`zero9.nn.chunks`) with its recorded positions (full-search moves only), and an SGF
beside it (and, with ``--lz-chunks``, a Leela Zero text chunk). The **stem**
``{time_ns}-w{worker}-{seq}`` (:func:`new_stem`) sorts in creation order; the shard adds
``-{positions}p.npz``, so the trainer knows the position count without opening the file.
The shard goes last and commits the record (:mod:`zero9.learn.rundir`). Go shards always carry
the ownership target (the final position's Tromp-Taylor owners; after a resignation, of the
resigned board), so a net with or without an ownership head can learn from them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from zero9.games import EMPTY
from zero9.games.sgf import save_sgf, write_sgf
from zero9.learn.selfplay.lockstep import GameRecord
from zero9.nn import features, planes_fast
from zero9.nn.chunks import ChunkData, ownership_target, write_lz_chunk, write_npz_shard


def record_chunk(record: GameRecord):
    """The recorded positions of a finished game as a :class:`zero9.nn.chunks.ChunkData`."""

    game = record.game
    moves = [m for m in record.moves if m.recorded]
    size, actions = game.size, game.num_actions
    to_play = np.array([m.position.to_play for m in moves], dtype=np.int8)
    if moves:
        planes = planes_fast.encode_batch([m.position for m in moves])
        policy = np.stack([np.asarray(m.policy, dtype=np.float32) for m in moves])
    else:
        planes = np.zeros((0, features.num_planes(game), size, size), np.float32)
        policy = np.zeros((0, actions), np.float32)
    if record.winner == EMPTY:
        value = np.zeros(len(moves), np.float32)
    else:
        value = np.where(to_play == record.winner, 1.0, -1.0).astype(np.float32)
    ownership = None
    if game.name == "go":
        owners = np.asarray(record.final.ownership())
        ownership = np.stack([ownership_target(owners, int(c)) for c in to_play]) if moves else \
            np.zeros((0, size * size), np.int8)
    return ChunkData(planes.astype(np.uint8) if np.all((planes == 0) | (planes == 1)) else planes,
                     to_play, policy, value, ownership, game.to_dict(), {}, [])


def sgf_text(record: GameRecord, net_hash: str, options: dict[str, Any],
             nets: list[str] | None = None) -> str:
    """The game as SGF with the net hash (and ``nets``, see :func:`write_record`), options and result
    in the root."""

    params = record.game.to_dict()
    info = {"net": net_hash, "game": params, "options": options, "resigned": record.resigned,
            "no_resign": record.no_resign, "would_resign": record.would_resign}
    if nets:
        info["nets"] = nets
    moves = [(m.position.to_play, m.action) for m in record.moves]
    player = f"zero9 {net_hash}"
    return write_sgf(record.game, moves, record.result or "?", properties={
        "PB": player, "PW": player, "GN": f"zero9 self-play {net_hash} #{record.index}",
        "PC": "zero9 self-play", "C": json.dumps(info, sort_keys=True)})


def new_stem(worker: int, seq: int) -> str:
    """The stem of a record's files: ``{time_ns:019d}-w{worker:02d}-{seq:05d}`` (creation order)."""
    return f"{time.time_ns():019d}-w{worker:02d}-{seq:05d}"


def write_record(record: GameRecord, stem: str, chunk_dir: Path, sgf_dir: Path | None, net_hash: str,
                 options: dict[str, Any], lz_dir: Path | None = None, nets: list[str] | None = None) -> Path:
    """Write the SGF, the optional LZ chunk, then the shard of one game; returns the shard's path.

    The shard goes last because it commits the record: the game count is the shards on
    disk, and the files of a game killed before its shard are swept on restart
    (:meth:`zero9.learn.rundir.RunDir.sweep_uncommitted_records`). ``net_hash`` is the net
    the game ended with; ``nets``, every net of the rounds it was in flight in, oldest
    first (a game of a session), goes beside it into the SGF and the shard when there are two or more.
    """

    nets = nets if nets is not None and len(nets) > 1 else None
    data = record_chunk(record)
    if sgf_dir is not None:
        save_sgf(sgf_dir / f"{stem}.sgf", sgf_text(record, net_hash, options, nets))
    if lz_dir is not None and record.game.name == "go" and record.winner != EMPTY and len(data):
        write_lz_chunk(lz_dir / f"{stem}.gz", data)
    path = chunk_dir / f"{stem}-{len(data)}p.npz"
    meta = {"net": net_hash, "result": record.result}
    if nets:
        meta["nets"] = nets
    write_npz_shard(path, data, meta=meta)
    return path



def game_summary(record: GameRecord, path: Path, carried: bool = False) -> dict[str, Any]:
    return {"moves": len(record.moves), "recorded": sum(m.recorded for m in record.moves),
            "result": record.result, "winner": record.winner, "resigned": record.resigned,
            "no_resign": record.no_resign, "false_resign": record.false_resignation, "path": str(path),
            "carried": carried}

