"""Go input planes, fast: the twin of :func:`zero9.nn.features.encode` for hundreds of positions a call.

:mod:`zero9.nn.features` defines the planes with a plain loop over a position's history (read
that first). The search asks for them hundreds of times per net call, so here the same planes
come from bits: ``tests/test_features.py`` holds both equal over random games, under every
symmetry, on both Go boards.

Vocabulary:

- **stone history** (:func:`stone_history`): the 8 boards of planes 0-15 as bytes, newest
  first, each the little-endian bitboard of its side to move's stones, then the other side's:
  the fast board's "recent boards" (:meth:`zero9.games.go.GoPosition.recent_boards`, which each
  position keeps, so a search never packs a board twice); other boards' are packed here.
- **gather** (:func:`encode_go_batch`): the histories of a batch joined and unpacked to bits
  once, and planes 0-15 of every position one ``np.take`` of those bits: plane ``k`` is board
  ``k % 8`` (own stones first on even boards, since every move passes the turn), each point
  read from its source point under the symmetry.
- **a whole game** (:func:`game_stone_planes`): planes 0-15 of every position of one game from
  its start, each board unpacked once instead of 8 times (the server checks every uploaded
  training position against them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

import numpy as np

from zero9.games import BLACK, Game, Position
from zero9.games.go import RECENT_BOARDS
from zero9.nn import features

HISTORY = RECENT_BOARDS  # boards of stones per side in the planes (zero9.nn.features.GO_HISTORY)


class GoStones(Protocol):
    """A Go position as these encoders read it: its stones as two bitboards (bit p = point p), as
    both Go boards (``GoPosition`` and the readable ``go_simple`` one) keep them."""

    @property
    def game(self) -> Game: ...
    @property
    def to_play(self) -> int: ...
    @property
    def parent(self) -> GoStones | None: ...
    @property
    def black(self) -> int: ...
    @property
    def white(self) -> int: ...


def stone_history(position: GoStones) -> bytes:
    """The 8 boards of planes 0-15 as bytes (see the module docstring)."""
    recent = getattr(position, "recent_boards", None)
    if recent is not None:
        return recent()
    nbytes = (position.game.size ** 2 + 7) // 8
    boards: list[bytes] = []
    p: GoStones | None = position
    for _ in range(HISTORY):  # the readable board: walk back, past the start the boards are empty
        if p is None:
            boards.append(bytes(2 * nbytes))
            continue
        own, other = (p.black, p.white) if p.to_play == BLACK else (p.white, p.black)
        boards.append(own.to_bytes(nbytes, "little") + other.to_bytes(nbytes, "little"))
        p = p.parent
    return b"".join(boards)


def encode_batch(positions: Sequence[Position], syms: np.ndarray | None = None) -> np.ndarray:
    """:func:`zero9.nn.features.encode_batch`, the same planes, Go's from bits (:func:`encode_go_batch`)."""
    if not positions or positions[0].game.name != "go":
        return features.encode_batch(positions, syms)
    syms = np.zeros(len(positions), np.intp) if syms is None else syms
    stones = cast(Sequence[GoStones], positions)  # a Go game's positions keep bitboards (GoStones)
    return encode_go_batch(stones, syms, features.point_maps(positions[0].game.size))


def encode_go_batch(positions: Sequence[GoStones], syms: np.ndarray, point_maps: Sequence[np.ndarray]
                    ) -> np.ndarray:
    """The 18 Go planes of ``positions``, float32 ``[B, 18, N, N]``, position ``b`` under ``syms[b]``;
    ``point_maps[s]``: for each point, the point it is read from under symmetry ``s``."""
    n, batch = positions[0].game.size, len(positions)
    boards = np.array([[2 * t + (t % 2 ^ side)] for side in (0, 1) for t in range(HISTORY)])
    raw = b"".join([stone_history(p) for p in positions])
    bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little").reshape(batch, -1)
    x = np.empty((batch, 2 * HISTORY + 2, n * n), dtype=np.float32)
    for s, point_map in enumerate(point_maps):
        if (rows := syms == s).any():
            gather = (boards * (bits.shape[1] // 16) + point_map).ravel()
            x[rows, : 2 * HISTORY] = np.take(bits[rows], gather, axis=1).reshape(-1, 2 * HISTORY, n * n)
    black_to_move = np.array([p.to_play == BLACK for p in positions])[:, None]
    x[:, 2 * HISTORY], x[:, 2 * HISTORY + 1] = black_to_move, ~black_to_move
    return x.reshape(batch, 2 * HISTORY + 2, n, n)


def _bit_planes(bitboards: list[int], nn: int) -> np.ndarray:
    """Bitboards (ints, bit p = point p) -> uint8 array [len, nn] of 0/1."""
    nbytes = (nn + 7) // 8
    raw = b"".join(b.to_bytes(nbytes, "little") for b in bitboards)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
    return bits.reshape(len(bitboards), nbytes * 8)[:, :nn]


def game_stone_planes(positions: Sequence[GoStones]) -> np.ndarray:
    """Planes 0-15 (the stones, now and 7 moves back) of every position of one Go game, uint8
    ``[P, 16, N, N]``: ``encode_batch(positions)[:, :16]``, each board unpacked once.

    ``positions`` must be consecutive from the start (``positions[0]`` has no parent, each next
    one's parent is the one before): then the history of position i is positions i-1, i-2, ...
    """
    if positions[0].parent is not None or any(positions[i].parent is not positions[i - 1]
                                               for i in range(1, len(positions))):
        raise ValueError("game_stone_planes needs the consecutive positions of one game from its start")
    n, count = positions[0].game.size, len(positions)
    boards = _bit_planes([b for p in positions for b in (p.black, p.white)], n * n).reshape(count, 2, n * n)
    boards = np.concatenate([np.zeros((HISTORY - 1, 2, n * n), dtype=np.uint8), boards])  # before the start
    own = np.array([p.to_play != BLACK for p in positions], dtype=np.intp)  # 0: black's stones are own
    rows = np.arange(count)
    planes = np.empty((count, 2 * HISTORY, n * n), dtype=np.uint8)
    for t in range(HISTORY):
        earlier = boards[HISTORY - 1 - t: HISTORY - 1 - t + count]  # row i: the board of position i - t
        planes[:, t] = earlier[rows, own]
        planes[:, HISTORY + t] = earlier[rows, 1 - own]
    return planes.reshape(count, 2 * HISTORY, n, n)
