"""What the board shows of the score: the territory overlay, and at the end the count as clubs
count it, the dead stones, the winning five. The ``*_of(model)`` functions read a
:class:`gui.model.PlayModel`; the others work on a board.

Vocabulary:

- **ownership** here is **Black's view** (-1..1 per point, +1 = Black's), turned from the
  side-to-move view of :mod:`zero9.search.analysis` by :func:`black_view`.
- **dead stones**: stones on points the net's ownership of the final board gives to the
  other side with at least :data:`DEAD` confidence. Clubs take them off before counting.
- **area count**: each side's stones plus the empty points its ownership holds (at least
  :data:`OWNED`), dead stones taken off first, and komi; without an ownership estimate the
  rules' Tromp-Taylor count (every stone alive) is shown instead.
- **winning five**: in Gomoku, the five (or more) in a row through the last move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zero9.games import BLACK, EMPTY, WHITE, Position

DEAD = 0.5  # a stone on a point the other side owns at least this much is dead
OWNED = 0.5  # an empty point owned at least this much counts as territory


def territory_of(model: Any) -> np.ndarray | None:
    """Black's ownership estimate of the position shown, for the overlay; None if off or unknown."""
    if not model.overlays["territory"] or model.game.name != "go":
        return None
    own = model.analysis_at().ownership
    return None if own is None else black_view(own, model.position.to_play)


def end_ownership_of(model: Any) -> np.ndarray | None:
    """Black's ownership of the final board: the net's, from the analysis of the last position
    before the closing passes (the same board, still in play); None until one gave it."""
    board = model.position.board_array()
    for index in range(model.cursor, -1, -1):
        pos = model.history[index]
        if not np.array_equal(pos.board_array(), board):
            return None
        own = model.analysis_at(index).ownership
        if own is not None and not pos.is_terminal():
            return black_view(own, pos.to_play)
    return None


def dead_stones_of(model: Any) -> list[int]:
    """Stones the net gives to the other side at the end of a Go game that ended by passes."""
    own = end_ownership_of(model) if model.show_count() else None
    return [] if own is None else dead_stones(model.position.board_array(), own)


def count_text_of(model: Any) -> str:
    return count_text(model.position, end_ownership_of(model))


def winning_line_of(model: Any) -> list[int]:
    return winning_line(model.position) if model.game.name != "go" else []


def black_view(ownership: np.ndarray, to_play: int) -> np.ndarray:
    return ownership if to_play == BLACK else -ownership


def dead_stones(board: np.ndarray, own: np.ndarray) -> list[int]:
    return [p for p in range(len(own))
            if (board[p] == BLACK and own[p] < -DEAD) or (board[p] == WHITE and own[p] > DEAD)]


def count_text(pos: Position, own: np.ndarray | None) -> str:
    """'area B 46 W 35 komi 7.5: B+3.5 (2 dead)', or the Tromp-Taylor areas without an estimate."""
    komi = pos.game.komi
    if own is None:
        area = pos.ownership()
        black, white = int((area == BLACK).sum()), int((area == WHITE).sum())
        return f"Tromp-Taylor area: black {black}, white {white}, komi {komi:g}"
    board = pos.board_array().copy()
    dead = dead_stones(board, own)
    board[dead] = EMPTY
    black = int(((board == BLACK) | ((board == EMPTY) & (own > OWNED))).sum())
    white = int(((board == WHITE) | ((board == EMPTY) & (own < -OWNED))).sum())
    margin = black - white - komi
    off = f" ({len(dead)} dead)" if dead else ""
    return f"area B {black} W {white} komi {komi:g}: {'B' if margin > 0 else 'W'}+{abs(margin):g}{off}"


def winning_line(pos: Position) -> list[int]:
    """The points of the five (or more) in a row through the last move of a finished game; [] if none."""
    if not pos.is_terminal() or pos.last_move is None or pos.last_move >= pos.game.size ** 2:
        return []
    board, n = pos.board_array(), pos.game.size
    colour = board[pos.last_move]
    y0, x0 = divmod(pos.last_move, n)
    for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = [pos.last_move]
        for sign in (1, -1):
            y, x = y0 + sign * dy, x0 + sign * dx
            while 0 <= y < n and 0 <= x < n and board[y * n + x] == colour:
                run.append(y * n + x)
                y, x = y + sign * dy, x + sign * dx
        if len(run) >= 5:
            return sorted(run)
    return []
