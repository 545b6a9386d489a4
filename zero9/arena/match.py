"""``zero9 match``: games between zero9 nets and programs nobody here wrote, with the Elo maths.

Vocabulary:

- **player spec**: what a command line names a player by (``PATH[@V]``, ``uniform:V``,
  ``mcts:N``, ``random``, ``level:NAME``, ``gnugo:L``, ``pachi:N``, ``gtp:COMMAND``,
  ``pbrain:COMMAND``, ``gomokubench:LEVEL``); the table and the one factory that builds
  them are in :mod:`zero9.arena.players`.
- **agent**: a live player built from a spec (:func:`make_player`): ``new_game(game)``,
  ``genmove(position) -> action or None`` (None = resign), ``close()``. External engines
  are kept in sync by replaying the moves they have not seen.
- **fault**: an agent that crashes, times out, answers nonsense or plays an illegal
  move loses that game (SGF result ``B+F`` / ``W+F``, ``+T`` for time); the event is
  logged and the agent is restarted for the next game. One that cannot start at all stops
  the match before its first game.
- **adjudication**: Go ends after two passes (or at the move cap) and is scored by
  Tromp-Taylor; Gomoku ends at five in a row or a full board (a draw).
- **time controls**: ``--move-timeout`` (a move slower than this forfeits), ``--turn-time``
  (what a pbrain brain is told it has per move) and ``--game-time`` (a clock per player and
  game: running out loses on time, ``+T``; brains hear it as ``timeout_match``/``time_left``).
- **opening**: the moves a game starts from (:mod:`zero9.arena.openings`); with
  ``--openings FILE`` games ``2k`` and ``2k + 1`` start from opening ``k``, colours swapped.
- **match log**: with ``--sgf-dir``, ``events.log`` (faults) and ``engines.log`` (what pbrain
  brains said: MESSAGE/DEBUG lines and stderr) next to the SGFs.
- **score**: from player A's view, 1 / 0.5 / 0 per game. Colours alternate by game
  index: A is black in even games.

The command line (``zero9 match``) is :mod:`zero9.cli.match`.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import torch

from zero9.arena.elo import elo_interval, sprt, win_rate_interval
from zero9.arena.elo import sprt as sprt_test
from zero9.arena.openings import opening_for_game
from zero9.arena.players import DEFAULT_MOVE_TIMEOUT, AgentFault, EngineOptions, PbrainAgent, make_player
from zero9.games import (
    BLACK,
    EMPTY,
    WHITE,
    Game,
    Position,
    actions_played,
    make_game,
    play_moves,
)
from zero9.games.go import GoPosition
from zero9.games.sgf import moves_from_position, save_sgf, write_sgf
from zero9.settings import PlayConfig
from zero9.util.logs import configure_logging

logger = logging.getLogger(__name__)  # "log" is play_match's stream of game lines

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
    engine_log: list[str] = field(default_factory=list)  # "NAME: line" from pbrain brains


def play_game(game: Game, black, white, max_moves: int | None = None, opening: tuple[int, ...] = (),
              game_time: float = 0.0) -> tuple[Position, str, list[str]]:
    """Play one game between two agents from ``opening``: (final position, result string, logged events).

    ``game_time`` > 0 gives each player that many seconds for all its moves of the game.
    """
    agents = {BLACK: black, WHITE: white}
    events: list[str] = []
    for colour, agent in agents.items():
        try:
            agent.new_game(game)
        except AgentFault as e:
            events.append(f"{agent.name} failed to start: {e}")
            return game.new_position(), ("W" if colour == BLACK else "B") + "+F", events
    position = play_moves(game, list(opening))
    limit = max_moves or 4 * game.size * game.size
    used = {BLACK: 0.0, WHITE: 0.0}  # seconds of thinking per colour, for the game clock
    while not position.is_terminal() and position.move_number < limit:
        colour = position.to_play
        agent = agents[colour]
        loser = "B" if colour == BLACK else "W"
        winner = "W" if colour == BLACK else "B"
        if game_time and isinstance(agent, PbrainAgent):
            agent.time_left_ms = round(1000 * (game_time - used[colour]))
        started = time.monotonic()
        try:
            action = agent.genmove(position)
        except AgentFault as e:
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) forfeits: {e}")
            return position, f"{winner}+{e.kind}", events
        except Exception as e:  # a crash inside an in-process player is a fault too
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) crashed: "
                          f"{type(e).__name__}: {e}")
            return position, f"{winner}+F", events
        used[colour] += time.monotonic() - started
        if game_time and used[colour] > game_time:
            events.append(f"move {position.move_number + 1}: {agent.name} ({loser}) ran out of its "
                          f"{game_time:g} s game time")
            return position, f"{winner}+T", events
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
        score = cast(GoPosition, position).score()
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
        w, losses, d = self.wins, self.losses, self.draws
        p, lo, hi = win_rate_interval(w, losses, d)
        elo, elo_lo, elo_hi = elo_interval(w, losses, d)
        lines = [f"{self.a} vs {self.b}: {w} wins, {losses} losses, {d} draws ({len(self.games)} games)",
                 f"win rate {100 * p:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%] (95%)",
                 f"Elo difference {_elo_text(elo)} [{_elo_text(elo_lo)}, {_elo_text(elo_hi)}] (95%)"]
        if elo0 is not None and elo1 is not None:
            llr, lower, upper, decision = sprt(w, losses, d, elo0, elo1)
            verdict = {"H1": f"H1 accepted: A is stronger (>= {elo1:g} Elo)",
                       "H0": f"H0 accepted: A is not {elo1:g} Elo stronger"}.get(decision or "", "undecided")
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
    engines: EngineOptions = field(default_factory=EngineOptions)
    openings: list[tuple[int, ...]] | None = None


_WORKER: dict[str, Any] = {}  # per process: the job and its live agents


def _init_worker(job: _Job, threads: int) -> None:
    if threads:
        torch.set_num_threads(threads)
    game = make_game(**job.game)
    _WORKER.clear()
    _WORKER["job"] = job
    _WORKER["agents"] = (
        make_player(job.spec_a, game, job.visits, job.seed, job.device, job.move_timeout, job.engines),
        make_player(job.spec_b, game, job.visits, None if job.seed is None else job.seed + 1, job.device,
                    job.move_timeout, job.engines),
    )


def _init_spawned_worker(job: _Job, threads: int) -> None:
    configure_logging()  # spawned without the parent's handler: info lines would be dropped
    _init_worker(job, threads)


def _close_worker() -> None:
    for agent in _WORKER.get("agents", ()):
        agent.close()
    _WORKER.clear()


def _play_one(index: int) -> GameResult:
    job: _Job = _WORKER["job"]
    a, b = _WORKER["agents"]
    game = make_game(**job.game)
    black, white = (a, b) if index % 2 == 0 else (b, a)
    opening = opening_for_game(job.openings, index)
    position, result, events = play_game(game, black, white, job.max_moves, opening, job.engines.game_time)
    winner = _winner_of(result)
    a_colour = BLACK if index % 2 == 0 else WHITE
    score_a = 0.5 if winner == EMPTY else 1.0 if winner == a_colour else 0.0
    moves = list(actions_played(position))
    record = GameResult(index, black.name, white.name, result, winner, len(moves), score_a, events=events)
    for agent in (black, white):
        if isinstance(agent, PbrainAgent):
            record.engine_log += [f"{agent.name}: {line}" for line in agent.drain_log()]
    if job.sgf_dir:
        notes = ([f"opening {index // 2 % len(job.openings)}: {len(opening)} moves"] if job.openings else [])
        text = write_sgf(game, moves_from_position(position), result, properties={
            "PB": black.name, "PW": white.name, "GN": f"game {index}", "GC": "; ".join(notes + events)})
        record.sgf = str(save_sgf(Path(job.sgf_dir) / f"game-{index:04d}.sgf", text))
    return record


def play_match(player_a: str | dict, player_b: str | dict, game: Game, n_games: int, *, parallel: int = 1,
               visits: int = cast(int, PlayConfig.visits), seed: int | None = None, device: str = "cpu",
               sgf_dir: str | os.PathLike | None = None, sprt: tuple[float, float] | None = None,
               move_timeout: float = DEFAULT_MOVE_TIMEOUT, max_moves: int | None = None, first_index: int = 0,
               log=None, engines: EngineOptions | None = None,
               openings: list[tuple[int, ...]] | None = None) -> MatchResult:
    """Play ``n_games`` between A and B (colours alternating); stop early if ``sprt=(elo0, elo1)`` decides.

    ``parallel`` > 1 plays that many games at once in worker processes (each with its
    own agents and ``cores // parallel`` torch threads). ``log`` (a file) gets one line per game.
    ``engines`` says how to run external engines; ``openings`` are the start positions
    (see :mod:`zero9.arena.openings`).
    """
    if n_games < 0:
        raise ValueError(f"number of games must be >= 0, got {n_games}")
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    if sgf_dir is not None:
        Path(sgf_dir).mkdir(parents=True, exist_ok=True)
    engines = engines or EngineOptions()
    # Build and start each player once here, so a bad spec, or an engine that cannot start (a
    # wrong path, a bad config), stops the match before any game: a never-started engine would
    # otherwise forfeit every game and the match would read as a clean sweep.
    names = []
    for spec in (player_a, player_b):
        agent = make_player(spec, game, visits, seed, device, move_timeout, engines)
        names.append(agent.name)
        try:
            agent.new_game(game)
        except AgentFault as e:
            raise ValueError(f"{agent.name} could not start a game, so no game was played: {e}") from None
        finally:
            agent.close()
    job = _Job(player_a, player_b, game.to_dict(), visits, seed, device, move_timeout, max_moves,
               None if sgf_dir is None else str(sgf_dir), engines, openings)
    result = MatchResult(*names)
    indices = list(range(first_index, first_index + n_games))
    events_log = Path(sgf_dir) / "events.log" if sgf_dir is not None else None
    engines_log = Path(sgf_dir) / "engines.log" if sgf_dir is not None else None

    def record(r: GameResult) -> bool:
        result.games.append(r)
        colour = "black" if r.index % 2 == 0 else "white"
        score = {1.0: "win", 0.5: "draw", 0.0: "loss"}[r.score_a]
        if log is not None:
            print(f"game {r.index}: {result.a} ({colour}) vs {result.b}: {r.result} -> A {score}"
                  f" [{result.wins}-{result.losses}-{result.draws}]", file=log, flush=True)
        for event in r.events:
            line = f"game {r.index}: {event}"
            logger.warning("zero9 match: %s", line)
            if events_log is not None:
                with open(events_log, "a") as f:
                    f.write(line + "\n")
        if engines_log is not None and r.engine_log:
            with open(engines_log, "a") as f:
                f.writelines(f"game {r.index}: {line}\n" for line in r.engine_log)
        if sprt is not None:
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
        with cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_spawned_worker,
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
