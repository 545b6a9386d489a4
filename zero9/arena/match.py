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
  logged and the agent is restarted for the next game.
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
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from zero9.arena.elo import elo_interval, sprt, win_rate_interval
from zero9.arena.elo import sprt as sprt_test
from zero9.arena.openings import opening_for_game, read_openings
from zero9.arena.players import (
    DEFAULT_MOVE_TIMEOUT,
    DEFAULT_TURN_TIME,
    AgentFault,
    EngineOptions,
    PbrainAgent,
    make_player,
    parse_info,
)
from zero9.games import (
    BLACK,
    EMPTY,
    WHITE,
    Game,
    Position,
    actions_played,
    add_game_arguments,
    game_from_args,
    make_game,
    play_moves,
)
from zero9.games.sgf import moves_from_position, save_sgf, write_sgf
from zero9.search.player import add_threat_arguments
from zero9.settings import PlayConfig, SearchConfig

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
               visits: int = PlayConfig.visits, seed: int | None = None, device: str = "cpu",
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
    # Build once here so a bad spec fails before any game (and names come out right).
    names = []
    for spec in (player_a, player_b):
        agent = make_player(spec, game, visits, seed, device, move_timeout, engines)
        names.append(agent.name)
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
            print(f"zero9 match: {line}", file=sys.stderr, flush=True)
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
    parser.add_argument("a", help="player A: net file[@visits], random, uniform:V, mcts:N, gnugo:L, pachi:N, "
                        "'gtp:COMMAND LINE', 'pbrain:[KEY=VALUE ...] COMMAND LINE' or gomokubench:LEVEL")
    parser.add_argument("b", help="player B (same forms)")
    parser.add_argument("--games", type=int, default=10, help="number of games (default 10)")
    add_game_arguments(parser)
    parser.add_argument("--visits", type=int, default=PlayConfig.visits,
                        help=f"visits per move of zero9 nets (default {PlayConfig.visits})")
    parser.add_argument("--parallel", type=int, default=1, help="games played at once (worker processes)")
    parser.add_argument("--sgf-dir", help="write one SGF per game (and events.log) here")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="stop early once an SPRT of ELO0 against ELO1 decides (alpha = beta = 0.05)")
    parser.add_argument("--move-timeout", type=float, default=DEFAULT_MOVE_TIMEOUT,
                        help="seconds an external engine may take per move before it forfeits")
    parser.add_argument("--turn-time", type=float, default=DEFAULT_TURN_TIME,
                        help=f"seconds per move pbrain brains are told they have (INFO timeout_turn, "
                        f"default {DEFAULT_TURN_TIME:g})")
    parser.add_argument("--game-time", type=float, default=0.0,
                        help="seconds each player has for all its moves of a game (0 = no game clock); "
                        "running out loses on time")
    parser.add_argument("--pbrain-info", action="append", default=[], metavar="KEY=VALUE",
                        help="send INFO KEY VALUE to every pbrain brain (repeatable), e.g. max_node=10000")
    add_threat_arguments(parser)
    search = parser.add_argument_group("search of zero9 nets")
    search.add_argument("--c-puct", type=float, default=SearchConfig.c_puct,
                        help=f"PUCT exploration constant (default {SearchConfig.c_puct:g})")
    search.add_argument("--fpu-reduction", type=float, default=SearchConfig.fpu_reduction,
                        help=f"first-play urgency reduction (default {SearchConfig.fpu_reduction:g})")
    search.add_argument("--batch-size", type=int, default=PlayConfig.batch_size,
                        help=f"leaves per net call, with virtual loss (default {PlayConfig.batch_size}; "
                        "1: one leaf at a time)")
    search.add_argument("--lcb", action="store_true",
                        help="choose the move by its lower confidence bound (Leela Zero's), not by visits")
    parser.add_argument("--pachi", help="the Pachi binary for pachi:N players (default $ZERO9_PACHI, "
                        "then pachi on PATH)")
    parser.add_argument("--openings", help="file of openings, one per line as moves (H8 I9 ...): each is "
                        "played twice, colours swapped (docs/cli-match.md)")
    parser.add_argument("--max-moves", type=int, help="adjudicate a game after this many moves")
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto for zero9 nets")


def engines_from_args(args: argparse.Namespace) -> EngineOptions:
    """The engine options of ``zero9 match``'s command line; ValueError for a bad one."""
    for option, value in (("--turn-time", args.turn_time), ("--game-time", args.game_time)):
        if value < 0:
            raise ValueError(f"{option} must be >= 0 seconds, got {value:g}")
    if args.c_puct <= 0:
        raise ValueError(f"--c-puct must be > 0, got {args.c_puct:g}")
    if args.fpu_reduction < 0:
        raise ValueError(f"--fpu-reduction must be >= 0, got {args.fpu_reduction:g}")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
    if args.game_time and args.game_time < args.turn_time:
        raise ValueError(f"--game-time {args.game_time:g} s is shorter than one "
                         f"--turn-time {args.turn_time:g} s")
    return EngineOptions(pachi=args.pachi, pbrain_info=tuple(parse_info(args.pbrain_info, "--pbrain-info")),
                         turn_time=args.turn_time, game_time=args.game_time, threats=args.threats,
                         threat_reading=args.threat_reading, c_puct=args.c_puct,
                         fpu_reduction=args.fpu_reduction, batch_size=args.batch_size, lcb=args.lcb)


def run(args: argparse.Namespace) -> int:
    try:
        game = game_from_args(args)
        if args.games < 1:
            raise ValueError(f"--games must be >= 1, got {args.games}")
        engines = engines_from_args(args)
        openings = read_openings(args.openings, game) if args.openings else None
        result = play_match(args.a, args.b, game, args.games, parallel=args.parallel, visits=args.visits,
                            seed=args.seed, device=args.device, sgf_dir=args.sgf_dir,
                            sprt=tuple(args.sprt) if args.sprt else None, move_timeout=args.move_timeout,
                            max_moves=args.max_moves, log=sys.stdout, engines=engines, openings=openings)
    except ValueError as e:
        print(f"zero9 match: {e}", file=sys.stderr)
        return 2
    print(result.summary(*(args.sprt or (None, None))))
    return 0
