"""``zero9 match``: games between zero9 nets and programs nobody here wrote, with the Elo maths.

Vocabulary:

- **player spec**: what a command line names a player by:

  ==========================  =============================================================
  ``PATH[@V]``                a zero9 net file (checkpoint or Leela Zero text), ``V`` visits
  ``uniform:V``               the search with uniform priors and ``V`` visits
  ``mcts:N``                  pure MCTS with ``N`` random-rollout playouts (AlphaZero_Gomoku)
  ``random``                  uniform random legal moves, never filling an own eye (0 Elo)
  ``gnugo:L``                 GNU Go at level ``L`` (Go): Chinese rules, superko, captures dead stones
  ``gtp:COMMAND LINE``        any GTP engine
  ``pbrain:COMMAND LINE``     any Gomocup (piskvork) brain
  ``gomokubench:LEVEL``       the alpha-beta AI of PyPI's ``gomokubench`` (easy, standard, hard)
  ==========================  =============================================================

  The autotrain loop passes dicts instead: ``{"kind": "net", "path": ..., "visits": ...}``
  or ``{"kind": "<any spec above>"}``.
- **agent**: a live player built from a spec (:func:`make_player`): ``new_game(game)``,
  ``genmove(position) -> action or None`` (None = resign), ``close()``. External engines
  are kept in sync by replaying the moves they have not seen.
- **fault**: an agent that crashes, times out, answers nonsense or plays an illegal
  move loses that game (SGF result ``B+F`` / ``W+F``, ``+T`` for time); the event is
  logged and the agent is restarted for the next game.
- **adjudication**: Go ends after two passes (or at the move cap) and is scored by
  Tromp-Taylor; Gomoku ends at five in a row or a full board (a draw).
- **score**: from player A's view, 1 / 0.5 / 0 per game. Colours alternate by game
  index: A is black in even games.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import random
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zero9.game import BLACK, EMPTY, WHITE, Game, Position, add_game_arguments, game_from_args, make_game

DEFAULT_VISITS = 200
DEFAULT_MOVE_TIMEOUT = 120.0  # seconds an external engine may think before it forfeits


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
        self.player = None
        self._game: Game | None = None

    def new_game(self, game: Game) -> None:
        if self.player is None or self._game != game:
            self.player = self._make(game)
            self._game = game

    def genmove(self, position: Position) -> int | None:
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
        from zero9.mcts_pure import _random_move  # the rollout policy: one implementation of "random"

        return _random_move(position, self.rng)

    def close(self) -> None:
        pass


class GTPAgent:
    """An external GTP engine (GNU Go, Leela Zero, KataGo, another zero9)."""

    def __init__(self, name: str, argv: list[str], timeout: float = DEFAULT_MOVE_TIMEOUT):
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.client = None
        self.sent: list[int] = []  # actions the engine has seen, in order

    def _start(self) -> None:
        from zero9.gtpclient import GTPClient

        self.close()
        self.client = GTPClient(self.argv, timeout=self.timeout, name=self.name)

    def _send(self, command: str) -> str:
        from zero9.gtpclient import GTPEngineError, GTPError

        try:
            return self.client.send(command)
        except GTPError as e:
            raise AgentFault(str(e)) from None
        except GTPEngineError as e:
            self.client = None
            raise AgentFault(str(e), "T" if "within" in str(e) else "F") from None

    def new_game(self, game: Game) -> None:
        from zero9.gtpclient import GTPEngineError

        if self.client is None or self.client.proc.poll() is not None:
            try:
                self._start()
            except GTPEngineError as e:
                raise AgentFault(str(e)) from None
        self.game = game
        self._send(f"boardsize {game.size}")
        self._send("clear_board")
        if game.name == "go":
            self._send(f"komi {game.komi:g}")
        self.sent = []

    def genmove(self, position: Position) -> int | None:
        moves = _moves_of(position)
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
    """An external Gomocup brain, driven as piskvork drives it (START, BEGIN/TURN/BOARD)."""

    def __init__(self, name: str, argv: list[str], timeout: float = DEFAULT_MOVE_TIMEOUT,
                 turn_ms: int = 5000):
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.turn_ms = turn_ms
        self.proc: subprocess.Popen | None = None
        self._lines: Any = None
        self.sent: list[int] = []

    def _start(self) -> None:
        import queue

        self.close()
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as e:
            raise AgentFault(f"cannot start brain {self.name}: {e}") from None
        self._lines = queue.Queue()

        def pump(stream, put) -> None:
            for line in stream:
                put(line.strip())
            put(None)

        threading.Thread(target=pump, args=(self.proc.stdout, self._lines.put), daemon=True).start()

    def _write(self, text: str) -> None:
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise AgentFault(f"brain {self.name} stopped reading") from None

    def _reply(self, what: str) -> str:
        """The next answer line, skipping MESSAGE/DEBUG chatter."""
        import queue

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
                continue
            if word in ("ERROR", "UNKNOWN"):
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
        self._write(f"INFO timeout_turn {self.turn_ms}")
        self._write("INFO timeout_match 0")
        self._write("INFO rule 0")
        self.sent = []

    def genmove(self, position: Position) -> int | None:
        from zero9.pbrain import point_from_xy, xy_from_point

        size = self.game.size
        moves = _moves_of(position)
        new = moves[len(self.sent):]
        if not moves:
            self._write("BEGIN")
        elif moves[: len(self.sent)] == self.sent and len(new) == 1:
            self._write(f"TURN {xy_from_point(new[0], size)}")
        else:
            me = position.to_play
            self._write("BOARD")
            for colour, action in _coloured(moves):
                self._write(f"{xy_from_point(action, size)},{1 if colour == me else 2}")
            self._write("DONE")
        reply = self._reply("a move")
        try:
            x, y = (int(v) for v in reply.split(","))
            action = point_from_xy(x, y, size)
        except Exception:
            raise AgentFault(f"brain {self.name} answered {reply!r}, not a move x,y") from None
        self.sent = moves + [action]
        return action

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
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
        try:
            from libs.ai import resolve_ai_settings
        except ImportError:
            raise ValueError("gomokubench is not installed: pip install gomokubench") from None
        self.settings = resolve_ai_settings(level=level)  # ValueError for an unknown level
        self.name = f"gomokubench:{level}"
        self.seed = seed

    def new_game(self, game: Game) -> None:
        if game.name != "gomoku":
            raise ValueError(f"{self.name} plays Gomoku, not {game.name}")
        if self.seed is not None:
            import numpy as np

            np.random.seed(self.seed)  # gomokubench draws from numpy's global generator

    def genmove(self, position: Position) -> int | None:
        import numpy as np
        from libs import piece
        from libs.ai import get_best_move
        from libs.board import BoardState

        size = position.game.size
        board = position.board_array().reshape(size, size)  # [row y, column x]
        state = BoardState(size)
        colours = np.where(board == WHITE, piece.WHITE, piece.EMPTY)
        state.values = np.where(board == BLACK, piece.BLACK, colours)
        me = piece.BLACK if position.to_play == BLACK else piece.WHITE
        state.color = -me  # gomokubench's ``color`` is the colour that moved last
        if position.last_move is not None:
            state.last_move = divmod(position.last_move, size)
        s = self.settings
        move, _ = get_best_move(state, s["depth"], me == piece.BLACK, candidate_count=s["candidate_count"],
                                random_top_n=s["random_top_n"])
        row, col = (int(v) for v in move)
        if not (0 <= row < size and 0 <= col < size):
            raise AgentFault(f"{self.name} chose ({row}, {col}), off the board")
        return row * size + col

    def close(self) -> None:
        pass


def _moves_of(position: Position) -> list[int]:
    """The actions from the empty board to ``position``."""
    moves = []
    p: Position | None = position
    while p is not None and p.last_move is not None:
        moves.append(p.last_move)
        p = p.parent
    return moves[::-1]


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
            argv = shlex.split(spec[len(prefix):])
            return " ".join([os.path.basename(argv[0])] + argv[1:]) if argv else spec
    if ":" in spec or spec == "random":
        return spec
    path, _, visits = spec.partition("@")
    name = Path(path).name.split(".")[0]
    return f"{name}@{visits}" if visits else name


def make_player(spec: str | dict, game: Game, visits: int = DEFAULT_VISITS, seed: int | None = None,
                device: str = "cpu", move_timeout: float = DEFAULT_MOVE_TIMEOUT):
    """Build an agent from a player spec (see the module docstring). ValueError for a bad spec."""
    name = spec_name(spec)
    if isinstance(spec, dict):
        if spec.get("kind") == "net":
            return _net_agent(name, spec["path"], int(spec.get("visits") or visits), seed,
                              spec.get("device", device))
        spec = spec["kind"]
    kind, _, arg = spec.partition(":")
    if spec == "random":
        return RandomAgent(seed)
    if kind == "uniform":
        v = _count(arg, spec)

        def make_uniform(g: Game):
            from zero9.evaluator import UniformEvaluator
            from zero9.player import SearchPlayer

            return SearchPlayer(g, UniformEvaluator(g), visits=v, seed=seed, resign_threshold=None)

        return SearchAgent(name, make_uniform)
    if kind == "mcts":
        playouts = _count(arg, spec)

        def make_mcts(g: Game):
            from zero9.mcts_pure import rollout_player

            return rollout_player(g, playouts=playouts, seed=seed)

        return SearchAgent(name, make_mcts)
    if kind == "gnugo":
        from zero9.gtpclient import find_gnugo, gnugo_command

        if game.name != "go":
            raise ValueError(f"{spec}: GNU Go plays Go, not {game.name}")
        if find_gnugo() is None:
            raise ValueError(f"{spec}: GNU Go is not installed")
        # gnugo_command has GNU Go capture dead stones before it passes, as Tromp-Taylor needs.
        argv = gnugo_command(level=_count(arg, spec, lo=0), size=game.size, komi=getattr(game, "komi", 7.5))
        return GTPAgent(name, argv, move_timeout)
    if kind == "gtp":
        return GTPAgent(name, _argv(arg, spec), move_timeout)
    if kind == "pbrain":
        if game.name != "gomoku":
            raise ValueError(f"{spec}: a pbrain engine plays Gomoku, not {game.name}")
        return PbrainAgent(name, _argv(arg, spec), move_timeout)
    if kind == "gomokubench":
        return GomokubenchAgent(arg or "standard", seed)
    path, _, v = spec.partition("@")
    if not Path(path).is_file():
        raise ValueError(f"bad player {spec!r}: not a net file, nor random, uniform:V, mcts:N, gnugo:L, "
                         f"gtp:COMMAND, pbrain:COMMAND or gomokubench:LEVEL")
    return _net_agent(name, path, _count(v, spec) if v else visits, seed, device)


def _count(text: str, spec: str, lo: int = 1) -> int:
    if not text.isdigit() or int(text) < lo:
        raise ValueError(f"bad player {spec!r}: expected a whole number >= {lo} after the colon")
    return int(text)


def _argv(text: str, spec: str) -> list[str]:
    argv = shlex.split(text)
    if not argv:
        raise ValueError(f"bad player {spec!r}: empty command line")
    return argv


def _net_agent(name: str, path: str, visits: int, seed: int | None, device: str) -> SearchAgent:
    from zero9.checkpoint import load_net
    from zero9.evaluator import NetEvaluator

    net, meta = load_net(path, device=device)

    def make_net_player(g: Game):
        from zero9.player import SearchPlayer

        if net.size != g.size:
            raise ValueError(f"net {path} is for {net.size}x{net.size}, the match is {g.size}x{g.size}")
        return SearchPlayer(g, NetEvaluator(net), visits=visits, seed=seed)

    return SearchAgent(name, make_net_player)


# ----------------------------------------------------------------------------- one game


@dataclass
class GameResult:
    """One finished game, from the match's point of view."""

    index: int
    black: str
    white: str
    result: str  # 'B+3.5', 'W+R', 'B+F' (white faulted), '0', ...
    winner: int  # BLACK, WHITE or EMPTY
    moves: int
    score_a: float  # 1, 0.5 or 0 for player A
    sgf: str | None = None
    events: list[str] = field(default_factory=list)


def play_game(game: Game, black, white, max_moves: int | None = None) -> tuple[Position, str, list[str]]:
    """Play one game between two agents: (final position, result string, logged events)."""
    agents = {BLACK: black, WHITE: white}
    events: list[str] = []
    for colour, agent in agents.items():
        try:
            agent.new_game(game)
        except AgentFault as e:
            events.append(f"{agent.name} failed to start: {e}")
            return game.new_position(), ("W" if colour == BLACK else "B") + "+F", events
    position = game.new_position()
    limit = max_moves or 4 * game.size * game.size
    while not position.is_terminal() and position.move_number < limit:
        colour = position.to_play
        agent = agents[colour]
        loser = "B" if colour == BLACK else "W"
        winner = "W" if colour == BLACK else "B"
        try:
            action = agent.genmove(position)
        except AgentFault as e:
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) forfeits: {e}")
            return position, f"{winner}+{e.kind}", events
        except Exception as e:  # a crash inside an in-process player is a fault too
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) crashed: "
                          f"{type(e).__name__}: {e}")
            return position, f"{winner}+F", events
        if action is None:
            position = position.resign()
            break
        if not position.is_legal(action):
            vertex = _safe_vertex(game, action)
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) played illegal {vertex}")
            return position, f"{winner}+F", events
        position = position.play(action)
    if not position.is_terminal():
        events.append(f"stopped at the match's cap of {limit} moves")
        if game.name != "go":
            return position, "0", events
        score = position.score()
        return position, "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}", events
    return position, position.result_string(), events


def _safe_vertex(game: Game, action: Any) -> str:
    try:
        return game.action_to_vertex(action)
    except (ValueError, TypeError, IndexError):
        return repr(action)


def _winner_of(result: str) -> int:
    return BLACK if result.startswith("B+") else WHITE if result.startswith("W+") else EMPTY


# ----------------------------------------------------------------------------- the match


@dataclass
class MatchResult:
    """Player A's results against player B."""

    a: str
    b: str
    games: list[GameResult] = field(default_factory=list)
    sprt_decision: str | None = None

    @property
    def wins(self) -> int:
        return sum(g.score_a == 1 for g in self.games)

    @property
    def losses(self) -> int:
        return sum(g.score_a == 0 for g in self.games)

    @property
    def draws(self) -> int:
        return sum(g.score_a == 0.5 for g in self.games)

    def summary(self, elo0: float | None = None, elo1: float | None = None) -> str:
        from zero9.elo import elo_interval, sprt, win_rate_interval

        w, losses, d = self.wins, self.losses, self.draws
        p, lo, hi = win_rate_interval(w, losses, d)
        elo, elo_lo, elo_hi = elo_interval(w, losses, d)
        lines = [f"{self.a} vs {self.b}: {w} wins, {losses} losses, {d} draws ({len(self.games)} games)",
                 f"win rate {100 * p:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%] (95%)",
                 f"Elo difference {_elo_text(elo)} [{_elo_text(elo_lo)}, {_elo_text(elo_hi)}] (95%)"]
        if elo0 is not None and elo1 is not None:
            llr, lower, upper, decision = sprt(w, losses, d, elo0, elo1)
            verdict = {"H1": f"H1 accepted: A is stronger (>= {elo1:g} Elo)",
                       "H0": f"H0 accepted: A is not {elo1:g} Elo stronger"}.get(decision, "undecided")
            lines.append(f"SPRT elo0={elo0:g} elo1={elo1:g}: LLR {llr:.2f} "
                         f"[{lower:.2f}, {upper:.2f}]: {verdict}")
        return "\n".join(lines)


def _elo_text(x: float) -> str:
    return "+inf" if x == float("inf") else "-inf" if x == float("-inf") else f"{x:+.0f}"


@dataclass
class _Job:
    spec_a: Any
    spec_b: Any
    game: dict
    visits: int
    seed: int | None
    device: str
    move_timeout: float
    max_moves: int | None
    sgf_dir: str | None


_WORKER: dict[str, Any] = {}  # per process: the job and its live agents


def _init_worker(job: _Job, threads: int) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)
    game = make_game(**job.game)
    _WORKER.clear()
    _WORKER["job"] = job
    _WORKER["agents"] = (
        make_player(job.spec_a, game, job.visits, job.seed, job.device, job.move_timeout),
        make_player(job.spec_b, game, job.visits, None if job.seed is None else job.seed + 1, job.device,
                    job.move_timeout),
    )


def _close_worker() -> None:
    for agent in _WORKER.get("agents", ()):
        agent.close()
    _WORKER.clear()


def _play_one(index: int) -> GameResult:
    from zero9.sgf import save_sgf, write_sgf

    job: _Job = _WORKER["job"]
    a, b = _WORKER["agents"]
    game = make_game(**job.game)
    black, white = (a, b) if index % 2 == 0 else (b, a)
    position, result, events = play_game(game, black, white, job.max_moves)
    winner = _winner_of(result)
    a_colour = BLACK if index % 2 == 0 else WHITE
    score_a = 0.5 if winner == EMPTY else 1.0 if winner == a_colour else 0.0
    moves = _moves_of(position)
    record = GameResult(index, black.name, white.name, result, winner, len(moves), score_a, events=events)
    if job.sgf_dir:
        text = write_sgf(game, _coloured(moves), result, properties={
            "PB": black.name, "PW": white.name, "GN": f"game {index}", "GC": "; ".join(events)})
        record.sgf = str(save_sgf(Path(job.sgf_dir) / f"game-{index:04d}.sgf", text))
    return record


def play_match(player_a: str | dict, player_b: str | dict, game: Game, n_games: int, *, parallel: int = 1,
               visits: int = DEFAULT_VISITS, seed: int | None = None, device: str = "cpu",
               sgf_dir: str | os.PathLike | None = None, sprt: tuple[float, float] | None = None,
               move_timeout: float = DEFAULT_MOVE_TIMEOUT, max_moves: int | None = None, first_index: int = 0,
               log=None) -> MatchResult:
    """Play ``n_games`` between A and B (colours alternating); stop early if ``sprt=(elo0, elo1)`` decides.

    ``parallel`` > 1 plays that many games at once in worker processes (each with its
    own agents and ``cores // parallel`` torch threads). ``log`` (a file) gets one line per game.
    """
    if n_games < 0:
        raise ValueError(f"number of games must be >= 0, got {n_games}")
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    if sgf_dir is not None:
        Path(sgf_dir).mkdir(parents=True, exist_ok=True)
    # Build once here so a bad spec fails before any game (and names come out right).
    for spec in (player_a, player_b):
        make_player(spec, game, visits, seed, device, move_timeout).close()
    job = _Job(player_a, player_b, game.to_dict(), visits, seed, device, move_timeout, max_moves,
               None if sgf_dir is None else str(sgf_dir))
    result = MatchResult(spec_name(player_a), spec_name(player_b))
    indices = list(range(first_index, first_index + n_games))
    events_log = Path(sgf_dir) / "events.log" if sgf_dir is not None else None

    def record(r: GameResult) -> bool:
        result.games.append(r)
        colour = "black" if r.index % 2 == 0 else "white"
        score = {1.0: "win", 0.5: "draw", 0.0: "loss"}[r.score_a]
        if log is not None:
            print(f"game {r.index}: {result.a} ({colour}) vs {result.b}: {r.result} -> A {score}"
                  f" [{result.wins}-{result.losses}-{result.draws}]", file=log, flush=True)
        for event in r.events:
            line = f"game {r.index}: {event}"
            print(f"zero9 match: {line}", file=sys.stderr, flush=True)
            if events_log is not None:
                with open(events_log, "a") as f:
                    f.write(line + "\n")
        if sprt is not None:
            from zero9.elo import sprt as sprt_test

            result.sprt_decision = sprt_test(result.wins, result.losses, result.draws, *sprt)[3]
            return result.sprt_decision is not None
        return False

    if parallel == 1 or n_games <= 1:
        _init_worker(job, 0)
        try:
            for i in indices:
                if record(_play_one(i)):
                    break
        finally:
            _close_worker()
    else:
        workers = min(parallel, n_games)
        threads = max(1, (os.cpu_count() or 1) // workers)
        ctx = mp.get_context("spawn")
        with cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                    initargs=(job, threads)) as pool:
            futures = [pool.submit(_play_one, i) for i in indices]
            try:
                for fut in cf.as_completed(futures):
                    if record(fut.result()):
                        break
            finally:
                for fut in futures:
                    fut.cancel()
    result.games.sort(key=lambda g: g.index)
    return result


def play_match_scores(game: Game, spec_a: str | dict, spec_b: str | dict, games: int, first_index: int = 0,
                      seed: int | None = None, **options: Any) -> list[float]:
    """Player A's scores (1, 0.5, 0) in game-index order: the autotrain loop's entry point."""
    result = play_match(spec_a, spec_b, game, games, seed=seed, first_index=first_index, **options)
    return [g.score_a for g in result.games]


def play_match_segments(game: Game, segments: list[dict[str, Any]]) -> list[list[float]]:
    """:func:`play_match_scores` for each segment's keyword arguments in turn (one worker's share)."""
    return [play_match_scores(game, **segment) for segment in segments]


# ----------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="player A: net file[@visits], random, uniform:V, mcts:N, gnugo:L, "
                        "'gtp:COMMAND LINE', 'pbrain:COMMAND LINE' or gomokubench:LEVEL")
    parser.add_argument("b", help="player B (same forms)")
    parser.add_argument("--games", type=int, default=10, help="number of games (default 10)")
    add_game_arguments(parser)
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, help="visits per move of zero9 nets")
    parser.add_argument("--parallel", type=int, default=1, help="games played at once (worker processes)")
    parser.add_argument("--sgf-dir", help="write one SGF per game (and events.log) here")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="stop early once an SPRT of ELO0 against ELO1 decides (alpha = beta = 0.05)")
    parser.add_argument("--move-timeout", type=float, default=DEFAULT_MOVE_TIMEOUT,
                        help="seconds an external engine may take per move before it forfeits")
    parser.add_argument("--max-moves", type=int, help="adjudicate a game after this many moves")
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto for zero9 nets")


def run(args: argparse.Namespace) -> int:
    try:
        game = game_from_args(args)
        if args.games < 1:
            raise ValueError(f"--games must be >= 1, got {args.games}")
        result = play_match(args.a, args.b, game, args.games, parallel=args.parallel, visits=args.visits,
                            seed=args.seed, device=args.device, sgf_dir=args.sgf_dir,
                            sprt=tuple(args.sprt) if args.sprt else None, move_timeout=args.move_timeout,
                            max_moves=args.max_moves, log=sys.stdout)
    except ValueError as e:
        print(f"zero9 match: {e}", file=sys.stderr)
        return 2
    print(result.summary(*(args.sprt or (None, None))))
    return 0
