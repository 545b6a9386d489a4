"""Game review: every move of a game searched again, and what each one cost (KaTrain's review).

Vocabulary:

- **value of a position**: the winrate of the search's most-visited move there, from the
  side to move's view (0..1): what the position is worth with the engine's best play.
  A finished position is worth its result (1 won, 0 lost, 0.5 drawn).
- **winrate before** a move: the value of the position the mover faced.
  **winrate after**: the value of the position the move made, seen by the mover
  (``1 -`` the opponent's value there). Both are from the **mover's** side.
- **winrate loss**: ``max(0, before - after)``: what the move gave away against the
  engine's best move (search noise can make a good move look a little better than best;
  that is not a gain, so it counts as 0).
- **class** of a move by its loss and the :class:`Thresholds` (defaults after KaTrain's
  bands): ``"blunder"`` (>= 20 %), ``"mistake"`` (>= 10 %), ``"inaccuracy"`` (>= 5 %),
  else ``"good"``.
- **best move** and **PV**: the search's most-visited move in the position before the
  move and its principal variation (vertices); **match rate**: the share of a player's
  moves that were the engine's best move.
- **review**: ``{"moves": [...], "summary": {...}, ...}``, the JSON ``zero9 review`` writes:
  per move ``move_number`` (1 = first move), ``color`` (``"B"``/``"W"``), ``move``,
  ``best_move``, ``winrate_before``, ``winrate_after``, ``winrate_loss``, ``class`` and
  ``pv``; per player in ``summary`` the moves, the count in each class, the average loss
  and the match rate.

Each position is searched once (``visits`` per position, the tree of the previous
position reused), so a game of ``M`` moves costs ``M + 1`` searches.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from zero9.arena.players import make_player
from zero9.games import BLACK, WHITE, Game, Position
from zero9.games.sgf import SgfRecord, read_sgf
from zero9.nn.checkpoint import default_net_path
from zero9.search.player import SearchPlayer
from zero9.util.files import atomic_write_text

DEFAULT_REVIEW_VISITS = 200
CLASSES = ("good", "inaccuracy", "mistake", "blunder")  # mildest first
COLOUR_LETTER = {BLACK: "B", WHITE: "W"}


@dataclass(frozen=True)
class Thresholds:
    """The smallest winrate loss (0..1) of each class of bad move."""

    inaccuracy: float = 0.05
    mistake: float = 0.10
    blunder: float = 0.20

    def __post_init__(self):
        if not 0 < self.inaccuracy <= self.mistake <= self.blunder <= 1:
            raise ValueError(f"thresholds must rise within (0, 1]: inaccuracy {self.inaccuracy}, "
                             f"mistake {self.mistake}, blunder {self.blunder}")

    def classify(self, loss: float) -> str:
        if loss >= self.blunder:
            return "blunder"
        if loss >= self.mistake:
            return "mistake"
        if loss >= self.inaccuracy:
            return "inaccuracy"
        return "good"


@dataclass
class Analysis:
    """One position searched: its value for the side to move, the best move and its line."""

    value: float
    best_move: int | None
    pv: list[int]


def analyse_position(player: SearchPlayer, position: Position) -> Analysis:
    """Search ``position`` at the player's visits (a finished position is worth its result)."""
    if position.is_terminal():
        return Analysis((position.result_value(position.to_play) + 1) / 2, None, [])
    decision = player.choose(position)
    best = decision.stats[0] if decision.stats else None
    if best is None:  # not a single visit finished: the raw net value and the best prior
        return Analysis((player.value(position) + 1) / 2, decision.action, [decision.action])
    return Analysis(best.winrate, best.action, list(best.pv))


def review_positions(player: SearchPlayer, positions: list[Position], thresholds: Thresholds = Thresholds(),
                     progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Review the moves leading from ``positions[0]`` through ``positions[-1]`` (one list entry per move).

    ``positions`` is the line of play (each one the previous one after a move);
    ``progress(i)`` is called after each position is searched.
    """
    game = positions[0].game
    analyses = []
    for i, position in enumerate(positions):
        analyses.append(analyse_position(player, position))
        if progress is not None:
            progress(i + 1)
    moves = []
    for i, (position, after) in enumerate(zip(positions[:-1], positions[1:], strict=True)):
        before, next_ = analyses[i], analyses[i + 1]
        winrate_after = 1.0 - next_.value
        loss = max(0.0, before.value - winrate_after)
        moves.append({
            "move_number": i + 1,
            "color": COLOUR_LETTER[position.to_play],
            "move": game.action_to_vertex(after.last_move),
            "best_move": None if before.best_move is None else game.action_to_vertex(before.best_move),
            "winrate_before": round(before.value, 4),
            "winrate_after": round(winrate_after, 4),
            "winrate_loss": round(loss, 4),
            "class": thresholds.classify(loss),
            "pv": [game.action_to_vertex(a) for a in before.pv],
        })
    return moves


def summarise(moves: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per colour: moves, the count of each class, average winrate loss, match rate with the best move."""
    summary = {}
    for colour in ("B", "W"):
        own = [m for m in moves if m["color"] == colour]
        counts = {name: sum(m["class"] == name for m in own) for name in CLASSES}
        summary[colour] = {
            "moves": len(own),
            **counts,
            "average_loss": round(sum(m["winrate_loss"] for m in own) / len(own), 4) if own else 0.0,
            "match_rate": round(sum(m["move"] == m["best_move"] for m in own) / len(own), 4) if own else 0.0,
        }
    return summary


def line_from_record(record: SgfRecord, source: str | Path = "") -> list[Position]:
    """The positions of an SGF game's main line, first to last. ValueError for what cannot be replayed."""
    if record.setup:
        raise ValueError(f"{source}: setup stones (AB/AW) are not supported: review needs a game "
                         "played from an empty board")
    position = record.game.new_position()
    line = [position]
    for number, (colour, action) in enumerate(record.moves, start=1):
        if colour != position.to_play:
            raise ValueError(f"{source}: move {number} is by {COLOUR_LETTER[colour]} but "
                             f"{COLOUR_LETTER[position.to_play]} was to play")
        position = position.play(action)  # IllegalMove (a ValueError) names the move
        line.append(position)
    if len(line) < 2:
        raise ValueError(f"{source}: the game has no moves to review")
    return line


def review_player(game: Game, net: str | None, visits: int, seed: int | None = None,
                  device: str = "cpu") -> SearchPlayer:
    """The search that judges: ``net`` (a net file; 'uniform' for uniform priors), else the shipped net."""
    if net == "uniform":
        spec = f"uniform:{visits}"
    else:
        path = net or default_net_path(game.name, game.size)
        if path is None:
            raise ValueError(f"no shipped net for {game.name} {game.size}x{game.size}: "
                             "give --net FILE (or --net uniform for a net-free search)")
        spec = f"{path}@{visits}"
    agent = make_player(spec, game, visits=visits, seed=seed, device=device)
    agent.new_game(game)
    player = agent.player
    player.resign_threshold = None  # a reviewer never resigns
    return player


def review_game(record: SgfRecord, player: SearchPlayer, thresholds: Thresholds = Thresholds(),
                source: str | Path = "", show_progress: bool = False) -> dict[str, Any]:
    """Review an SGF game: the JSON-ready review (see the module docstring)."""
    line = line_from_record(record, source)
    bar = tqdm(total=len(line), desc="review", unit="pos", disable=not show_progress, file=sys.stderr)
    try:
        moves = review_positions(player, line, thresholds, progress=lambda i: bar.update(i - bar.n))
    finally:
        bar.close()
    return {
        "game": record.game.to_dict(),
        "black": record.black,
        "white": record.white,
        "result": record.result,
        "visits": player.visits,
        "thresholds": {"inaccuracy": thresholds.inaccuracy, "mistake": thresholds.mistake,
                       "blunder": thresholds.blunder},
        "moves": moves,
        "summary": summarise(moves),
    }


def black_winrates(moves: list[dict[str, Any]]) -> list[float]:
    """Black's winrate after each move (index 0: before the first move), for the graph."""
    if not moves:
        return []
    first = moves[0]
    start = first["winrate_before"] if first["color"] == "B" else 1 - first["winrate_before"]
    return [start] + [m["winrate_after"] if m["color"] == "B" else 1 - m["winrate_after"] for m in moves]


def plot_review(review: dict[str, Any], path: str | Path) -> Path:
    """Save the winrate graph over the game, mistakes marked by class (matplotlib PNG)."""
    import matplotlib  # optional: only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    moves = review["moves"]
    curve = black_winrates(moves)
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.plot(range(len(curve)), [100 * w for w in curve], color="black", lw=1.5, label="Black's winrate")
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    for name, colour in (("inaccuracy", "gold"), ("mistake", "darkorange"), ("blunder", "red")):
        marked = [m for m in moves if m["class"] == name]
        if marked:
            ax.scatter([m["move_number"] for m in marked], [100 * curve[m["move_number"]] for m in marked],
                       color=colour, edgecolor="black", zorder=3, s=36, label=name)
    ax.set_xlabel("move")
    ax.set_ylabel("Black's winrate, %")
    ax.set_ylim(0, 100)
    ax.set_xlim(0, max(1, len(curve) - 1))
    ax.set_title(f"{review.get('black') or 'Black'} vs {review.get('white') or 'White'}   "
                 f"{review.get('result', '')}")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def format_report(review: dict[str, Any], flagged: tuple[str, ...] = ("mistake", "blunder")) -> str:
    """The text ``zero9 review`` prints: the flagged moves, then one summary line per player."""
    lines = [f"{'move':>4} {'who':>3} {'played':>6} {'best':>6} {'before':>7} {'after':>7} {'loss':>6}  "
             "class       best line"]
    for m in review["moves"]:
        if m["class"] in flagged:
            lines.append(f"{m['move_number']:>4} {m['color']:>3} {m['move']:>6} {m['best_move'] or '-':>6} "
                         f"{100 * m['winrate_before']:>6.1f}% {100 * m['winrate_after']:>6.1f}% "
                         f"{100 * m['winrate_loss']:>5.1f}%  {m['class']:<11} {' '.join(m['pv'][:8])}")
    if len(lines) == 1:
        lines.append("  (no mistakes or blunders)")
    lines.append("")
    names = {"B": review.get("black") or "Black", "W": review.get("white") or "White"}
    for colour, s in review["summary"].items():
        lines.append(f"{colour} {names[colour]}: moves {s['moves']}, blunders {s['blunder']}, "
                     f"mistakes {s['mistake']}, inaccuracies {s['inaccuracy']}, average loss "
                     f"{100 * s['average_loss']:.1f}%, match rate {100 * s['match_rate']:.0f}%")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sgf", help="the game to review (an SGF file, Go or Gomoku)")
    parser.add_argument("--net", default=None,
                        help="net file that judges (default: the shipped net for the game and size; "
                             "'uniform' for a net-free search)")
    parser.add_argument("--visits", type=int, default=DEFAULT_REVIEW_VISITS,
                        help=f"visits per position (default {DEFAULT_REVIEW_VISITS})")
    parser.add_argument("--thresholds", type=float, nargs=3, metavar=("INACCURACY", "MISTAKE", "BLUNDER"),
                        default=None, help="winrate losses in %% that start each class (default 5 10 20)")
    parser.add_argument("--out", default=None,
                        help="folder for NAME-review.json and NAME-review.png (default: next to the SGF)")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the search")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")


def run(args: argparse.Namespace) -> int:
    if args.visits < 1:
        raise ValueError(f"--visits must be >= 1, got {args.visits}")
    thresholds = Thresholds(*(t / 100 for t in args.thresholds)) if args.thresholds else Thresholds()
    source = Path(args.sgf)
    record = read_sgf(source)
    line_from_record(record, source)  # refuse a bad game before loading a net
    player = review_player(record.game, args.net, args.visits, args.seed, args.device)
    review = review_game(record, player, thresholds, source, show_progress=True)
    out = Path(args.out) if args.out else source.parent
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"{source.stem}-review.json"
    atomic_write_text(json_path, json.dumps(review, indent=1) + "\n")
    print(format_report(review))
    print(f"review: {json_path}")
    if not args.no_plot:
        print(f"plot:   {plot_review(review, out / f'{source.stem}-review.png')}")
    return 0
