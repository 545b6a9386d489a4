"""Players: one factory turns a player spec into a live player (an *agent*).

Vocabulary:

- **player spec**: what a command line names a player by:

  ==========================  =============================================================
  ``PATH[@V]``                a zero9 net file (checkpoint or Leela Zero text), ``V`` visits
  ``uniform:V``               the search with uniform priors and ``V`` visits
  ``mcts:N``                  pure MCTS with ``N`` random-rollout playouts (AlphaZero_Gomoku)
  ``random``                  uniform random legal moves, never filling an own eye (0 Elo)
  ``gnugo:L``                 GNU Go at level ``L`` (Go): Chinese rules, superko, captures dead stones
  ``pachi:N``                 Pachi with ``N`` playouts per move (Go): one thread, Chinese rules,
                              captures dead stones before it passes
  ``gtp:COMMAND LINE``        any GTP engine
  ``pbrain:[K=V ...] COMMAND``  any Gomocup (piskvork) brain; leading ``KEY=VALUE`` words are
                              sent to it as ``INFO KEY VALUE`` (``max_node=10000``)
  ``gomokubench:LEVEL``       the alpha-beta AI of PyPI's ``gomokubench`` (easy, standard, hard)
  ``level:NAME``              a named AI level on the shipped net (:mod:`zero9.arena.levels`)
  ==========================  =============================================================

  The autotrain loop passes dicts instead: ``{"kind": "net", "path": ..., "visits": ...}``
  or ``{"kind": "<any spec above>"}``.
- **agent**: a live player built from a spec (:func:`make_player`, the one factory: ``zero9 match``,
  the autotrain loop's rating games, ``gtp``, ``pbrain``, the window and ``demo`` all use
  it): ``new_game(game)``, ``genmove(position) -> action or None`` (None = resign),
  ``close()``. External engines are kept in sync by replaying the moves they have not seen.
- **engine options** (:class:`EngineOptions`): what the match tells external engines: where
  Pachi is, extra pbrain INFO keys, the thinking time per move and the clock per game.
- **brain log**: a pbrain brain's MESSAGE/DEBUG lines and stderr, kept for the match log
  (:meth:`PbrainAgent.drain_log`).
- **fault**: an agent that crashes, times out, answers nonsense or plays an illegal
  move raises :class:`AgentFault`; the match scores it as a loss and restarts the agent.
"""

from __future__ import annotations

import os
import queue
import random
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from zero9.arena.gtpclient import (
    GTPClient,
    GTPEngineError,
    GTPError,
    find_gnugo,
    find_pachi,
    gnugo_command,
    pachi_command,
)
from zero9.arena.levels import LevelPlayer, find_level
from zero9.games import BLACK, WHITE, Game, Position, actions_played
from zero9.games.go import Go
from zero9.games.gomoku import point_from_xy, xy_from_point
from zero9.nn.checkpoint import default_net_path
from zero9.search.mcts_pure import _random_move, rollout_player
from zero9.search.player import NetSource
from zero9.settings import PlayConfig, SearchConfig

DEFAULT_MOVE_TIMEOUT = 120.0  # seconds an external engine may think before it forfeits
PACHI_MIN_PLAYOUTS = 500  # Pachi's GJ_MINGAMES: it aborts on a fixed-playout search below this
DEFAULT_TURN_TIME = 5.0  # seconds per move a pbrain brain is told it has (INFO timeout_turn)
GOMOCUP_RULE = {"freestyle": 0, "standard": 1}  # Gomoku variant -> INFO rule bit mask
_INFO_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$")  # KEY=VALUE before a brain's command


@dataclass(frozen=True)
class EngineOptions:
    """What a match tells the external engines it starts (the command line's engine options).

    ``turn_time`` and ``game_time`` (seconds; 0 = no game clock) are the match's time controls
    as a pbrain brain hears them (INFO ``timeout_turn``, ``timeout_match``, ``time_left``);
    ``pbrain_info`` are further ``(key, value)`` INFO pairs for every brain, sent last so they
    override; ``pachi`` is the Pachi binary (None: ``$ZERO9_PACHI``, then PATH); ``threats``
    turns Gomoku threat search (zero9/search/threats.py) on or off for zero9's own nets, and
    ``threat_reading`` says what it reads at the root (``vct`` or ``vcf``); ``c_puct``,
    ``fpu_reduction``, ``batch_size`` (leaves per net call) and ``lcb`` (choose the move by its
    lower confidence bound, Leela Zero's) are the search's own settings for zero9's nets.
    """

    pachi: str | None = None
    pbrain_info: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    turn_time: float = DEFAULT_TURN_TIME
    game_time: float = 0.0
    threats: bool = PlayConfig.threats
    threat_reading: str = PlayConfig.threat_reading
    c_puct: float = SearchConfig.c_puct
    fpu_reduction: float = SearchConfig.fpu_reduction
    batch_size: int = PlayConfig.batch_size
    lcb: bool = False


def parse_info(words: list[str], where: str) -> list[tuple[str, str]]:
    """``["max_node=10000", ...]`` -> ``[("max_node", "10000"), ...]``; ValueError naming a bad word."""
    pairs = []
    for word in words:
        match = _INFO_WORD.match(word)
        if not match:
            raise ValueError(f"{where}: {word!r} is not KEY=VALUE "
                             f"(a pbrain INFO setting such as max_node=10000)")
        pairs.append((match.group(1).lower(), match.group(2)))
    return pairs


class AgentFault(Exception):
    """The agent broke the rules or the protocol; it loses the game. ``kind`` is 'F' or 'T'."""

    def __init__(self, message: str, kind: str = "F"):
        super().__init__(message)
        self.kind = kind


# ----------------------------------------------------------------------------- agents


class SearchAgent:
    """A zero9 SearchPlayer (net, uniform priors or rollouts)."""

    def __init__(self, name: str, make):
        self.name = name
        self._make = make  # game -> SearchPlayer: built per game so a board-size change is fine
        self.player: Any = None  # a SearchPlayer or a LevelPlayer: anything with genmove(position)
        self._game: Game | None = None

    def new_game(self, game: Game) -> None:
        if self.player is None or self._game != game:
            self.player = self._make(game)
            self._game = game

    def genmove(self, position: Position) -> int | None:
        if self.player is None:
            raise AgentFault(f"{self.name} was asked to move before a game started")
        return self.player.genmove(position)

    def close(self) -> None:
        self.player = None


class RandomAgent:
    """Uniform random moves that never fill an own single-point eye: Leela Zero's 0 Elo anchor."""

    def __init__(self, seed: int | None = None):
        self.name = "random"
        self.rng = random.Random(seed)

    def new_game(self, game: Game) -> None:
        pass

    def genmove(self, position: Position) -> int | None:
        return _random_move(position, self.rng)

    def close(self) -> None:
        pass


class GTPAgent:
    """An external GTP engine (GNU Go, Leela Zero, KataGo, another zero9)."""

    def __init__(self, name: str, argv: list[str], timeout: float = DEFAULT_MOVE_TIMEOUT):
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.client: GTPClient | None = None
        self.sent: list[int] = []  # actions the engine has seen, in order

    def _start(self) -> None:
        self.close()
        self.client = GTPClient(self.argv, timeout=self.timeout, name=self.name)

    def _send(self, command: str) -> str:
        if self.client is None:  # it died on an earlier command of this game
            raise AgentFault(f"engine {self.name} is not running")
        try:
            return self.client.send(command)
        except GTPError as e:
            raise AgentFault(str(e)) from None
        except GTPEngineError as e:
            self.client = None
            raise AgentFault(str(e), "T" if "within" in str(e) else "F") from None

    def new_game(self, game: Game) -> None:
        if self.client is None or self.client.proc.poll() is not None:
            try:
                self._start()
            except GTPEngineError as e:
                raise AgentFault(str(e)) from None
        self.game = game
        self._send(f"boardsize {game.size}")
        self._send("clear_board")
        if game.name == "go":
            self._send(f"komi {cast(Go, game).komi:g}")
        self.sent = []

    def genmove(self, position: Position) -> int | None:
        moves = list(actions_played(position))
        if moves[: len(self.sent)] != self.sent:  # not a continuation: start over
            self._send("clear_board")
            self.sent = []
        for colour, action in _coloured(moves)[len(self.sent):]:
            self._send(f"play {'b' if colour == BLACK else 'w'} {self.game.action_to_vertex(action)}")
        self.sent = list(moves)
        reply = self._send(f"genmove {'b' if position.to_play == BLACK else 'w'}").strip().lower()
        if reply == "resign":
            return None
        try:
            action = self.game.vertex_to_action(reply)
        except ValueError:
            raise AgentFault(f"{self.name} answered genmove with {reply!r}") from None
        self.sent.append(action)
        return action

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class PbrainAgent:
    """An external Gomocup brain, driven as piskvork drives it (START, INFO, BEGIN/TURN/BOARD).

    ``info`` are the INFO ``(key, value)`` pairs sent after START (the match's time controls
    and rule first, the user's own last, so theirs win); ``time_left_ms``, when the match
    keeps a game clock, is sent as INFO ``time_left`` before each move.
    """

    def __init__(self, name: str, argv: list[str], timeout: float = DEFAULT_MOVE_TIMEOUT,
                 info: Sequence[tuple[str, str]] = ()):
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.info = list(info)
        self.time_left_ms: int | None = None
        self.proc: subprocess.Popen | None = None
        self._lines: Any = None
        self._log: list[str] = []  # brain log: appended by the reader threads, taken by drain_log
        self.sent: list[int] = []

    def _start(self) -> None:
        self.close()
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, bufsize=1)
        except OSError as e:
            raise AgentFault(f"cannot start brain {self.name}: {e}") from None
        self._lines = queue.Queue()

        def pump(stream, put, end) -> None:
            for line in stream:
                put(line.strip())
            if end:
                put(None)

        threading.Thread(target=pump, args=(self.proc.stdout, self._lines.put, True), daemon=True).start()
        threading.Thread(target=pump, args=(self.proc.stderr, lambda line: self._log.append(f"stderr {line}"),
                                            False), daemon=True).start()

    def drain_log(self) -> list[str]:
        """The brain log since the last call (MESSAGE/DEBUG lines and stderr), oldest first."""
        lines, self._log = self._log, []
        return lines

    def _write(self, text: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise AgentFault(f"brain {self.name} is not running")
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise AgentFault(f"brain {self.name} stopped reading") from None

    def _reply(self, what: str, resend: str | None = None) -> str:
        """The next answer line, skipping MESSAGE/DEBUG chatter.

        ``resend``: the command just sent (``TURN x,y``). A brain that answers ``ERROR Unknown
        command: x,y`` read the command's first word and dropped it, then took its arguments for a
        command: Rapfi does this to a command that arrives in the instant between printing its
        move and marking its search finished (its protocol loop drops commands while it thinks).
        Such a command is sent again, once, and the brain log says so; any other ERROR is a fault.
        """

        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                message = f"brain {self.name} did not answer {what} within {self.timeout} s"
                raise AgentFault(message, "T") from None
            if line is None:
                raise AgentFault(f"brain {self.name} exited while answering {what}")
            word = line.split(" ", 1)[0].upper()
            if word in ("MESSAGE", "DEBUG", "SUGGEST"):
                self._log.append(line)
                continue
            if word in ("ERROR", "UNKNOWN"):
                arguments = resend.split(" ", 1)[-1] if resend else None
                if resend and arguments and line.rstrip().endswith(f"Unknown command: {arguments}"):
                    self._log.append(f"zero9: the brain dropped {resend!r} ({line!r}); sent again")
                    self._write(resend)
                    resend = None
                    continue
                raise AgentFault(f"brain {self.name} answered {what} with {line!r}")
            return line

    def new_game(self, game: Game) -> None:
        if game.name != "gomoku":
            raise ValueError(f"pbrain player {self.name} plays Gomoku, not {game.name}")
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.game = game
        self._write(f"START {game.size}")
        if self._reply("START").upper() != "OK":
            raise AgentFault(f"brain {self.name} refused START {game.size}")
        for key, value in self.info:
            self._write(f"INFO {key} {value}")
        self.sent = []

    def genmove(self, position: Position) -> int | None:

        size = self.game.size
        moves = list(actions_played(position))
        new = moves[len(self.sent):]
        if self.time_left_ms is not None:
            self._write(f"INFO time_left {max(0, self.time_left_ms)}")
        turn = None
        if not moves:
            self._write("BEGIN")
        elif moves[: len(self.sent)] == self.sent and len(new) == 1:
            turn = f"TURN {xy_from_point(new[0], size)}"
            self._write(turn)
        else:
            me = position.to_play
            self._write("BOARD")
            for colour, action in _coloured(moves):
                self._write(f"{xy_from_point(action, size)},{1 if colour == me else 2}")
            self._write("DONE")
        reply = self._reply("a move", resend=turn)
        try:
            x, y = (int(v) for v in reply.split(","))
            action = point_from_xy(x, y, size)
        except Exception:
            raise AgentFault(f"brain {self.name} answered {reply!r}, not a move x,y") from None
        self.sent = moves + [action]
        return action

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.write("END\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class GomokubenchAgent:
    """The alpha-beta Gomoku AI of PyPI's ``gomokubench`` (imported as ``libs``), in-process."""

    def __init__(self, level: str = "standard", seed: int | None = None):
        try:  # gomokubench (imported as ``libs``) is optional: only this opponent needs it
            from libs import ai, board, piece
        except ImportError:
            raise ValueError("gomokubench is not installed: pip install gomokubench") from None
        self.ai, self.board, self.piece = ai, board, piece
        self.settings = ai.resolve_ai_settings(level=level)  # ValueError for an unknown level
        self.name = f"gomokubench:{level}"
        self.seed = seed

    def new_game(self, game: Game) -> None:
        if game.name != "gomoku":
            raise ValueError(f"{self.name} plays Gomoku, not {game.name}")
        if self.seed is not None:
            np.random.seed(self.seed)  # gomokubench draws from numpy's global generator

    def genmove(self, position: Position) -> int | None:
        size = position.game.size
        board = position.board_array().reshape(size, size)  # [row y, column x]
        piece = self.piece
        state = self.board.BoardState(size)
        colours = np.where(board == WHITE, piece.WHITE, piece.EMPTY)
        state.values = np.where(board == BLACK, piece.BLACK, colours)
        me = piece.BLACK if position.to_play == BLACK else piece.WHITE
        state.color = -me  # gomokubench's ``color`` is the colour that moved last
        if position.last_move is not None:
            state.last_move = divmod(position.last_move, size)
        s = self.settings
        move, _ = self.ai.get_best_move(state, s["depth"], me == piece.BLACK,
                                        candidate_count=s["candidate_count"], random_top_n=s["random_top_n"])
        row, col = (int(v) for v in move)
        if not (0 <= row < size and 0 <= col < size):
            raise AgentFault(f"{self.name} chose ({row}, {col}), off the board")
        return row * size + col

    def close(self) -> None:
        pass


def _coloured(moves: list[int]) -> list[tuple[int, int]]:
    return [(BLACK if i % 2 == 0 else WHITE, a) for i, a in enumerate(moves)]


def spec_name(spec: str | dict) -> str:
    """A short, stable player name for SGFs and ratings."""
    if isinstance(spec, dict):
        if spec.get("kind") == "net":
            name = Path(spec["path"]).name.split(".")[0]
            return f"{name}@{spec['visits']}" if spec.get("visits") else name
        return spec_name(spec["kind"])
    for prefix in ("gtp:", "pbrain:"):
        if spec.startswith(prefix):
            words = shlex.split(spec[len(prefix):])
            settings = _leading_info(words)
            argv = words[len(settings):]
            return " ".join([os.path.basename(argv[0])] + argv[1:] + settings) if argv else spec
    if ":" in spec or spec == "random":
        return spec
    path, _, visits = spec.partition("@")
    name = Path(path).name.split(".")[0]
    return f"{name}@{visits}" if visits else name


def make_player(spec: str | dict, game: Game, visits: int = cast(int, PlayConfig.visits),
                seed: int | None = None, device: str = "cpu", move_timeout: float = DEFAULT_MOVE_TIMEOUT,
                engines: EngineOptions | None = None):
    """Build an agent from a player spec (see the module docstring). ValueError for a bad spec."""
    engines = engines or EngineOptions()
    name = spec_name(spec)
    if isinstance(spec, dict):
        if spec.get("kind") == "net":
            return _net_agent(name, spec["path"], int(spec.get("visits") or visits), seed,
                              spec.get("device", device), engines)
    return _from_text(spec if isinstance(spec, str) else spec["kind"], name, game, visits, seed, device,
                      move_timeout, engines)


def _from_text(spec: str, name: str, game: Game, visits: int, seed: int | None, device: str,
               move_timeout: float, engines: EngineOptions):
    """:func:`make_player` for a spec written as text."""
    kind, _, arg = spec.partition(":")
    if spec == "random":
        return RandomAgent(seed)
    if kind == "uniform":
        v = _count(arg, spec)

        def make_uniform(g: Game):
            return NetSource(None).player(g, play=PlayConfig(visits=v, resign_threshold=None), seed=seed)

        return SearchAgent(name, make_uniform)
    if kind == "mcts":
        playouts = _count(arg, spec)

        def make_mcts(g: Game):
            return rollout_player(g, playouts=playouts, seed=seed)

        return SearchAgent(name, make_mcts)
    if kind == "gnugo":
        if game.name != "go":
            raise ValueError(f"{spec}: GNU Go plays Go, not {game.name}")
        if find_gnugo() is None:
            raise ValueError(f"{spec}: GNU Go is not installed")
        # gnugo_command has GNU Go capture dead stones before it passes, as Tromp-Taylor needs.
        argv = gnugo_command(level=_count(arg, spec, lo=0), size=game.size, komi=getattr(game, "komi", 7.5))
        return GTPAgent(name, argv, move_timeout)
    if kind == "pachi":
        if game.name != "go":
            raise ValueError(f"{spec}: Pachi plays Go, not {game.name}")
        playouts = _count(arg, spec, lo=PACHI_MIN_PLAYOUTS)
        path = find_pachi(engines.pachi)
        if path is None:
            wanted = engines.pachi or os.environ.get("ZERO9_PACHI") or "pachi on PATH"
            raise ValueError(f"{spec}: Pachi not found ({wanted}); build it as docs/opponents.md says, "
                             f"then pass --pachi PATH or set ZERO9_PACHI")
        return GTPAgent(name, pachi_command(path, playouts), move_timeout)
    if kind == "gtp":
        return GTPAgent(name, _argv(arg, spec), move_timeout)
    if kind == "pbrain":
        if game.name != "gomoku":
            raise ValueError(f"{spec}: a pbrain engine plays Gomoku, not {game.name}")
        words = _argv(arg, spec)
        settings = _leading_info(words)
        argv = words[len(settings):]
        if not argv:
            raise ValueError(f"bad player {spec!r}: INFO settings but no command line")
        info = _pbrain_info(game, engines, move_timeout) + parse_info(settings, spec)
        return PbrainAgent(name, argv, move_timeout, info)
    if kind == "gomokubench":
        return GomokubenchAgent(arg or "standard", seed)
    if kind == "level":
        return _level_agent(name, find_level(arg), game, seed, device)
    path, _, at_visits = spec.partition("@")
    if not Path(path).is_file():
        raise ValueError(f"bad player {spec!r}: not a net file, nor random, uniform:V, mcts:N, gnugo:L, "
                         f"pachi:N, gtp:COMMAND, pbrain:COMMAND, gomokubench:LEVEL or level:NAME")
    return _net_agent(name, path, _count(at_visits, spec) if at_visits else visits, seed, device, engines)


def _count(text: str, spec: str, lo: int = 1) -> int:
    if not text.isdigit() or int(text) < lo:
        raise ValueError(f"bad player {spec!r}: expected a whole number >= {lo} after the colon")
    return int(text)


def _leading_info(words: list[str]) -> list[str]:
    """The ``KEY=VALUE`` words in front of a brain's command line (no program is named so)."""
    count = 0
    while count < len(words) and _INFO_WORD.match(words[count]):
        count += 1
    return words[:count]


def _pbrain_info(game: Game, engines: EngineOptions, move_timeout: float) -> list[tuple[str, str]]:
    """The INFO pairs every brain gets: the match's time controls, the rule, then --pbrain-info."""
    if engines.turn_time > move_timeout:
        raise ValueError(f"turn time {engines.turn_time:g} s is longer than the move timeout "
                         f"{move_timeout:g} s, after which a brain forfeits")
    variant = getattr(game, "variant", "freestyle")
    if variant not in GOMOCUP_RULE:
        raise ValueError(f"no Gomocup rule for the Gomoku variant {variant!r}")
    pairs = [("timeout_turn", str(round(1000 * engines.turn_time))),
             ("timeout_match", str(round(1000 * engines.game_time))),
             ("rule", str(GOMOCUP_RULE[variant]))]
    return pairs + list(engines.pbrain_info)


def _argv(text: str, spec: str) -> list[str]:
    argv = shlex.split(text)
    if not argv:
        raise ValueError(f"bad player {spec!r}: empty command line")
    return argv


def _net_agent(name: str, path: str, visits: int, seed: int | None, device: str,
               engines: EngineOptions) -> SearchAgent:
    source = NetSource(path, device=device)
    play = PlayConfig(visits=visits, threats=engines.threats, threat_reading=engines.threat_reading,
                      batch_size=engines.batch_size, lcb=engines.lcb)
    search = SearchConfig(c_puct=engines.c_puct, fpu_reduction=engines.fpu_reduction)
    return SearchAgent(name, lambda g: source.player(g, play=play, search=search, seed=seed))


def _level_agent(name: str, level, game: Game, seed: int | None, device: str) -> SearchAgent:
    path = default_net_path(game.name, game.size)
    if path is None:
        raise ValueError(f"{name}: no shipped net for {game.name} {game.size}x{game.size} to weaken")
    source = NetSource(path, device=device)
    return SearchAgent(name, lambda g: LevelPlayer(g, source.evaluator(g), level, seed=seed))
