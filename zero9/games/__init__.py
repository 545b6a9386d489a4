"""Games: the rules, as instances. ``make_game('go', 9)`` or ``make_game('gomoku', 15)``.

The interface every other layer uses is in :mod:`zero9.games.game` (read its
vocabulary first); this package re-exports it, so ``from zero9.games import
BLACK, Position, make_game`` is all a caller needs. The rule sets are
:mod:`zero9.games.go` (the fast bitboard engine every command plays on),
:mod:`zero9.games.go_simple` (the same rules in plain Python, for reading) and
:mod:`zero9.games.gomoku`; :mod:`zero9.games.sgf` reads and writes game records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zero9.games.game import (
    BLACK,
    COLOUR_NAMES,
    COLUMN_LETTERS,
    EMPTY,
    WHITE,
    Game,
    IllegalMove,
    Position,
    actions_played,
    line_of_play,
    opponent,
    parse_colour,
    play_moves,
    point_to_vertex,
    replay,
    vertex_to_point,
)
from zero9.games.go import Go
from zero9.games.go_simple import SimpleGo
from zero9.games.gomoku import Gomoku

# the bitboard engine, and the readable one
GO_ENGINES: dict[str, Callable[..., Game]] = {"fast": Go, "simple": SimpleGo}


def make_game(game: str = "go", size: int | None = None, **params: Any) -> Game:
    """Build a game by name: ``make_game('go', 9, komi=7.5)``, ``make_game('gomoku', 15, connect=5)``.

    Unknown names raise ValueError. ``size`` defaults to 9 for Go and 15 for Gomoku. Go takes
    ``engine='simple'`` for the readable board of :mod:`zero9.games.go_simple` (default ``'fast'``).
    """
    name = game.strip().lower()
    if name == "go":
        engine = params.pop("engine", "fast")
        if engine not in GO_ENGINES:
            raise ValueError(f"unknown Go engine {engine!r}: expected one of {', '.join(GO_ENGINES)}")
        return GO_ENGINES[engine](size=9 if size is None else size, **params)
    if name == "gomoku":
        return Gomoku(size=15 if size is None else size, **params)
    raise ValueError(f"unknown game {game!r}: expected 'go' or 'gomoku'")


__all__ = [
    "BLACK",
    "EMPTY",
    "WHITE",
    "COLOUR_NAMES",
    "COLUMN_LETTERS",
    "Game",
    "IllegalMove",
    "Position",
    "actions_played",
    "line_of_play",
    "opponent",
    "parse_colour",
    "play_moves",
    "point_to_vertex",
    "replay",
    "vertex_to_point",
    "GO_ENGINES",
    "Go",
    "SimpleGo",
    "Gomoku",
    "make_game",
]
