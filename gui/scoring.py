"""What the board shows of the score: the territory overlay, and at the end the count as clubs
count it, the dead stones, the winning five. The ``*_of(model)`` functions read a
:class:`gui.model.PlayModel`; the others work on a position.

Vocabulary:

- **ownership** here is **Black's view** (-1..1 per point, +1 = Black's), turned from the
  side-to-move view of :mod:`zero9.search.analysis` by :func:`black_view`.
- **dead stones**: found as GNU Go's ``--score aftermath`` finds them, by playing the finished
  position on (:mod:`zero9.games.aftermath`, the same playout ``final_status_list`` and
  ``final_score`` answer with): the stones that playout captures. The net's ownership cannot
  tell (that module's docstring shows why). Clubs take them off before counting.
- **area count**: :func:`zero9.games.aftermath.area_score`: the board without its dead
  stones counted by area, komi taken; until the aftermath is in, the rules' Tromp-Taylor
  count (every stone alive) is shown. Once it is in, the "Game over" line says the same
  result (:func:`counted_result_of`): one count in the window, as in ``final_score`` and the review.
- **winning five**: in Gomoku, the five (or more) in a row through the last move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zero9.games import BLACK, WHITE, Position
from zero9.games.aftermath import area_score, score_result


def territory_of(model: Any) -> np.ndarray | None:
    """Black's ownership estimate of the position shown, for the overlay; None if off or unknown."""
    if not model.overlays["territory"] or model.game.name != "go":
        return None
    own = model.analysis_at().ownership
    return None if own is None else black_view(own, model.position.to_play)


def dead_stones_of(model: Any) -> list[int]:
    """The dead stones of a Go game that ended by passes, once the aftermath job found them."""
    statuses = model.analysis_at().statuses if model.show_count() else None
    return [] if not statuses else sorted(p for p, s in statuses.items() if s == "dead")


def count_text_of(model: Any) -> str:
    """"clubs' count, 2 dead off: B+1.5" from the aftermath; the Tromp-Taylor areas until then."""
    pos, a = model.position, model.analysis_at()
    result = counted_result_of(model)
    if result is None:
        area = pos.ownership()
        black, white = int((area == BLACK).sum()), int((area == WHITE).sum())
        return f"Tromp-Taylor area: black {black}, white {white}, komi {pos.game.komi:g}"
    dead = sum(s == "dead" for s in a.statuses.values())
    return f"clubs' count, {dead} dead off: {result}"


def counted_result_of(model: Any) -> str | None:
    """'B+1.5': the count with the dead stones off of a Go game ended by passes; None until it is in."""
    pos, a = model.position, model.analysis_at()
    if not model.show_count() or a.statuses is None:
        return None
    game = pos.game
    return score_result(area_score(pos.board_array(), a.statuses, a.final_board, game.size, game.komi))


def winning_line_of(model: Any) -> list[int]:
    return winning_line(model.position) if model.game.name != "go" else []


def black_view(ownership: np.ndarray, to_play: int) -> np.ndarray:
    return ownership if to_play == BLACK else -ownership


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
