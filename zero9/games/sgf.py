"""SGF game records: the one place zero9 writes and reads Smart Game Format files.

Vocabulary:

- **game record**: a :class:`SgfRecord`: the game (rules and parameters), the
  setup stones, the moves, the result and the other root properties. It is what
  ``zero9 match``, self-play, GTP's ``printsgf``/``loadsgf``, the window, ``zero9
  supervised`` and ``zero9 ratings`` write or read; only the main line is kept.
- **move**: a ``(colour, action)`` pair, one SGF node ``;B[..]``/``;W[..]``, with
  the action numbered as in ``zero9/games/game.py``. A Go pass is written ``B[]`` and read
  from ``B[]`` or ``B[tt]`` (boards up to 19x19). Colours need not alternate here;
  callers that need alternation check it.
- **setup stones**: ``(colour, point)`` pairs from the root's ``AB``/``AW`` (Go
  handicap; ``HA``, the number of handicap stones, stays a root property and is written
  back). Setup anywhere else, and ``AE``, cannot be expressed as a position
  built by playing moves, so reading refuses them. :func:`start_position` builds the
  position they make: each stone played as a move, with a pass where the other colour
  is to move (the passes stay in the history, as GTP's ``set_free_handicap`` does).
- **limits**: :func:`read_sgf` reads at most ``MAX_SGF_BYTES``, and any record that is
  not a plain one is counted before sgfmill parses it: at most ``MAX_SGF_NODES`` nodes
  and ``MAX_SGF_VARIATIONS`` game trees (``(``), so a hostile file costs milliseconds.
- **SGF point**: column letter then row letter counted from the *top* (``aa`` is
  the top-left); sgfmill turns it into (row from the bottom, column), so the point
  is ``row * size + column``.
- **root properties** (``properties``): every root property except the ones that
  the game, setup and result own: ``PB``/``PW`` (the players' names), ``GN``,
  ``C`` (self-play puts the net hash and options there as JSON), ``GC``, ``PC``,
  ``RU``, ``AP``, ... as text.

Root conventions (owned by this module, not passed in ``properties``):

- ``GM``: 1 Go, 4 Gomoku (a file without ``GM`` is Go). ``SZ``: the board size.
  ``FF[4]``, ``CA[UTF-8]`` and ``AP[zero9:VERSION]`` are always written.
- ``KM``: Go's komi (read default: the game's default). ``RU[Tromp-Taylor]`` for
  Go, since that is how zero9 scores.
- ``ZG``: zero9's private property: JSON of the game's parameters that SGF has no
  property for (Go's ``move_cap``, Gomoku's ``connect`` and ``variant``). Other
  programs ignore it; a file without it gets ``make_game``'s defaults. ``GM``,
  ``SZ`` and ``KM`` win over ``game``/``size``/``komi`` keys found in ``ZG``.
- ``RE``: the result, GTP style (``B+3.5``, ``W+R``, ``0``, ``?``); not written
  when empty.

sgfmill does the reading (of a **plain record**, one game tree with one move per node, the
moves are read by a regular expression and only the root by sgfmill: see :func:`parse_sgf`);
it is imported inside the readers so that importing this module (and writing SGF, which
needs no parser) works without it.
"""

from __future__ import annotations

import json
import operator
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from zero9 import __version__
from zero9.games import make_game
from zero9.games.game import BLACK, WHITE, Game, Position, line_of_play
from zero9.util.files import atomic_write_text, read_regular_file

SGF_GAME_CODES = {"go": 1, "gomoku": 4}
GAME_NAMES = {code: name for name, code in SGF_GAME_CODES.items()}
OWNED_PROPERTIES = ("GM", "FF", "CA", "SZ", "KM", "ZG", "RE", "AB", "AW", "AE")
_SGF_PARAMS = ("game", "size", "komi")  # the parameters GM, SZ and KM carry
_COLOUR_LETTERS = {BLACK: "B", WHITE: "W"}
MAX_SGF_BYTES = 4 * 1024 * 1024  # a 9x9 game with a review's variations is a few tens of kB
MAX_SGF_NODES = 50_000
MAX_SGF_VARIATIONS = 5_000
_VALUE = re.compile(rb"\[[^\]\\]*(?:\\.[^\]\\]*)*\]")  # a property value [...], escapes included


class SgfError(ValueError):
    """A malformed or unsupported SGF game. ``reason`` is a short key (for counting skipped games)."""

    def __init__(self, reason: str, detail: str = "", source: str | os.PathLike | None = None):
        text = f"{reason}: {detail}" if detail else reason
        super().__init__(f"bad SGF file {source}: {text}" if source is not None else text)
        self.reason = reason
        self.detail = detail
        self.source = source


@dataclass
class SgfRecord:
    """One SGF game's main line; see the module docstring for the vocabulary."""

    game: Game
    setup: list[tuple[int, int]] = field(default_factory=list)
    moves: list[tuple[int, int]] = field(default_factory=list)
    result: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def black(self) -> str:
        return self.properties.get("PB", "")

    @property
    def white(self) -> str:
        return self.properties.get("PW", "")

    @property
    def actions(self) -> list[int]:
        """The moves' actions without their colours."""
        return [action for _, action in self.moves]

    @property
    def handicap(self) -> int:
        """The root's ``HA`` (0 when absent or unreadable): the number of handicap stones."""
        try:
            return max(int(self.properties.get("HA", "0").strip() or 0), 0)
        except ValueError:
            return 0

    def start_position(self) -> Position:
        """The position the game starts from: the setup stones, the first mover to play."""
        return start_position(self.game, self.setup, self.moves[0][0] if self.moves else None)


def start_position(game: Game, setup: Sequence[tuple[int, int]], first: int | None = None) -> Position:
    """The position ``setup`` stones make (see the module docstring), ``first`` (a colour) to play.

    Without setup stones it is the empty board (a pass first if ``first`` is White in Go).
    ValueError names a stone that cannot go there, or a colour order a game without passes cannot make.
    """
    position = game.new_position()
    for number, (colour, point) in enumerate(setup, start=1):
        position = _as_colour(position, colour, f"setup stone {number}")
        if not position.is_legal(point):
            raise ValueError(f"setup stone {number} ({_COLOUR_LETTERS.get(colour, colour)} "
                             f"{game.action_to_vertex(point)}) cannot be placed there")
        position = position.play(point)
    if first is not None:
        position = _as_colour(position, first, "the first move")
    return position


def _as_colour(position: Position, colour: int, what: str) -> Position:
    """``position`` with ``colour`` to play: a pass by the other colour if needed."""
    if colour == position.to_play:
        return position
    if position.game.pass_action is None:
        raise ValueError(f"{what}: {_COLOUR_LETTERS.get(colour, colour)} cannot move now in "
                         f"{position.game.name} (it has no pass to give the turn back)")
    return position.play(position.game.pass_action)


# ----------------------------------------------------------------------------- writing


def moves_from_position(position: Position) -> list[tuple[int, int]]:
    """The moves from the empty board to ``position``, walking its ``parent`` links."""
    line = line_of_play(position)
    # every position after the first came from a move: its last_move is an action
    return [(before.to_play, cast(int, after.last_move))
            for before, after in zip(line, line[1:], strict=False)]


def write_sgf(
    game: Game,
    moves: Sequence[tuple[int, int]] | Sequence[int] | Position,
    result: str = "",
    *,
    setup: Sequence[tuple[int, int]] = (),
    properties: Mapping[str, Any] | None = None,
) -> str:
    """SGF text of one game.

    ``moves`` are ``(colour, action)`` pairs, plain actions (colours alternate from
    Black), or the final position (its history is written). ``setup`` is ``(colour,
    point)`` pairs for the root's AB/AW; ``properties`` are further root properties
    (``PB``, ``PW``, ``GN``, ``C``, ...; values are written as text).
    """
    coloured = _coloured_moves(game, moves)
    # A dict keeps one value per property: given AP or RU replace the defaults, in place.
    root = dict(_game_properties(game))
    root.update(_extra_properties(properties or {}))
    if result:
        root["RE"] = [result]
    for colour, tag in ((BLACK, "AB"), (WHITE, "AW")):
        points = [_sgf_point(_check_point(game, p, f"setup stone {i + 1}"), game.size)
                  for i, (c, p) in enumerate(setup) if c == colour]
        if points:
            root[tag] = points
    nodes = []
    for colour, action in coloured:
        where = "" if action == game.pass_action else _sgf_point(action, game.size)
        nodes.append(f";{_COLOUR_LETTERS[colour]}[{where}]")
    head = "(;" + "".join(key + "".join(f"[{_escape(v)}]" for v in values) for key, values in root.items())
    return head + "\n" + "\n".join(nodes) + ")\n"


def save_sgf(path: str | os.PathLike, text: str) -> Path:
    """Write SGF ``text`` to ``path`` atomically (parent folders created); returns the path."""

    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path


def _game_properties(game: Game) -> list[tuple[str, list[str]]]:
    params = game.to_dict()
    props = [("GM", [str(SGF_GAME_CODES[game.name])]), ("FF", ["4"]), ("CA", ["UTF-8"]),
             ("AP", [f"zero9:{__version__}"]), ("SZ", [str(game.size)])]
    if "komi" in params:
        props.append(("KM", [f"{float(params['komi']):.10g}"]))
    if game.name == "go":
        props.append(("RU", ["Tromp-Taylor"]))
    private = {k: v for k, v in params.items() if k not in _SGF_PARAMS}
    if private:
        props.append(("ZG", [json.dumps(private, sort_keys=True)]))
    return props


def _extra_properties(properties: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    extra = []
    for key, value in properties.items():
        if not (key.isascii() and key.isalpha() and key.isupper()):
            raise ValueError(f"bad SGF property name {key!r}: expected upper-case letters")
        if key in OWNED_PROPERTIES:
            raise ValueError(f"SGF property {key} comes from the game, setup or result, not from properties")
        if value is not None and str(value) != "":
            extra.append((key, [str(value)]))
    return extra


def _coloured_moves(game: Game, moves: Any) -> list[tuple[int, int]]:
    if hasattr(moves, "parent") and hasattr(moves, "play"):
        moves = moves_from_position(moves)
    coloured = []
    for i, move in enumerate(moves):
        colour, action = move if isinstance(move, tuple) else ((BLACK if i % 2 == 0 else WHITE), move)
        colour, action = _integer(colour), _integer(action)
        if colour not in _COLOUR_LETTERS:
            raise ValueError(f"move {i + 1}: bad colour {colour!r}: expected BLACK (1) or WHITE (2)")
        if action is None or not 0 <= action < game.num_actions:
            raise ValueError(f"move {i + 1}: {move!r} is not one of {game.name}'s {game.num_actions} actions")
        coloured.append((colour, action))
    return coloured


def _check_point(game: Game, point: Any, what: str) -> int:
    p = _integer(point)
    if p is None or not 0 <= p < game.size * game.size:
        raise ValueError(f"{what}: point {point!r} is off the {game.size}x{game.size} board")
    return p


def _integer(value: Any) -> int | None:
    """``value`` as a Python int (numpy integers included), or None if it is not an integer."""
    try:
        return operator.index(value)
    except TypeError:
        return None


def _sgf_point(point: int, size: int) -> str:
    y, x = divmod(point, size)
    return chr(ord("a") + x) + chr(ord("a") + size - 1 - y)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


# ----------------------------------------------------------------------------- reading


# A plain game record: one game tree without variations whose nodes after the root each hold
# just one move, ``;B[cf]`` (what zero9, Leela Zero and autogtp write). The tokens are sgfmill's:
# property names of 1 to 64 capitals, values in brackets with backslash escapes, blanks between.
_PLAIN_GAME = re.compile(rb"""
    \s* \( \s* ;
    (?P<root> (?: \s* [A-Z]{1,64} (?: \s* \[ [^\\\]]* (?: \\. [^\\\]]* )* \] )+ )* )
    (?P<moves> (?: \s* ; \s* [BW] \s* \[ [a-z]{0,2} \] )* )
    \s* \)
""", re.VERBOSE | re.DOTALL)
_PLAIN_MOVE = re.compile(rb";\s*([BW])\s*\[([a-z]{0,2})\]")


def parse_sgf(data: str | bytes) -> SgfRecord:
    """The first game in SGF ``data``. :class:`SgfError` (a ValueError) naming what is wrong.

    A plain game record (see ``_PLAIN_GAME``) has its moves read by one regular expression and
    only its root node by sgfmill (a server checks thousands of games a minute); anything else,
    and any plain record that is not simply valid, is read whole by sgfmill, so both ways give
    the same record and every error is sgfmill's reading's.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_SGF_BYTES:
        raise SgfError("too large", f"{len(raw):,} bytes; zero9 reads SGF files up to {MAX_SGF_BYTES:,}")
    record = _parse_plain(raw)
    if record is not None:
        return record
    _check_counts(raw)
    return _parse_whole(raw)


def _check_counts(raw: bytes) -> None:
    """Refuse a record with more nodes or game trees than any game needs, before sgfmill builds them."""
    nodes, trees = raw.count(b";"), raw.count(b"(")
    if nodes <= MAX_SGF_NODES and trees <= MAX_SGF_VARIATIONS:
        return  # within the limits even counting the ones inside values
    bare = _VALUE.sub(b"", raw)  # the structure, without the values (where ';' and '(' are text)
    nodes, trees = bare.count(b";"), bare.count(b"(")
    if nodes > MAX_SGF_NODES:
        raise SgfError("too large", f"{nodes:,} nodes; zero9 reads up to {MAX_SGF_NODES:,}")
    if trees > MAX_SGF_VARIATIONS:
        raise SgfError("too large", f"{trees:,} variations; zero9 reads up to {MAX_SGF_VARIATIONS:,}")


def _parse_plain(raw: bytes) -> SgfRecord | None:
    """The record of a plain, valid game record; None for anything else."""
    plain = _PLAIN_GAME.match(raw)
    if not plain:
        return None
    try:
        tree = _sgfmill_game(b"(;" + plain["root"] + b")")
        game = _read_game(tree.get_root(), tree.get_size())
        moves = _read_plain_moves(plain["moves"], game)
        return None if moves is None else _record(tree, game, moves)
    except ValueError:  # SgfError too: the whole record's reading says what is wrong
        return None


def _parse_whole(raw: bytes) -> SgfRecord:
    """Any game record, read whole by sgfmill: the main line's moves node by node."""
    tree = _sgfmill_game(raw)
    game = _read_game(tree.get_root(), tree.get_size())
    return _record(tree, game, _read_moves(tree, game))


def _sgfmill_game(raw: bytes) -> Any:
    from sgfmill import sgf  # the reader alone needs sgfmill (see the module docstring)

    try:
        return sgf.Sgf_game.from_bytes(raw)
    except ValueError as e:
        raise SgfError("unreadable SGF", str(e)) from None


def _record(tree: Any, game: Game, moves: list[tuple[int, int]]) -> SgfRecord:
    """The record of ``tree``'s root (the game, setup, result and properties) and ``moves``."""
    root = tree.get_root()
    setup = _read_setup(root, game.size)
    result = _text(root, "RE")
    properties = {key: _text(root, key) for key in root.properties() if key not in OWNED_PROPERTIES}
    return SgfRecord(game, setup, moves, result, properties)


def _read_plain_moves(text: bytes, game: Game) -> list[tuple[int, int]] | None:
    """The moves of a plain record's move nodes, read as sgfmill reads them (``B[]`` and, up to
    19x19, ``B[tt]`` pass); None if one is not a point on the board or a pass the game lacks."""
    size, moves = game.size, []
    for colour, value in _PLAIN_MOVE.findall(text):
        if value == b"" or (value == b"tt" and size <= 19):
            if game.pass_action is None:
                return None
            action = game.pass_action
        else:
            if len(value) != 2:
                return None
            column, row = value[0] - 97, size - value[1] + 96  # row 0 is the bottom row
            if not (0 <= column < size and 0 <= row < size):
                return None
            action = row * size + column
        moves.append((BLACK if colour == b"B" else WHITE, action))
    return moves


def read_sgf(path: str | os.PathLike) -> SgfRecord:
    """The first game of an SGF file; ValueError naming the file if it cannot be read or is bad."""
    path = Path(path).expanduser()
    data = read_regular_file(path, MAX_SGF_BYTES, "SGF file")
    try:
        return parse_sgf(data)
    except SgfError as e:
        raise SgfError(e.reason, e.detail, path) from None


def split_collection(data: bytes) -> list[bytes]:
    """The top-level game trees ``(;...)`` of an SGF collection, respecting ``[...]`` values and escapes.

    Splitting before parsing lets a reader skip one bad game and keep the others.
    """
    games, depth, start, i, in_value = [], 0, None, 0, False
    while i < len(data):
        c = data[i:i + 1]
        if in_value:
            if c == b"\\":
                i += 1  # the escaped character cannot end the value
            elif c == b"]":
                in_value = False
        elif c == b"[":
            in_value = True
        elif c == b"(":
            if depth == 0:
                start = i
            depth += 1
        elif c == b")" and depth > 0:
            depth -= 1
            if depth == 0 and start is not None:
                games.append(data[start:i + 1])
                start = None
        i += 1
    return games


BINARY_DATA = "binary data, not SGF text"  # its bracket bytes are no game trees


def collection_problem(data: bytes, games: list[bytes]) -> str | None:
    """Why the bytes of an SGF file, split into ``games`` by :func:`split_collection`, are not all
    readable, or None: binary data, an empty file, no game tree, or a last tree never closed
    (a truncated file: the splitter drops it, so without this it would vanish unnoticed).
    """
    if b"\x00" in data[:65536]:
        return BINARY_DATA
    if not data.strip():
        return "empty file"
    tail = data[data.rindex(games[-1]) + len(games[-1]):] if games else data
    if b"(" in tail:
        after = f" (after {len(games)} whole games)" if games else ""
        return f"truncated: a game tree is never closed{after}"
    if not games:
        return "no SGF game tree '(;...)' in it"
    return None


def _text(node: Any, key: str) -> str:
    """A property as text: sgfmill's value for text-like properties, else the raw value."""
    if not node.has_property(key):
        return ""
    try:
        value = node.get(key)
    except ValueError:
        value = None
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return ":".join(value)  # composed values such as AP[name:version]
    return node.get_raw(key).decode("utf-8", errors="replace")


def _read_game(root: Any, size: int) -> Game:
    try:
        code = int(root.get("GM")) if root.has_property("GM") else 1
    except ValueError as e:
        raise SgfError("unknown game", f"bad GM property: {e}") from None
    if code not in GAME_NAMES:
        raise SgfError("unknown game", f"GM[{code}] is neither Go (1) nor Gomoku (4)")
    name = GAME_NAMES[code]
    params: dict[str, Any] = {}
    if root.has_property("ZG"):
        try:
            params = json.loads(_text(root, "ZG"))
        except ValueError as e:
            raise SgfError("bad game parameters", f"the ZG property is not valid JSON: {e}") from None
        if not isinstance(params, dict):
            raise SgfError("bad game parameters", "the ZG property is not a JSON object")
    params = {k: v for k, v in params.items() if k not in ("game", "size") and (name == "go" or k != "komi")}
    if name == "go" and root.has_property("KM"):
        try:
            params["komi"] = float(root.get("KM"))
        except ValueError as e:
            raise SgfError("bad game parameters", f"bad KM property: {e}") from None
    try:
        return make_game(name, size, **params)
    except (TypeError, ValueError) as e:
        raise SgfError("bad game parameters", f"{name} {size}x{size} with {params}: {e}") from None


def _read_setup(root: Any, size: int) -> list[tuple[int, int]]:
    if root.has_property("AE"):
        raise SgfError("setup stones", "AE (cleared points) is not supported")
    try:
        black, white, _ = root.get_setup_stones()
    except ValueError as e:
        raise SgfError("unreadable SGF", f"bad setup stones: {e}") from None
    return [(colour, row * size + col) for colour, stones in ((BLACK, black), (WHITE, white))
            for row, col in sorted(stones)]


def _read_moves(tree: Any, game: Game) -> list[tuple[int, int]]:
    moves: list[tuple[int, int]] = []
    for number, node in enumerate(tree.get_main_sequence()[1:], start=1):
        if any(node.has_property(p) for p in ("AB", "AW", "AE")):
            raise SgfError("setup stones", f"node {number} has AB/AW/AE; only the root may hold setup stones")
        try:
            colour, move = node.get_move()
        except ValueError:
            where = next((f"{p}[{node.get_raw(p).decode('utf-8', errors='replace')}]" for p in ("B", "W")
                          if node.has_property(p)), "?")
            raise SgfError("unreadable SGF", f"move {len(moves) + 1}: {where} is not a point on the "
                                             f"{game.size}x{game.size} board") from None
        if colour is None:
            continue  # a comment-only node
        if move is None:
            if game.pass_action is None:
                raise SgfError("pass in a game without passes",
                               f"move {len(moves) + 1} is a pass, which {game.name} does not have")
            action = game.pass_action
        else:
            action = move[0] * game.size + move[1]  # sgfmill's row 0 is the bottom row, as our y
        moves.append((BLACK if colour == "b" else WHITE, action))
    return moves
