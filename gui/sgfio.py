"""Saving and loading the window's games as SGF, variations included (over :mod:`zero9.games.sgf`).

Vocabulary:

- **record**: what a saved game holds for the window: the game's parameters
  (``game.to_dict()``), the main line's actions, the result string (``''`` while
  unfinished), the players' names, any further root properties (``extra``), the
  **setup** stones (``(colour, point)`` from ``AB``/``AW``: handicap) and the
  **variations**: each other line of the game tree, as its whole list of actions
  from the start (the window's tree, :mod:`gui.history`, is rebuilt from these lines).
  The SGF conventions (``GM``, ``KM``, the private ``ZG`` property for parameters SGF
  lacks) are :mod:`zero9.games.sgf`'s; the variations are written as SGF branches
  ``(;B[..])(;B[..])``, which Sabaki, KaTrain and Lizzie read.

The window's lines alternate colours from the first mover, so a record with moves out
of turn is refused with a message naming the file and the move. Files are read with a
size cap (:data:`MAX_SGF_BYTES`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.history import GameTree, tree_from_lines
from zero9.games import BLACK, WHITE, Game, make_game, sgf
from zero9.util.files import read_regular_file

MAX_SGF_BYTES = 4 << 20  # a game with thousands of variations fits; a wrong file is refused, not read


@dataclass
class Record:
    """A game as the window saves and loads it."""

    game_params: dict[str, Any]
    actions: list[int]
    result: str = ""
    black: str = ""
    white: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    setup: list[tuple[int, int]] = field(default_factory=list)
    variations: list[list[int]] = field(default_factory=list)
    first: int = BLACK  # who moves first (White after handicap stones)
    parsed: Any = None  # the zero9.games.sgf record it was read from (None for a record made here)

    def make_game(self) -> Game:
        return make_game(**self.game_params)

    @property
    def lines(self) -> list[list[int]]:
        return [self.actions, *self.variations]


def save_sgf(path: str | Path, record: Record) -> Path:
    """Write ``record`` as an SGF file (parent folders created) and return the path."""
    game = record.make_game()
    properties = {"PB": record.black, "PW": record.white, **record.extra}
    if record.first == WHITE and "PL" not in properties:
        properties["PL"] = "W"
    head = sgf.write_sgf(game, [], record.result, setup=record.setup, properties=properties)
    root = head.rstrip().removesuffix(")")
    return sgf.save_sgf(path, root + "\n" + _branches(game, _trie(record.lines), record.first) + ")\n")


def _trie(lines: list[list[int]]) -> dict:
    """The lines as nested dicts {action: {...}}, children in the order first met (main line first)."""
    top: dict = {}
    for line in lines:
        node = top
        for action in line:
            node = node.setdefault(action, {})
    return top


def _branches(game: Game, children: dict, colour: int) -> str:
    """SGF for the moves after a node: one child continues the sequence, several become branches."""
    parts = []
    while len(children) == 1:
        (action, children), = children.items()
        parts.append(_node(game, colour, action))
        colour = BLACK + WHITE - colour
    if children:
        parts += [f"({_node(game, colour, a)}{_branches(game, rest, BLACK + WHITE - colour)})"
                  for a, rest in children.items()]
    return "\n".join(parts)


def _node(game: Game, colour: int, action: int) -> str:
    if action == game.pass_action:
        where = ""
    else:
        y, x = divmod(action, game.size)
        where = "abcdefghijklmnopqrstuvwxyz"[x] + "abcdefghijklmnopqrstuvwxyz"[game.size - 1 - y]
    return f";{'B' if colour == BLACK else 'W'}[{where}]"


def load_sgf(path: str | Path) -> Record:
    """An SGF file's main line and variations. ValueError naming the file for what cannot be used."""
    path = Path(path).expanduser()
    data = read_regular_file(path, MAX_SGF_BYTES, "SGF file")
    try:
        parsed = sgf.parse_sgf(data)
    except sgf.SgfError as e:
        raise sgf.SgfError(e.reason, e.detail, path) from None
    game = parsed.game
    first = _first_mover(parsed)
    lines = [parsed.actions]
    if b"(" in data.lstrip()[1:]:  # a nested tree: read its other lines
        lines = _all_lines(path, data, game) or lines
    _check_alternating(path, parsed.moves, first)
    extra = {k: v for k, v in parsed.properties.items() if k not in ("PB", "PW")}
    return Record(game.to_dict(), lines[0], parsed.result, parsed.black, parsed.white, extra,
                  list(parsed.setup), lines[1:], first, parsed)


def open_game(path: str | Path) -> tuple[Game, GameTree, Record]:
    """The game, its tree (setup stones on the root, every variation) and the record of an SGF file.

    ValueError naming the file and what is wrong: the window shows it and ``zero9 play --sgf``
    prints it, so a file that cannot be used never opens as an empty board.
    """
    record = load_sgf(path)
    game = record.make_game()
    try:  # the setup stones placed as zero9.games.sgf places them for review and analysis
        start = sgf.start_position(game, record.setup, record.first)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return game, tree_from_lines(start, record.lines, path), record


def _first_mover(parsed: Any) -> int:
    if parsed.moves:
        return parsed.moves[0][0]
    player = parsed.properties.get("PL", "").strip().upper()
    if player in ("B", "W"):
        return BLACK if player == "B" else WHITE
    return WHITE if parsed.setup and int(parsed.properties.get("HA", "0") or 0) >= 2 else BLACK


def _check_alternating(path: Path, moves: list[tuple[int, int]], first: int) -> None:
    expected = first
    for number, (colour, _) in enumerate(moves, start=1):
        if colour != expected:
            raise ValueError(
                f"{path}: move {number} is by {'BW'[colour - 1]} but {'BW'[expected - 1]} was to play "
                "(the window's games alternate colours)"
            )
        expected = BLACK + WHITE - expected


def _all_lines(path: Path, data: bytes, game: Game) -> list[list[int]]:
    """Every line of the game tree (root to each leaf), the main line first; colours must alternate."""
    from sgfmill import sgf as sgfmill_sgf

    try:
        tree = sgfmill_sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise ValueError(f"{path}: unreadable SGF: {e}") from None
    lines: list[list[int]] = []
    stack: list[tuple[Any, list[int], Any]] = [(tree.get_root(), [], None)]
    while stack:
        node, line, last_colour = stack.pop()
        colour, move = node.get_move()
        if colour is not None:
            if colour == last_colour:
                raise ValueError(f"{path}: a variation has two {colour.upper()} moves in a row at move "
                                 f"{len(line) + 1} (the window's games alternate colours)")
            line = [*line, game.pass_action if move is None else move[0] * game.size + move[1]]
            last_colour = colour
        if len(node) == 0:
            lines.append(line)
        stack.extend((child, line, last_colour) for child in reversed(list(node)))
    return lines
