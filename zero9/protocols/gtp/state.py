"""The state of ``zero9 gtp``: the game, the setup stones, the history of positions, the options.

Vocabulary:

- **state**: the game (Go or Gomoku, size, komi), the **setup** stones (handicap or an
  SGF's AB/AW) and the **history**, a list of positions, one per move the client
  played or we generated; ``undo`` pops it. A failing command never changes the state:
  each handler checks all its arguments before it touches anything.
- **filler pass**: zero9 positions are built only by moves, so a stone for the side
  *not* to move (a handicap stone, ``play w`` when black is to move) is preceded by a
  pass of the side to move. Fillers live inside the position chain; ``undo`` and
  ``move_history`` treat a move and its filler as one step. (Gomoku has no pass, so
  there the colour must be the side to move.)
- **resumed game**: Go ends after two passes, but GTP play goes on (Leela Zero has no
  game end): ``play`` / ``genmove`` on such a position first replace it in the history
  by :meth:`GoPosition.resume`, the same position with the pass count restarted.
- **options** (:class:`LeelaZeroOptions`): Leela Zero's command-line knobs as the engine
  uses them; ``zero9.cli.gtp`` fills them from the command line.
- **Go's extras** (:class:`GoRules`, :func:`go_rules`): what Go positions have beyond the
  game interface (captures, eyes, the score, resuming), for the commands that are Go only.

:class:`EngineState` is one object that every part of the engine holds
(:class:`zero9.protocols.gtp.engine.GTPEngine` builds it once): its public methods are the
only way the move policy, the analysis streams and the command groups read and change it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol, TextIO, cast

import numpy as np

from zero9.games import COLOUR_NAMES, Game, IllegalMove, Position, opponent
from zero9.protocols.gtp.clock import Clock
from zero9.protocols.gtp.options import GTPFailure
from zero9.search.evaluator import NetEvaluator, UniformEvaluator
from zero9.search.player import NetSource, SearchPlayer
from zero9.settings import PlayConfig, SearchConfig

Evaluator = NetEvaluator | UniformEvaluator  # what NetSource.evaluator gives


@dataclass
class LeelaZeroOptions:
    """Leela Zero's command-line knobs, as the engine uses them."""

    visits: int | None = None
    playouts: int | None = None
    resignpct: float = -1.0  # -1: Leela Zero's default (10%); 0: never resign
    randomcnt: int = 0
    randomvisits: int = 0  # random moves only among those with more visits than this
    randomtemp: float = 1.0  # pick ~ visits ** (1 / randomtemp)
    noise: bool = False
    seed: int | None = None
    threads: int = 1
    ponder: bool = False
    quiet: bool = False
    dumbpass: bool = False  # -d: no smarter passing (self-play)
    tromp_taylor: bool = False  # final_score as Leela Zero counts (autogtp's training targets)
    lagbuffer: int = 20  # centiseconds kept back from each move's time
    device: str = "auto"
    weights: str | None = None

    @property
    def resign_threshold(self) -> float | None:
        return 0.10 if self.resignpct < 0 else None if self.resignpct == 0 else self.resignpct / 100.0


class GoRules(Position, Protocol):
    """A Go position's extras over :class:`~zero9.games.Position` (both Go engines have them)."""

    passes: int
    captures: dict[int, int]

    def resume(self) -> GoRules: ...

    def is_eye(self, point: int, colour: int) -> bool: ...

    def score(self) -> float: ...


class GoGame(Game, Protocol):
    """A Go game's extras over :class:`~zero9.games.Game`."""

    komi: float
    move_cap: int


def go_rules(position: Position) -> GoRules:
    """``position`` seen as a Go position: for code that runs only when ``game.name == "go"``."""
    return cast(GoRules, position)


def go_game(game: Game) -> GoGame:
    """``game`` seen as Go (komi, move cap): for code that runs only when ``game.name == "go"``."""
    return cast(GoGame, game)


class EngineState:
    """The game, setup, history, clock and search player of one GTP session."""

    def __init__(self, game: Game, source: NetSource, options: LeelaZeroOptions | None = None,
                 log: TextIO | None = None):
        self.options = options or LeelaZeroOptions()
        self.source = source
        self.log = log
        self.quit = False
        self.clock = Clock(lag=self.options.lagbuffer / 100.0)
        self.rng = np.random.default_rng(self.options.seed)  # randomcnt: draw_by_visits
        if self.options.seed is not None:
            random.seed(self.options.seed)
            np.random.seed(self.options.seed % 2**32)
        self.game: Game
        self.evaluator: Evaluator
        self.player: SearchPlayer
        self.setup: list[tuple[int, int]] = []
        self.history: list[Position] = []
        self.training: list[tuple[Position, np.ndarray]] = []  # (position, visit shares) per genmove
        self.set_game(game)

    def set_game(self, game: Game, setup: list[tuple[int, int]] | None = None) -> None:
        """New game (size, komi or rules) and an empty board; builds the search player."""
        # The net's random symmetries come from the seed too, so that -s N repeats genmove.
        evaluator = self.source.evaluator(game, np.random.default_rng(self.options.seed))
        self.game = game
        self.evaluator = evaluator
        self.player = self._make_player(game, evaluator)
        self.reset(setup or [])

    def _make_player(self, game: Game, evaluator: Evaluator) -> SearchPlayer:
        o = self.options
        # Leela Zero: -v and -p both off means its default; ours is PlayConfig's visits.
        visits = o.visits if o.visits or o.playouts else PlayConfig.visits
        # randomcnt is the engine's (see gtp.moves): Leela Zero's temperature and minimum visits.
        play = PlayConfig(visits=visits or None, playouts=o.playouts or None, randomcnt=0,
                          resign_threshold=o.resign_threshold)
        return SearchPlayer(game, evaluator, play, SearchConfig(noise=o.noise), seed=o.seed)

    def reset(self, setup: list[tuple[int, int]]) -> None:
        """An empty board with ``setup`` stones, no history, no training record."""
        position = self.game.new_position()
        for colour, point in setup:
            position = play_as(position, colour, point)
        self.setup = list(setup)
        self.history = [position]
        self.training = []

    @property
    def position(self) -> Position:
        return self.history[-1]

    def steps(self) -> list[list[tuple[int, int]]]:
        """Each history step as the (colour, action) moves it took, fillers included."""
        steps = []
        for before, after in zip(self.history, self.history[1:], strict=False):
            moves = []
            p: Position | None = after
            while p is not None and p is not before:
                assert p.last_move is not None  # every position after the first came from a move
                moves.append((opponent(p.to_play), p.last_move))
                p = p.parent
            steps.append(list(reversed(moves)))
        return steps

    def rebuild(self, game: Game) -> None:
        """Replay setup and history under a new game object (komi changed)."""
        steps = self.steps()
        self.set_game(game, self.setup)
        for moves in steps:
            position = self.resumed()
            for colour, action in moves:
                position = play_as(position, colour, action)
            self.history.append(position)

    def vertex(self, text: str) -> int:
        """A GTP vertex of this game as an action, or GTPFailure."""
        try:
            return self.game.vertex_to_action(text)
        except ValueError as e:
            raise GTPFailure(str(e)) from None

    def push(self, colour: int, action: int) -> None:
        """``colour`` plays ``action`` on the current position (GTPFailure if illegal)."""
        try:
            self.history.append(play_as(self.position, colour, action))
        except IllegalMove as e:
            raise GTPFailure(str(e)) from None

    def require_go(self, name: str) -> None:
        """GTPFailure unless the game is Go (command ``name`` makes sense for Go only)."""
        if self.game.name != "go":
            raise GTPFailure(f"{name} is for Go only")

    def resumed(self) -> Position:
        """The current position, play going on after two passes (Leela Zero keeps playing)."""
        position = self.position
        if resumable(position):
            position = go_rules(position).resume()
            self.history[-1] = position  # same content; the next move's parent is this object
        return position

    def prepare_genmove(self, colour: int) -> Position:
        """The position to search from, with a filler pass if ``colour`` is not to move."""
        position = self.position
        if resumable(position):
            position = go_rules(position).resume()
        if position.is_terminal():
            raise GTPFailure("game over")
        if colour != position.to_play:
            try:
                position = filler(position)
            except IllegalMove as e:
                raise GTPFailure(str(e)) from None
        return position

    def set_clock(self, clock: Clock) -> None:
        """A new time control, with this engine's lag buffer."""
        clock.lag = self.options.lagbuffer / 100.0
        self.clock = clock

    def say(self, text: str) -> None:
        """A diagnostic line on stderr (nothing with -q)."""
        if self.log is not None:
            print(text, file=self.log, flush=True)


def resumable(position: Position) -> bool:
    """A Go game ended by two passes: GTP play goes on from it (Leela Zero has no game end)."""
    return position.is_terminal() and getattr(position, "passes", 0) >= 2


def at_move_cap(position: Position) -> bool:
    """A Go game that reached its move cap (``Go.move_cap``), neither passed out nor resigned.

    Leela Zero has no cap; a controller that does not know ours (autogtp) asks for more moves.
    The engine then passes without playing on: the game stays scored as it stands, and two
    such passes end the controller's game (``zero9 server`` accepts the two trailing passes).
    """
    cap: Any = getattr(position.game, "move_cap", 0)
    # (a resignation cannot come after the cap: a finished game cannot be resigned)
    return (bool(cap) and position.is_terminal() and position.move_number >= cap
            and getattr(position, "passes", 0) < 2)


def filler(position: Position) -> Position:
    """A pass for the side to move, so that the other colour moves next."""
    game = position.game
    if game.pass_action is None:
        raise IllegalMove("pass", f"it is {COLOUR_NAMES[position.to_play]}'s turn ({game.name} has no pass)")
    if getattr(position, "passes", 0) >= 1:
        raise IllegalMove("pass", "a second filler pass would end the game")
    return position.play(game.pass_action)


def play_as(position: Position, colour: int, action: int) -> Position:
    """``position`` after ``colour`` plays ``action``, with a filler pass if ``colour`` is not to move."""
    if colour != position.to_play:
        position = filler(position)
    return position.play(action)
