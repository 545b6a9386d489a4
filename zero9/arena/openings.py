"""Opening files: the positions a match starts its games from, for variety against deterministic engines.

Vocabulary:

- **opening**: the moves from the empty board, Black first, as a tuple of actions. A match
  plays opening ``k`` in games ``2k`` and ``2k + 1``, so each player has each side of it
  once (Gomocup's way: an engine that plays the same moves every time still gets varied
  games, and an unbalanced opening favours both players equally).
- **opening file**: UTF-8 text, one opening per line, the moves as GTP vertices separated by
  spaces (``H8 I9 H10``); ``#`` starts a comment, blank lines are skipped. A line may be
  empty of moves only if it says so with ``-`` (the empty board). Bad lines are refused
  with the file, line number and reason; nothing is played from a file that has one.

    openings = read_openings("example-data/openings_gomoku_15x15.txt", make_game("gomoku", 15))
    opening_for_game(openings, 5)  # the moves game 5 starts from: opening 2

- **the same opening**: two openings whose stones are the same under one of the board's 8
  symmetries (:func:`canonical_opening`): a tuning set must share none with a match's set.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from zero9.games import Game, play_moves
from zero9.nn.features import transform_policy
from zero9.util.files import atomic_write_text

EMPTY_OPENING = "-"


def canonical_opening(actions: tuple[int, ...], size: int) -> tuple[int, ...]:
    """The smallest of an opening's 8 symmetric images (as a tuple of board points), to spot repeats."""
    images = []
    for sym in range(8):
        perm = transform_policy(np.arange(size * size), sym, size)  # perm[new point] = old point
        where = np.argsort(perm)  # old point -> new point
        images.append(tuple(int(where[a]) for a in actions))
    return min(images)


def parse_openings(text: str, game: Game, where: str = "openings") -> list[tuple[int, ...]]:
    """The openings in ``text`` (an opening file's contents); ValueError naming ``where`` and the line."""
    openings: list[tuple[int, ...]] = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        place = f"{where}, line {number}"
        if words == [EMPTY_OPENING]:
            openings.append(())
            continue
        try:
            actions = tuple(game.vertex_to_action(word) for word in words)
            position = play_moves(game, list(actions))
        except ValueError as e:  # IllegalMove is a ValueError too
            raise ValueError(f"{place}: {e}") from None
        if position.is_terminal():
            raise ValueError(f"{place}: the game is already over after this opening")
        openings.append(actions)
    if not openings:
        raise ValueError(f"{where}: no openings (one per line, moves as vertices such as H8 I9)")
    return openings


def read_openings(path: str | os.PathLike, game: Game) -> list[tuple[int, ...]]:
    """The openings of an opening file, checked against ``game``'s rules."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read openings file {path}: {e}") from None
    return parse_openings(text, game, where=str(path))


def format_opening(game: Game, actions: tuple[int, ...]) -> str:
    """One line of an opening file."""
    return " ".join(game.action_to_vertex(a) for a in actions) or EMPTY_OPENING


def write_openings(path: str | os.PathLike, game: Game, openings: list[tuple[int, ...]],
                   header: str = "", comments: list[str] | None = None) -> Path:
    """Write an opening file atomically: ``header`` lines as comments, then one opening per line."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for i, actions in enumerate(openings):
        note = f"  # {comments[i]}" if comments else ""
        lines.append(format_opening(game, actions) + note)
    atomic_write_text(path, "\n".join(lines) + "\n")
    return Path(path)


def opening_for_game(openings: list[tuple[int, ...]] | None, index: int) -> tuple[int, ...]:
    """The opening game ``index`` starts from: each opening twice in a row, colours swapped."""
    if not openings:
        return ()
    return openings[(index // 2) % len(openings)]
