"""Text boards for the console: the demo, GTP ``showboard`` and debugging.

Vocabulary: a **board text** is the position drawn top row first, column letters (GTP, no
``I``) on top, row numbers on the left; ``X`` is black, ``O`` white, ``.`` empty, and the last
move is marked by parentheses around it, as Leela Zero and GNU Go draw it. Works for any game
of :mod:`zero9.games.game` (it only reads ``board_array``, ``last_move`` and the game's size).
"""

from __future__ import annotations

from zero9.games.game import COLUMN_LETTERS, Position

STONE_CHARS = ".XO"


def board_to_text(position: Position) -> str:
    """The board as text, top row first; the last move (if a point) is drawn as ``(X)``."""
    size = position.game.size
    board = position.board_array()
    last = position.last_move if position.last_move is not None and position.last_move < size * size else -1
    width = len(str(size))
    lines = [" " * (width + 1) + " ".join(COLUMN_LETTERS[:size])]
    for y in range(size - 1, -1, -1):
        row = []
        for x in range(size):
            p = y * size + x
            left = "(" if p == last else ")" if p - 1 == last and x > 0 else " "
            row.append(left + STONE_CHARS[board[p]])
        tail = ")" if y * size + size - 1 == last else ""
        lines.append(f"{y + 1:>{width}}" + "".join(row) + tail)
    return "\n".join(lines)
