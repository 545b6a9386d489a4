"""Network input planes and the 8 symmetries of the square board.

Vocabulary:

- **plane**: an ``N x N`` float32 array, one feature per point. Row ``r``, column ``c`` of a
  plane is the point ``r*N + c`` (row 0 is the *bottom* board row, Leela Zero's numbering), so
  a plane reshaped to ``N*N`` indexes points directly.
- **input** (``encode``): ``C`` planes stacked as ``[C, N, N]``, always from the view of the
  side to move.

  Go, C = 18 (Leela Zero's planes exactly): planes 0-7 hold the side to move's stones at
  T = 0, -1, ..., -7 (the current position, then its parents); planes 8-15 the opponent's
  stones at the same times (colours fixed by the *current* side to move); plane 16 is all ones
  if black is to move, plane 17 all ones if white is to move. History before the start of the
  game is all zeros. The 8 boards as bytes: the **stone history** (:func:`stone_history`).

  Gomoku, C = 5: 0 own stones, 1 opponent stones, 2 the last move (one-hot; zeros at the
  start), 3 all ones if black is to move, 4 all ones always (zero padding of the convolutions
  then shows the net where the board edge is; nets without it turn out edge-blind).

- **symmetry**: an int ``0..7`` naming one of the 8 dihedral transforms of the square; 0 is the
  identity. Symmetry ``s`` first transposes the board if ``s & 4``, then turns it a quarter
  turn ``s & 3`` times (``np.rot90``). ``inverse_symmetry(s)`` undoes ``s``.
- **policy**: a vector over actions ``[..., A]``; its first ``N*N`` entries are points (same
  order as a plane) and, when ``A == N*N + 1``, the last is pass, which no symmetry moves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zero9.games import BLACK, Game, Position

GO_HISTORY = 8
NUM_SYMMETRIES = 8


def num_planes(game: Game) -> int:
    """Input planes per position: 18 for Go, 5 for Gomoku."""
    if game.name == "go":
        return 2 * GO_HISTORY + 2
    if game.name == "gomoku":
        return 5
    raise ValueError(f"no input planes for game {game.name!r}")


def _encode_gomoku(position) -> np.ndarray:
    n = position.game.size
    me = position.to_play
    board = position.board_array()
    x = np.zeros((5, n * n), dtype=np.float32)
    x[0] = board == me
    x[1] = board == 3 - me
    if position.last_move is not None:
        x[2, position.last_move] = 1.0
    x[3] = me == BLACK
    x[4] = 1.0
    return x.reshape(5, n, n)


def encode(position: Position) -> np.ndarray:
    """The input planes of one position, float32 ``[C, N, N]`` (see the module docstring)."""
    name = position.game.name
    if name == "go":
        return encode_batch([position])[0]
    if name == "gomoku":
        return _encode_gomoku(position)
    raise ValueError(f"no input planes for game {name!r}")


def encode_batch(positions: Sequence[Position], syms: np.ndarray | None = None) -> np.ndarray:
    """The input planes of positions of one game, float32 ``[B, C, N, N]``, each under ``syms[b]``."""
    if not positions:
        raise ValueError("encode_batch needs at least one position")
    syms = np.zeros(len(positions), np.intp) if syms is None else syms
    if positions[0].game.name == "go":
        return _encode_go(positions, syms)
    x = np.stack([encode(p) for p in positions])
    for s in range(1, NUM_SYMMETRIES):
        x[syms == s] = transform_planes(x[syms == s], s)
    return x


def stone_history(position: Position) -> bytes:
    """Go: the 8 boards of planes 0-15, newest first, each the little-endian bitboards of its side to move,
    then of the other side. A GoPosition keeps it (a slot): a leaf's is its parent's and one more board."""
    todo, p = [], position  # newest first, back to a position that has it (or 8 back)
    while p is not None and len(todo) < GO_HISTORY and getattr(p, "stone_history", None) is None:
        todo.append(p)
        p = p.parent
    nbytes = (position.game.size ** 2 + 7) // 8
    history = p.stone_history if p is not None and len(todo) < GO_HISTORY else bytes(16 * nbytes)
    for p in reversed(todo):
        own, other = (p.black, p.white) if p.to_play == BLACK else (p.white, p.black)
        history = own.to_bytes(nbytes, "little") + other.to_bytes(nbytes, "little") + history[: -2 * nbytes]
        if hasattr(type(p), "stone_history"):  # a slot (an attribute would follow a copy.copy)
            p.stone_history = history
    return history


def _encode_go(positions: Sequence[Position], syms: np.ndarray) -> np.ndarray:
    """Go planes of many positions at once (the search asks for hundreds a call): the stone histories
    joined and unpacked, planes 0-15 of each symmetry's rows one gather of those bits: plane k is board
    k % 8, its own stones first on even boards (every move passes the turn), then each point's source."""
    n, batch = positions[0].game.size, len(positions)
    boards = np.array([[2 * t + (t % 2 ^ side)] for side in (0, 1) for t in range(GO_HISTORY)])
    raw = b"".join([stone_history(p) for p in positions])
    bits = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little").reshape(batch, -1)
    x = np.empty((batch, 2 * GO_HISTORY + 2, n * n), dtype=np.float32)
    for s in range(NUM_SYMMETRIES):
        if (rows := syms == s).any():
            gather = (boards * (bits.shape[1] // 16) + transform_policy(np.arange(n * n), s, n)).ravel()
            x[rows, : 2 * GO_HISTORY] = np.take(bits[rows], gather, axis=1).reshape(-1, 2 * GO_HISTORY, n * n)
    black_to_move = np.array([p.to_play == BLACK for p in positions])[:, None]
    x[:, 2 * GO_HISTORY], x[:, 2 * GO_HISTORY + 1] = black_to_move, ~black_to_move
    return x.reshape(batch, 2 * GO_HISTORY + 2, n, n)


def _check_symmetry(sym: int) -> int:
    if isinstance(sym, bool) or not isinstance(sym, (int, np.integer)) or not 0 <= sym < NUM_SYMMETRIES:
        raise ValueError(f"bad symmetry {sym!r}: expected an int from 0 to 7")
    return int(sym)


def inverse_symmetry(sym: int) -> int:
    """The symmetry that undoes ``sym``: transposes are their own inverse, turns go back."""
    sym = _check_symmetry(sym)
    return sym if sym & 4 else (4 - sym) % 4


def transform_planes(x: np.ndarray, sym: int) -> np.ndarray:
    """Apply symmetry ``sym`` to the last two (square) axes of ``x``; returns a new array."""
    sym = _check_symmetry(sym)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"transform_planes needs [..., N, N] planes, got shape {x.shape}")
    if sym & 4:
        x = np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(np.rot90(x, k=sym & 3, axes=(-2, -1)))


def transform_policy(p: np.ndarray, sym: int, size: int) -> np.ndarray:
    """Apply symmetry ``sym`` to policy vectors ``[..., A]`` (A = size*size, or +1 with pass last)."""
    nn = size * size
    a = p.shape[-1]
    if a not in (nn, nn + 1):
        raise ValueError(f"policy of length {a} does not fit a {size}x{size} board "
                         f"(expected {nn} or {nn + 1})")
    points = transform_planes(p[..., :nn].reshape(*p.shape[:-1], size, size), sym).reshape(*p.shape[:-1], nn)
    if a == nn:
        return points
    return np.concatenate([points, p[..., nn:]], axis=-1)
