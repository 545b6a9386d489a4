"""Renju's forbidden moves for black, after the RIF International Rules of Renju.

Vocabulary (the RIF rules' terms; the board is ``bytes`` of colours, point ``y*n + x``):

- **five**: exactly five black stones in a row; black wins with it even if the same
  move also makes a forbidden shape. White wins with five *or more*.
- **overline**: six or more black stones in a row: forbidden for black.
- **four**: a line where one more black stone (at its **completion point**) makes a
  five. A **straight four** has two completion points, one at each end of four stones
  in a row (``.XXXX.``); it counts as one four.
- **three**: a line that can become a straight four by one black stone at a point
  that is not itself forbidden (so a three whose only straight-four point is forbidden
  is no three: this is where the rules recurse).
- **double four** (4x4) / **double three** (3x3): one move that makes two or more
  fours / threes at once (two fours may lie on the same line: ``X.XXX.X``). Both are
  forbidden for black; a four-three is allowed.

:func:`forbidden` answers for one empty point; only the four lines through it are read.
"""

from __future__ import annotations

from zero9.games.game import BLACK, EMPTY

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))  # (dx, dy)
MAX_DEPTH = 4  # recursion for "a three's straight-four point must not be forbidden"


def _line(n: int, point: int, d: tuple[int, int], reach: int) -> list[int]:
    """Points on the line through ``point`` in direction ``d``, from -reach to +reach, on the board."""
    y0, x0 = divmod(point, n)
    out = []
    for k in range(-reach, reach + 1):
        x, y = x0 + k * d[0], y0 + k * d[1]
        if 0 <= x < n and 0 <= y < n:
            out.append(y * n + x)
    return out


def _run(board, n: int, point: int, d: tuple[int, int]) -> int:
    """Length of the black run through ``point`` (which holds a black stone) along ``d``."""
    y0, x0 = divmod(point, n)
    run = 1
    for sign in (1, -1):
        x, y = x0 + sign * d[0], y0 + sign * d[1]
        while 0 <= x < n and 0 <= y < n and board[y * n + x] == BLACK:
            run += 1
            x, y = x + sign * d[0], y + sign * d[1]
    return run


def _completions(board: bytearray, n: int, point: int, d: tuple[int, int]) -> list[int]:
    """Empty points on ``point``'s line where black makes an exact five that includes ``point``."""
    found = []
    for q in _line(n, point, d, 4):
        if board[q] != EMPTY:
            continue
        board[q] = BLACK
        if _run(board, n, q, d) == 5 and _run_includes(board, n, q, d, point):
            found.append(q)
        board[q] = EMPTY
    return found


def _run_includes(board, n: int, start: int, d: tuple[int, int], point: int) -> bool:
    """Is ``point`` in the black run through ``start`` along ``d``? (Both on one line.)"""
    y0, x0 = divmod(start, n)
    y1, x1 = divmod(point, n)
    steps = x1 - x0 if d[0] else y1 - y0
    step = 1 if steps > 0 else -1
    for k in range(0, steps + step, step):
        if board[(y0 + k * d[1]) * n + x0 + k * d[0]] != BLACK:
            return False
    return True


def _fours(board: bytearray, n: int, point: int, d: tuple[int, int]) -> int:
    """How many fours ``point`` (black) makes along ``d``: a straight four counts once."""
    points = _completions(board, n, point, d)
    if len(points) == 2 and _straight(n, points, d):
        return 1
    return len(points)


def _straight(n: int, points: list[int], d: tuple[int, int]) -> bool:
    """Two completion points five steps apart: the ends of one run of four (``.XXXX.``)."""
    (ya, xa), (yb, xb) = divmod(points[0], n), divmod(points[1], n)
    return max(abs(xb - xa), abs(yb - ya)) == 5


def _is_three(board: bytearray, n: int, point: int, d: tuple[int, int], depth: int) -> bool:
    """Can one more black stone on this line, at a point not itself forbidden, make a straight four?"""
    for q in _line(n, point, d, 4):
        if board[q] != EMPTY:
            continue
        board[q] = BLACK
        points = _completions(board, n, point, d)
        straight = len(points) == 2 and _straight(n, points, d) and _run_includes(board, n, q, d, point)
        board[q] = EMPTY
        if straight and (depth >= MAX_DEPTH or forbidden(board, n, q, depth + 1) is None):
            return True
    return False


def forbidden(board, n: int, point: int, depth: int = 0) -> str | None:
    """Why black may not play the empty ``point`` ('overline', 'double four', 'double three'), or None."""
    if board[point] != EMPTY or not _crowded(board, n, point):
        return None
    work = bytearray(board)
    work[point] = BLACK
    runs = [_run(work, n, point, d) for d in DIRECTIONS]
    if 5 in runs:
        return None  # a five wins, whatever else the move makes
    if max(runs) > 5:
        return "overline"
    fours = [_fours(work, n, point, d) for d in DIRECTIONS]
    if sum(fours) >= 2:
        return "double four"
    threes = sum(1 for d, f in zip(DIRECTIONS, fours, strict=True)
                 if not f and _is_three(work, n, point, d, depth))
    if threes >= 2:
        return "double three"
    return None


def _crowded(board, n: int, point: int) -> bool:
    """Could ``point`` be forbidden at all? A double four or three needs two lines with two black
    stones each within 4 points; an overline or two fours on one line need four on one line."""
    per_line = [sum(1 for q in _line(n, point, d, 5) if q != point and board[q] == BLACK) for d in DIRECTIONS]
    return max(per_line) >= 4 or sum(1 for c in per_line if c >= 2) >= 2
