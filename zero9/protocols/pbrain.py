"""``zero9 pbrain``: the Gomocup (piskvork) protocol on stdin/stdout, for Gomoku managers.

Vocabulary:

- **manager**: the program that runs the tournament (piskvork, the Gomocup manager,
  ``zero9 match`` with a ``pbrain:`` player); the **brain** is us.
- **command**: one line from the manager. ``START n``, ``RESTART``, ``BEGIN`` (we
  move first), ``TURN x,y`` (the opponent played; we answer), ``BOARD`` ... ``DONE``
  (a whole position, one ``x,y,who`` line per stone; we answer), ``TAKEBACK x,y``,
  ``INFO key value``, ``ABOUT``, ``END``. Replies are ``OK``, a move ``x,y``, the
  ``ABOUT`` line, ``ERROR message`` for bad input and ``UNKNOWN message`` for an
  unknown command; ``INFO`` gets no reply. Commands are case-insensitive.
- **coordinates**: piskvork's ``x,y`` count from 0, ``x`` the column and ``y`` the row
  from the *top*; zero9 counts rows from the bottom, so point = ``(size-1-y)*size + x``.
  The board then looks the same in the manager and in ``zero9``'s displays.
- **who** in a BOARD line: 1 = our stone, 2 = the opponent's, 3 = a stone of a
  continuous game (treated as the opponent's). The side with more stones, or black
  when equal, moved first; the stones are replayed in the order given, alternating.
- **time** (from INFO, milliseconds): ``timeout_turn`` the limit per move (0 = move
  at once), ``timeout_match`` the limit for the whole game (0 = none), ``time_left``
  what remains of it. The **budget** for a move is the smaller of the turn limit and
  a share of the time left, minus a safety margin; the search's visit cap still holds.
- **rule** (INFO bit mask): 0 = freestyle (five or more win), 1 = exactly five
  (``variant='standard'``), 2 = continuous game (nothing to change), 4 = renju
  (``variant='renju'``: black's forbidden moves, :mod:`zero9.games.renju`); caro (8) is
  not supported and gets an ERROR. A rule change mid-game replays the
  moves under the new rule (or is refused, changing nothing, if they no longer fit).
- **unit**: what the manager sends as one request and answers as one: a command
  line, or a whole ``BOARD`` ... ``DONE`` block. A malformed unit gets exactly one
  ``ERROR`` (a bad BOARD line is remembered and reported at ``DONE``), so the brain
  stays in step, and the position is unchanged. A known command inside a BOARD block
  (the manager gave up on it) drops the block and runs. A ``SWAP2BOARD`` block is a unit too.
- **sizes**: ``START n`` builds the game and asks the net whether it serves it
  (:meth:`zero9.search.player.NetSource.check`): a net with size-independent heads
  (``heads="pooled"``, :mod:`zero9.nn.net`) plays every size 5..25, Gomocup's 20x20 too; a
  fixed-size net only its own, and other sizes get ``ERROR unacceptable size: the net ... is for
  a 15x15 board, not 20x20``; without a net (uniform priors) every size.
- **swap2** (the Gomocup extension, sent between START and BOARD): ``SWAP2BOARD``, 0, 3 or
  5 ``x,y`` lines (stones alternating from black), ``DONE``. With 0 stones we answer three
  (``x,y x,y x,y``): the most balanced of a few random central openings by our search's
  winrate. With 3 or 5 stones white is to move and we choose a colour: ``SWAP`` (we take
  black) when our search gives white less than half, else white's move ``x,y`` (we stay
  white). The third option of 3 stones (placing two more) is never chosen. After SWAP2BOARD
  the manager sends ``BOARD`` with the agreed position, as it does for any opening.

The command line (``zero9 pbrain``) is :mod:`zero9.cli.pbrain`.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, TextIO

from zero9 import __version__
from zero9.games import Game, IllegalMove, Position, make_game, play_moves
from zero9.games.game import actions_played
from zero9.games.gomoku import point_from_xy, xy_from_point
from zero9.settings import PlayConfig

if TYPE_CHECKING:  # annotations only: importing this module loads no search and no torch (the caller does)
    from zero9.search.player import NetSource, SearchPlayer

MIN_SIZE, MAX_SIZE = 5, 25  # zero9.games.gomoku's range; the net decides which it serves (NetSource.check)
SAFETY_S = 0.25  # reply this much before the manager's deadline: pipes, process wake-up
# Only what is known: the project has no web page or e-mail address of its own, so those keys are left out.
ABOUT = f'name="zero9", version="{__version__}", author="zero9 contributors"'
SWAP2_STONES = (0, 3, 5)  # the stone counts a SWAP2BOARD block may hold
SWAP2_CANDIDATES = 6  # random central 3-stone openings judged when we open (0 stones)
SWAP2_RADIUS = 3  # how near the centre those openings lie (Chebyshev distance)


class PbrainError(Exception):
    """Bad input from the manager: becomes an ``ERROR`` line."""


def _parse_xy(text: str, size: int, fields: int = 2) -> list[int]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != fields or not all(p.lstrip("-").isdigit() for p in parts):
        raise PbrainError(f"bad coordinates {text!r}: expected {'x,y' if fields == 2 else 'x,y,who'}")
    values = [int(p) for p in parts]
    try:
        values[0] = point_from_xy(values[0], values[1], size)
    except ValueError as error:
        raise PbrainError(str(error)) from None
    return [values[0]] + values[2:]


class PbrainEngine:
    """The brain's state machine: ``execute(line)`` -> list of reply lines."""

    def __init__(self, source: NetSource, visits: int | None = PlayConfig.visits, seed: int | None = None,
                 log: TextIO | None = None, threats: bool = PlayConfig.threats,
                 threat_reading: str = PlayConfig.threat_reading):
        self.source = source
        self.visits = visits
        self.seed = seed
        self.threats = threats  # Gomoku threat search beside the net's search (zero9/search/threats.py)
        self.threat_reading = threat_reading
        self.log = log
        self.game: Game | None = None
        self.position: Position | None = None
        self.player: SearchPlayer | None = None
        self.variant = "freestyle"
        self.timeout_turn_ms = 30_000  # the manager tells us; this default only guards a silent one
        self.timeout_match_ms = 0
        self.time_left_ms: int | None = None
        self.quit = False
        self._board: list[tuple[int, int]] | None = None  # collecting BOARD lines
        self._board_error: str | None = None  # the first bad line of this BOARD, reported at DONE
        self._swap2: list[int] | None = None  # collecting SWAP2BOARD lines (points, in playing order)
        self.rng = random.Random(seed)

    # -- state -----------------------------------------------------------------------------------------

    def _new_game(self, size: int, variant: str) -> Game:
        try:
            game = make_game("gomoku", size, connect=5, variant=variant)
            self.source.check(game)
        except ValueError as e:  # a bad size, or a net for another size (NetMismatch): say why
            raise PbrainError(str(e)) from None
        return game

    def _new_player(self, game: Game) -> SearchPlayer:
        play = PlayConfig(visits=self.visits, resign_threshold=None, threats=self.threats,
                          threat_reading=self.threat_reading)
        return self.source.player(game, play=play, seed=self.seed)

    def _start(self, size: int) -> None:
        game = self._new_game(size, self.variant)
        self.game = game
        self.player = self._new_player(game)
        self.position = game.new_position()

    def _need_game(self) -> Game:
        if self.game is None:
            raise PbrainError("no game: send START first")
        return self.game

    def _started(self) -> tuple[Game, Position, SearchPlayer]:
        """The game, its position and our player: PbrainError before START."""
        game = self._need_game()
        # START (_start) and a rule change (_set_variant) set the three together
        assert self.position is not None and self.player is not None
        return game, self.position, self.player

    def budget(self) -> float:
        """Seconds for the next move (see the module docstring)."""
        # timeout_turn 0 means "move at once": a few visits' worth.
        limit = self.timeout_turn_ms / 1000.0 if self.timeout_turn_ms > 0 else 0.05
        if self.timeout_match_ms > 0 and self.time_left_ms is not None:
            empty = int((self.position.board_array() == 0).sum()) if self.position is not None else 225
            limit = min(limit, max(self.time_left_ms, 0) / 1000.0 / max(10, empty // 4))
        return max(0.02, limit - SAFETY_S if limit > 2 * SAFETY_S else limit / 2)

    def _our_move(self) -> str:
        game, position, player = self._started()
        if position.is_terminal():
            raise PbrainError("the game is over")
        start = time.monotonic()
        decision = player.choose(position, time_s=self.budget())
        if self.time_left_ms is not None:
            self.time_left_ms -= int(1000 * (time.monotonic() - start))
        self.position = position.play(decision.action)
        return xy_from_point(decision.action, game.size)

    def _opponent_plays(self, point: int) -> None:
        _, position, _ = self._started()
        try:
            self.position = position.play(point)
        except IllegalMove as e:
            raise PbrainError(str(e)) from None

    # -- protocol ----------------------------------------------------------------------------------------

    def execute(self, line: str) -> list[str]:
        text = line.strip()
        if not text:
            return []
        in_block = self._board is not None or self._swap2 is not None
        try:
            if in_block and (text.upper() == "DONE" or not hasattr(self, "cmd_" + text.split()[0].lower())):
                return self._board_line(text) if self._board is not None else self._swap2_line(text)
            self._board = self._swap2 = None  # a known command inside a block: the manager gave up on it
            word, _, rest = text.partition(" ")
            handler = getattr(self, "cmd_" + word.lower(), None)
            if handler is None:
                return [f"UNKNOWN command {word}"]
            return handler(rest.strip())
        except PbrainError as e:
            return [f"ERROR {e}"]

    def cmd_start(self, rest: str) -> list[str]:
        if not rest.isdigit():
            raise PbrainError(f"bad board size {rest!r}")
        size = int(rest)
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise PbrainError(f"unsupported size {size}: zero9 plays {MIN_SIZE}..{MAX_SIZE}")
        self._start(size)
        return ["OK"]

    def cmd_rectstart(self, rest: str) -> list[str]:
        parts = rest.split(",")
        if len(parts) == 2 and parts[0].strip() == parts[1].strip():
            return self.cmd_start(parts[0].strip())
        raise PbrainError(f"unsupported board {rest!r}: zero9 plays square boards only")

    def cmd_restart(self, rest: str) -> list[str]:
        self._start(self._need_game().size)
        return ["OK"]

    def cmd_begin(self, rest: str) -> list[str]:
        _, position, _ = self._started()
        if position.move_number:
            raise PbrainError("BEGIN on a board that is not empty")
        return [self._our_move()]

    def cmd_turn(self, rest: str) -> list[str]:
        game = self._need_game()
        (point,) = _parse_xy(rest, game.size)
        self._opponent_plays(point)
        return [self._our_move()]

    def cmd_play(self, rest: str) -> list[str]:
        """Some managers dictate our own move (e.g. a fixed opening): play it and echo it."""
        game = self._need_game()
        (point,) = _parse_xy(rest, game.size)
        self._opponent_plays(point)
        return [xy_from_point(point, game.size)]

    def cmd_takeback(self, rest: str) -> list[str]:
        game, position, _ = self._started()
        (point,) = _parse_xy(rest, game.size)
        if position.parent is None or position.last_move != point:
            raise PbrainError(f"cannot take back {rest}: it is not the last move")
        self.position = position.parent
        return ["OK"]

    def cmd_board(self, rest: str) -> list[str]:
        self._need_game()
        self._board, self._board_error = [], None
        return []

    def _board_line(self, text: str) -> list[str]:
        """One line of a BOARD block: nothing until DONE, then one reply (see **unit**)."""
        stones = self._board
        assert stones is not None  # execute sends a line here only while a BOARD block is open
        if text.upper() == "DONE":
            self._board = None
            if self._board_error is not None:
                return [f"ERROR {self._board_error}; the position is unchanged"]
            try:
                position = self._position_from(stones)
            except PbrainError as e:
                return [f"ERROR {e}"]
            before, self.position = self.position, position
            try:
                return [self._our_move()]
            except PbrainError:
                self.position = before
                raise
        if self._board_error is None:
            try:
                point, who = _parse_xy(text, self._need_game().size, fields=3)
                if who not in (1, 2, 3):
                    raise PbrainError(f"bad BOARD line {text!r}: the last field must be 1, 2 or 3")
                stones.append((point, 1 if who == 1 else 2))
            except PbrainError as e:
                self._board_error = str(e)
        return []

    def _position_from(self, stones: list[tuple[int, int]]) -> Position:
        ours = [p for p, who in stones if who == 1]
        theirs = [p for p, who in stones if who == 2]
        if len(ours) == len(theirs):
            first, second = ours, theirs  # we are to move, so we moved first: black
        elif len(theirs) == len(ours) + 1:
            first, second = theirs, ours
        else:
            raise PbrainError(f"impossible BOARD: {len(ours)} own stones and {len(theirs)} of the opponent")
        position = self._need_game().new_position()
        for i in range(len(first)):
            for stones_of in (first, second):
                if i < len(stones_of):
                    try:
                        position = position.play(stones_of[i])
                    except IllegalMove as e:
                        raise PbrainError(f"impossible BOARD: {e}") from None
        return position

    # -- swap2 (see **swap2** in the module docstring) ---------------------------------------------------

    def cmd_swap2board(self, rest: str) -> list[str]:
        self._need_game()
        self._swap2, self._board_error = [], None
        return []

    def _swap2_line(self, text: str) -> list[str]:
        """One line of a SWAP2BOARD block: nothing until DONE, then one reply."""
        stones = self._swap2
        assert stones is not None  # execute sends a line here only while a SWAP2BOARD block is open
        if text.upper() != "DONE":
            if self._board_error is None:
                try:
                    stones.extend(_parse_xy(text, self._need_game().size))
                except PbrainError as e:
                    self._board_error = str(e)
            return []
        self._swap2 = None
        if self._board_error is not None:
            return [f"ERROR {self._board_error}; the position is unchanged"]
        if len(stones) not in SWAP2_STONES:
            count = f"{len(stones)} stone" + ("" if len(stones) == 1 else "s")
            return [f"ERROR SWAP2BOARD with {count}: expected 0, 3 or 5"]
        try:
            position = play_moves(self._need_game(), stones)
        except IllegalMove as e:
            return [f"ERROR impossible SWAP2BOARD: {e}"]
        if not stones:
            return [self._swap2_opening()]
        return [self._swap2_choice(position)]

    def _swap2_opening(self) -> str:
        """Three stones (black, white, black) whose position our search finds the most balanced."""
        game, _, player = self._started()
        size, centre = game.size, game.size // 2
        near = [(centre + dy) * size + centre + dx for dy in range(-SWAP2_RADIUS, SWAP2_RADIUS + 1)
                for dx in range(-SWAP2_RADIUS, SWAP2_RADIUS + 1)
                if 0 <= centre + dy < size and 0 <= centre + dx < size]
        share = self.budget() / SWAP2_CANDIDATES
        judged = []  # (distance of white's winrate from 1/2, stones)
        for _ in range(SWAP2_CANDIDATES):
            stones = self.rng.sample(near, 3)
            position = play_moves(game, stones)
            player.reset()
            decision = player.choose(position, time_s=share)
            judged.append((abs(decision.winrate - 0.5), stones))
        stones = min(judged)[1]
        self.position = play_moves(game, stones)
        return " ".join(xy_from_point(p, size) for p in stones)

    def _swap2_choice(self, position: Position) -> str:
        """White is to move: ``SWAP`` (we take black) if white is worse by our search, else white's move."""
        game, _, player = self._started()
        player.reset()
        decision = player.choose(position, time_s=self.budget())
        if decision.winrate < 0.5:
            self.position = position
            return "SWAP"
        self.position = position.play(decision.action)
        return xy_from_point(decision.action, game.size)

    def cmd_info(self, rest: str) -> list[str]:
        key, _, value = rest.partition(" ")
        key, value = key.lower(), value.strip()
        numeric = {"timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule"}
        if key in numeric and not value.lstrip("-").isdigit():
            raise PbrainError(f"INFO {key}: {value!r} is not a number")
        if key == "timeout_turn":
            self.timeout_turn_ms = int(value)
        elif key == "timeout_match":
            self.timeout_match_ms = int(value)
        elif key == "time_left":
            self.time_left_ms = int(value)
        elif key == "rule":
            rule = int(value)
            if rule < 0 or rule & ~15:
                raise PbrainError(f"rule {rule}: expected a bit mask of 1 (exactly five), 2 (continuous), "
                                  "4 (renju), 8 (caro)")
            if rule & 8:
                raise PbrainError(f"rule {rule}: caro is not supported (0: freestyle, 1: exactly five, "
                                  "4: renju)")
            self._set_variant("renju" if rule & 4 else "standard" if rule & 1 else "freestyle")
        return []

    def _set_variant(self, variant: str) -> None:
        """Switch rules now: the moves so far are replayed under the new one (or nothing changes)."""
        if variant == self.variant:
            return
        if self.game is not None:
            assert self.position is not None  # _start sets it with the game
            game = self._new_game(self.game.size, variant)
            try:
                position = play_moves(game, actions_played(self.position))
            except IllegalMove as e:
                raise PbrainError(f"cannot switch to {variant}: {e}") from None
            self.game, self.position = game, position
            self.player = self._new_player(game)
        self.variant = variant  # max_memory, game_type, evaluate, folder: nothing to do

    def cmd_about(self, rest: str) -> list[str]:
        return [ABOUT]

    def cmd_end(self, rest: str) -> list[str]:
        self.quit = True
        return []


def serve(engine: PbrainEngine, inp: TextIO, out: TextIO) -> int:
    """Read commands until END or EOF."""
    while not engine.quit:
        line = inp.readline()
        if line == "":
            break
        try:
            replies = engine.execute(line)
        except Exception as e:  # never leave the manager waiting on a crash
            replies = [f"ERROR internal error: {type(e).__name__}: {e}"]
        for reply in replies:
            out.write(reply + "\n")
        out.flush()
    return 0

