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
  game is all zeros. :func:`encode` builds them with a plain loop over the history; the
  search's batches read the same planes from bits (:func:`zero9.nn.planes_fast.encode_batch`).

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

import functools
from collections.abc import Sequence

import numpy as np

from zero9.games.game import BLACK, Game, Position

GO_HISTORY = 8
NUM_SYMMETRIES = 8


def num_planes(game: Game) -> int:
    """Input planes per position: 18 for Go, 5 for Gomoku."""
    if game.name == "go":
        return 2 * GO_HISTORY + 2
    if game.name == "gomoku":
        return 5
    raise ValueError(f"no input planes for game {game.name!r}")


def _encode_go(position: Position) -> np.ndarray:
    """Go's 18 planes: walk back through the history, one board at a time."""
    n, me = position.game.size, position.to_play
    x = np.zeros((2 * GO_HISTORY + 2, n * n), dtype=np.float32)
    past: Position | None = position
    for t in range(GO_HISTORY):
        if past is None:
            break  # before the start of the game: zeros
        board = past.board_array()
        x[t] = board == me  # the side to move now, whoever moved then
        x[GO_HISTORY + t] = board == 3 - me
        past = past.parent
    x[2 * GO_HISTORY] = me == BLACK
    x[2 * GO_HISTORY + 1] = me != BLACK
    return x.reshape(-1, n, n)


def _encode_gomoku(position: Position) -> np.ndarray:
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
        return _encode_go(position)
    if name == "gomoku":
        return _encode_gomoku(position)
    raise ValueError(f"no input planes for game {name!r}")


def encode_batch(positions: Sequence[Position], syms: np.ndarray | None = None) -> np.ndarray:
    """The input planes of positions of one game, float32 ``[B, C, N, N]``, each under ``syms[b]``.

    Its fast twin, :func:`zero9.nn.planes_fast.encode_batch`, reads Go's planes from bits (the search
    asks for hundreds per call).
    """
    if not positions:
        raise ValueError("encode_batch needs at least one position")
    syms = np.zeros(len(positions), np.intp) if syms is None else syms
    x = np.stack([encode(p) for p in positions])
    for s in range(1, NUM_SYMMETRIES):
        x[syms == s] = transform_planes(x[syms == s], s)
    return x


@functools.cache
def point_maps(size: int) -> tuple[np.ndarray, ...]:
    """For each symmetry, the point each point of the transformed planes is read from."""
    return tuple(transform_policy(np.arange(size * size), s, size) for s in range(NUM_SYMMETRIES))


@functools.cache
def back_index(sym: int, size: int, actions: int) -> np.ndarray:
    """The index that turns a policy (or ownership) of ``actions`` entries computed under symmetry
    ``sym`` back to the position as it stands: ``p[..., back_index(sym, ...)]`` (one numpy call)."""
    return transform_policy(np.arange(actions), inverse_symmetry(sym), size)


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
