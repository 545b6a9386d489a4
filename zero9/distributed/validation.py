"""Checks every upload passes before the server keeps any of it.

Vocabulary:

- **Rejected**: the one error an upload check raises; ``status`` is the HTTP status (400 for a
  bad upload, 403 for a wrong key, 409 for a replay, 413 for too large) and ``reason`` a short
  sentence the client is told and the server logs.
- **bounded gunzip**: decompression that stops at a size limit, so a gzip bomb (a small file
  that inflates to gigabytes) costs no more memory than the limit.
- **replay**: the SGF's moves played on the server's own rules from the empty board; an illegal
  move, another board size or komi, a result that disagrees with the moves, ``movescount`` or
  ``winnercolor`` are refused.
- **shape** (before parsing): a server's game is one line of moves, so an SGF with a variation,
  more nodes than a limit, more ``[`` than a few per node or a value left open is refused by
  counting, in C-speed byte operations linear in the bytes, before the parser (whose cost grows
  with the variations and the values, and with the square of unclosed ones) ever sees it.
- **game digest**: what makes two uploads the same game, whoever sends them under whatever
  seed: sha256 of the rules (``game.to_dict()``) and the move sequence, taken under each of the
  board's 8 symmetries (a game turned or mirrored is the same game to the trainer, which
  augments by them), the smallest of the 8. The server keeps one row per digest and refuses a
  second upload of it (409), so a game counts once, for whoever sent it first.
- **agreement** (self-play): the training chunk holds one position per move, and each
  position's stored planes, side to move and outcome are what the replayed game says.
- **sane policies**: each position's policy is a probability distribution (no negative entry,
  sums to 1) over the moves that are legal there as far as the planes show (no mass on an
  occupied point), and the move the game played has some mass (the search visited it: Leela
  Zero's policies are visit shares, and a move is chosen among the visited ones).

Nothing here touches the disk or the database: the server calls these first, and writes only
what passed.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from dataclasses import dataclass

import numpy as np

from zero9.games import BLACK, WHITE, Game, IllegalMove, Position
from zero9.games.sgf import SgfError, parse_sgf
from zero9.nn.chunks import LZ_STORED_PLANES, ChunkData, parse_lz_chunk
from zero9.nn.features import point_maps
from zero9.nn.planes_fast import game_stone_planes

COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
POLICY_TOLERANCE = 1e-3


class Rejected(Exception):
    """An upload the server refuses: ``status`` (HTTP 4xx) and ``reason``."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass
class ReplayedGame:
    """An SGF that replayed legally: the positions before each move and the final one."""

    positions: list[Position]  # position before move i
    actions: list[int]  # move i
    final: Position
    winner: int
    resigned: bool
    resigned_at: Position | None = None  # where the side to move resigned (None: no resignation)


def gunzip_limited(data: bytes, limit: int, what: str) -> bytes:
    """``data`` gunzipped, refusing corrupt data and output over ``limit`` bytes (a gzip bomb)."""
    decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    try:
        out = decoder.decompress(data, limit)
        if decoder.unconsumed_tail:
            raise Rejected(f"{what} inflates to more than {limit} bytes", 413)
        out += decoder.flush()
    except zlib.error as e:
        raise Rejected(f"{what} is not valid gzip data ({e})") from None
    if not decoder.eof:
        raise Rejected(f"{what} is truncated gzip data")
    if len(out) > limit:
        raise Rejected(f"{what} inflates to more than {limit} bytes", 413)
    return out


def winner_colour(text: str) -> int:
    """``'black'`` / ``'white'`` (autogtp's ``winnercolor``) as a colour."""
    for colour, name in COLOUR_NAMES.items():
        if text.strip().lower() == name:
            return colour
    raise Rejected(f"winnercolor {text[:20]!r} is neither black nor white")


# A property value: ``[``, then anything with backslash escapes, then ``]`` or the end of the data.
# Possessive (``*+``, ``++``) and total (it matches from every ``[``: an unterminated value runs to the
# end), so the scan is one pass over the bytes: a failed match that the engine would retry from the
# next ``[`` made 50,000 unclosed ``[`` cost 36 s (quadratic).
SGF_VALUE = re.compile(rb"\[(?:[^\]\\]++|\\.?)*+(\]|\Z)", re.DOTALL)
VALUES_PER_NODE = 4  # '[' per node: a move node holds a move and rarely more (the root: the game's)
VALUE_BYTES = 64 << 10  # bytes inside all property values together (the parser's cost per byte of
# value text is high: escapes and line breaks ~2 us each, 2 s for 1 MiB of them)


def check_sgf_shape(sgf: bytes, max_nodes: int) -> None:
    """Rejected unless ``sgf`` is one game tree without variations, with at most ``max_nodes`` nodes and
    ``VALUES_PER_NODE * max_nodes`` bytes ``[`` (property values open with one), every value closed,
    and at most :data:`VALUE_BYTES` bytes of value text.
    Linear in the bytes: the ``[`` are counted first (so the scan below replaces a bounded number of
    values), then the values are cut out in one pass (:data:`SGF_VALUE`) and the rest counted."""
    brackets = sgf.count(b"[")
    if brackets > VALUES_PER_NODE * max_nodes:
        raise Rejected(f"the SGF has {brackets} '[' (property values); this server takes at most "
                       f"{VALUES_PER_NODE * max_nodes}", 413)
    bare = SGF_VALUE.sub(rb"[\1", sgf)  # each value -> "[]", an unclosed one (the last) -> "["
    if bare.endswith(b"["):
        raise Rejected("the SGF has a property value without its closing ']'")
    text = len(sgf) - len(bare)  # what the values held
    if text > VALUE_BYTES:
        raise Rejected(f"the SGF has {text} bytes in property values; this server takes at most "
                       f"{VALUE_BYTES}", 413)
    trees = bare.count(b"(")
    if trees != 1:
        raise Rejected(f"the SGF has {trees} game trees or variations; a server game is one line of moves")
    nodes = bare.count(b";")
    if nodes > max_nodes:
        raise Rejected(f"the SGF has {nodes} nodes; this server takes at most {max_nodes}", 413)


def replay_sgf(game: Game, sgf_bytes: bytes, movescount: int, winner: int) -> ReplayedGame:
    """Replay an SGF under ``game``'s rules and check it against the form fields (see module doc)."""
    try:
        record = parse_sgf(sgf_bytes)
    except SgfError as e:
        raise Rejected(f"bad SGF: {e}") from None
    if record.game.to_dict() != game.to_dict():
        raise Rejected(f"the SGF is for {record.game.to_dict()}, this server plays {game.to_dict()}")
    if record.setup:
        raise Rejected("the SGF has setup stones; games start from the empty board")
    position, positions, actions = game.new_position(), [], []
    for number, (colour, action) in enumerate(record.moves, start=1):
        if colour != position.to_play:
            raise Rejected(f"move {number} is by the wrong colour")
        try:
            after = position.play(action)
        except IllegalMove as e:
            raise Rejected(f"move {number} is illegal: {e}") from None
        positions.append(position)
        actions.append(action)
        position = after
    resigned = "+r" in record.result.lower()  # 'B+R', 'W+Resign'
    final = position
    if resigned:
        if position.is_terminal():
            raise Rejected("the SGF says resign but the game had already ended")
        final = position.resign()
    elif not position.is_terminal():
        final = position
        while game.pass_action is not None and not final.is_terminal():
            final = final.play(game.pass_action)  # a game stopped at a move cap is scored as it stands
    actual = final.winner()
    if actual != winner:
        raise Rejected(f"winnercolor is {COLOUR_NAMES.get(winner)} but the moves give "
                       f"{COLOUR_NAMES.get(actual, 'a draw')}")
    if not record.result[:1].upper() == {BLACK: "B", WHITE: "W"}[winner]:
        raise Rejected(f"the SGF result {record.result[:20]!r} disagrees with winnercolor")
    played = len(record.moves)
    allowed = {played, played + int(resigned)}  # autogtp counts a resignation as a move
    cap = getattr(game, "move_cap", 0)
    if cap and not resigned and played >= cap:
        allowed |= {played + 1, played + 2}  # the engine's passes after the cap end autogtp's game
    if movescount not in allowed:
        raise Rejected(f"movescount {movescount} but the SGF has {played} moves")
    return ReplayedGame(positions, actions, final, actual, resigned, position if resigned else None)


def game_digest(game: Game, actions: list[int]) -> str:
    """The game's digest (see the module docstring): the same for the same moves under any of the
    board's symmetries, different for any other move sequence or rules. Go and Gomoku alike: a point
    moves with the board, a pass (Go's last action) stays a pass."""
    rules = json.dumps(game.to_dict(), sort_keys=True).encode()
    moves = np.asarray(actions, dtype=np.int64)
    points = game.size * game.size
    on_board = moves < points
    digests = []
    for point_map in point_maps(game.size):
        turned = moves.copy()
        turned[on_board] = point_map[moves[on_board]]
        digests.append(hashlib.sha256(rules + b"|" + turned.astype("<i2").tobytes()).hexdigest())
    return min(digests)


def check_chunk(chunk_text: str, replayed: ReplayedGame) -> ChunkData:
    """Parse a Leela Zero v1 chunk and check it agrees with the replayed game."""
    try:
        data = parse_lz_chunk(chunk_text, "trainingdata")
    except ValueError as e:
        raise Rejected(f"bad training data: {e}") from None
    positions = replayed.positions
    if len(data) != len(positions):
        raise Rejected(f"the training data has {len(data)} positions, the game {len(positions)} moves")
    if data.size != positions[0].game.size:
        raise Rejected(f"the training data is for {data.size}x{data.size}")
    expected = game_stone_planes(positions)
    differs = np.flatnonzero((data.planes[:, :LZ_STORED_PLANES] != expected).any(axis=(1, 2, 3)))
    if differs.size:
        raise Rejected(f"training position {int(differs[0]) + 1} does not match the SGF's board")
    to_play = np.array([p.to_play for p in positions], dtype=np.int8)
    if not np.array_equal(data.to_play, to_play):
        raise Rejected("the training data's side to move disagrees with the SGF")
    outcome = np.where(to_play == replayed.winner, 1.0, -1.0)
    if not np.array_equal(data.value, outcome):
        raise Rejected("the training data's outcomes disagree with the winner")
    check_policies(data, replayed)
    return data


def check_policies(data: ChunkData, replayed: ReplayedGame) -> None:
    """Rejected unless every policy is a distribution over the moves legal as far as the planes show,
    with some mass on the move played (see the module docstring)."""
    policy = data.policy
    number = lambda rows: int(np.flatnonzero(rows)[0]) + 1  # noqa: E731  (the first bad position)
    if (policy < 0).any(axis=1).any():
        raise Rejected(f"training policy {number((policy < 0).any(axis=1))} has a negative entry")
    off = np.abs(policy.sum(axis=1) - 1) > POLICY_TOLERANCE
    if off.any():
        raise Rejected(f"training policy {number(off)} does not sum to 1")
    points = data.size * data.size
    occupied = (data.planes[:, 0] + data.planes[:, LZ_STORED_PLANES // 2]).reshape(len(data), points) > 0
    on_stones = (policy[:, :points] > POLICY_TOLERANCE) & occupied
    if on_stones.any():
        raise Rejected(f"training policy {number(on_stones.any(axis=1))} puts weight on an occupied point")
    played = policy[np.arange(len(data)), np.asarray(replayed.actions, dtype=np.int64)]
    if (played <= 0).any():
        raise Rejected(f"training policy {number(played <= 0)} gives the move played no weight: the "
                       "search never visited it")
