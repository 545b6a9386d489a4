"""Saving and loading the window's games as SGF: thin wrappers over :mod:`zero9.games.sgf`.

Vocabulary:

- **record**: what a saved game holds for the window: the game's parameters
  (``game.to_dict()``), the list of actions from the empty board, the result
  string (``''`` while unfinished), the players' names and any further root
  properties (``extra``). :func:`load_sgf` returns a :class:`Record`;
  :func:`save_sgf` writes one. The SGF conventions (``GM``, ``KM``, the private
  ``ZG`` property for parameters SGF lacks) are :mod:`zero9.games.sgf`'s.

The window's games alternate colours from an empty board, so loading refuses
setup stones (handicap ``AB``/``AW``: a position is built only by playing moves)
and moves out of turn, with a message naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zero9.games import BLACK, Game, make_game, sgf


@dataclass
class Record:
    """A game as the window saves and loads it."""

    game_params: dict[str, Any]
    actions: list[int]
    result: str = ""
    black: str = ""
    white: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def make_game(self) -> Game:
        return make_game(**self.game_params)


def save_sgf(path: str | Path, record: Record) -> Path:
    """Write ``record`` as an SGF file (parent folders created) and return the path."""
    properties = {"PB": record.black, "PW": record.white, **record.extra}
    text = sgf.write_sgf(record.make_game(), record.actions, record.result, properties=properties)
    return sgf.save_sgf(path, text)


def load_sgf(path: str | Path) -> Record:
    """Read an SGF file's main line. ValueError naming the file for anything the window cannot continue."""
    path = Path(path).expanduser()
    parsed = sgf.read_sgf(path)
    if parsed.setup:
        raise ValueError(
            f"{path}: setup stones (handicap AB/AW) are not supported; only games played from "
            "an empty board can be continued"
        )
    expected = BLACK
    for number, (colour, _) in enumerate(parsed.moves, start=1):
        if colour != expected:
            raise ValueError(
                f"{path}: move {number} is by {'BW'[colour - 1]} but {'BW'[expected - 1]} was to play "
                "(the window's games alternate colours)"
            )
        expected = 3 - expected
    extra = {k: v for k, v in parsed.properties.items() if k not in ("PB", "PW")}
    return Record(parsed.game.to_dict(), parsed.actions, parsed.result, parsed.black, parsed.white, extra)
