"""Saving and loading the window's games as SGF, through sgfmill.

Vocabulary:

- **record**: what a saved game holds for the window: the game's parameters
  (``game.to_dict()``), the list of actions from the empty board, the result
  string (``''`` while unfinished) and the players' names. :func:`load_sgf` returns
  a :class:`Record`; :func:`save_sgf` writes one.
- SGF ``GM[1]`` is Go and ``GM[4]`` Gomoku. SGF points are (row, column) with
  row 0 at the bottom in sgfmill, so the action is ``row*size + column`` as in
  ``zero9/game.py``; a Go pass is an empty move (``B[]``, or ``tt`` on small boards).
- zero9's own parameters that SGF has no property for (Gomoku's ``connect`` and
  ``variant``) travel as JSON in a private ``ZG`` property, which other programs
  ignore; a file without it gets the defaults of ``make_game``.

Games with setup stones (handicap ``AB``/``AW``) cannot be continued because a
position is built only by playing moves, so loading refuses them with a message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgfmill import sgf

from zero9.game import BLACK, Game, make_game

SGF_GAME_CODES = {"go": 1, "gomoku": 4}
_CODE_NAMES = {code: name for name, code in SGF_GAME_CODES.items()}


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
    params = dict(record.game_params)
    name, size = params["game"], int(params["size"])
    g = sgf.Sgf_game(size)
    root = g.get_root()
    root.set_raw("GM", str(SGF_GAME_CODES[name]).encode())
    root.set("AP", ("zero9", "gui"))
    if "komi" in params:
        root.set("KM", float(params["komi"]))
    if name == "go":
        root.set("RU", "Tromp-Taylor")
    root.set("ZG", json.dumps(params, sort_keys=True))
    if record.black:
        root.set("PB", record.black)
    if record.white:
        root.set("PW", record.white)
    if record.result:
        root.set("RE", record.result)
    colour = BLACK
    for action in record.actions:
        node = g.extend_main_sequence()
        node.set_move(
            "b" if colour == BLACK else "w", None if action >= size * size else divmod(action, size)
        )
        colour = 3 - colour
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(g.serialise())
    return path


def load_sgf(path: str | Path) -> Record:
    """Read an SGF file's main line. ValueError naming the file for anything the window cannot continue."""
    path = Path(path).expanduser()
    try:
        g = sgf.Sgf_game.from_bytes(path.read_bytes())
    except OSError as e:
        raise ValueError(f"cannot read SGF file {path}: {e.strerror or e}") from e
    except ValueError as e:
        raise ValueError(f"{path} is not a valid SGF file: {e}") from e
    root = g.get_root()
    params = _game_params(root, g.get_size(), path)
    if root.has_property("AB") or root.has_property("AW") or root.has_property("AE"):
        raise ValueError(
            f"{path}: setup stones (handicap AB/AW) are not supported; only games played from "
            "an empty board can be continued"
        )
    size = params["size"]
    pass_action = size * size if params["game"] == "go" else None
    actions: list[int] = []
    expected = "b"
    for number, node in enumerate(g.get_main_sequence()[1:], start=1):
        colour, move = node.get_move()
        if colour is None:
            continue  # a comment-only node
        if node.has_property("AB") or node.has_property("AW"):
            raise ValueError(f"{path}: setup stones in move {number} are not supported")
        if colour != expected:
            raise ValueError(
                f"{path}: move {number} is by {colour.upper()} but {expected.upper()} was to play "
                "(the window's games alternate colours)"
            )
        if move is None:
            if pass_action is None:
                raise ValueError(f"{path}: move {number} is a pass, which {params['game']} does not have")
            actions.append(pass_action)
        else:
            actions.append(move[0] * size + move[1])
        expected = "w" if expected == "b" else "b"
    result = root.get("RE") if root.has_property("RE") else ""
    black = root.get("PB") if root.has_property("PB") else ""
    white = root.get("PW") if root.has_property("PW") else ""
    return Record(params, actions, result, black, white)


def _game_params(root: sgf.Tree_node, size: int, path: Path) -> dict[str, Any]:
    code = int(root.get_raw("GM")) if root.has_property("GM") else 1
    if code not in _CODE_NAMES:
        raise ValueError(f"{path}: SGF game GM[{code}] is neither Go (1) nor Gomoku (4)")
    name = _CODE_NAMES[code]
    params: dict[str, Any] = {}
    if root.has_property("ZG"):
        try:
            params = dict(json.loads(root.get("ZG")))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{path}: the ZG property is not valid JSON: {e}") from e
    params.update(game=name, size=size)
    if name == "go" and root.has_property("KM"):
        params["komi"] = float(root.get("KM"))
    if name != "go":
        params.pop("komi", None)
    return params
