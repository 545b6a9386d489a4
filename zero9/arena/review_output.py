"""A review written out: the text ``zero9 review`` prints, the graph, and the review inside a copy of the SGF.

Every function takes the review as :meth:`zero9.arena.review.Review.as_dict` gives it (the
JSON ``zero9 review`` writes), so a saved review can be printed or drawn again.

- **report**: the flagged moves (Go: points lost from ``inaccuracy`` up, KaTrain's 3 points;
  Gomoku: ``mistake`` and ``blunder``), then one summary line per player.
- **graph**: Go: Black's score lead in points over the game (Black's winrate faint on a
  second axis); Gomoku: Black's winrate. Flagged moves marked by class.
- **reviewed SGF**: the original file with a comment ``C[...]`` on every move (loss, class,
  the better move) and, at every flagged move, the engine's better line as a variation beside
  the move played (Sabaki and KaTrain show both). The main line stays the first child.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

GO_FLAGGED = ("inaccuracy", "mistake", "blunder")
GOMOKU_FLAGGED = ("mistake", "blunder")
MARKS = (("tiny", "palegreen"), ("slight", "khaki"), ("inaccuracy", "gold"), ("mistake", "darkorange"),
         ("blunder", "red"))
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def black_winrates(moves: list[dict[str, Any]]) -> list[float | None]:
    """Black's winrate after each move (index 0: before the first move), for the graph."""
    return _black_curve(moves, "winrate_before", "winrate_after", lambda x: 1 - x)


def black_scores(moves: list[dict[str, Any]]) -> list[float | None]:
    """Black's score lead after each move (index 0: before the first move), Go only."""
    return _black_curve(moves, "score_before", "score_after", lambda x: -x)


def _black_curve(moves: list[dict[str, Any]], before: str, after: str, flip) -> list[float | None]:
    if not moves:
        return []

    def black(m: dict[str, Any], key: str) -> float | None:
        v = m.get(key)
        return None if v is None else (v if m["color"] == "B" else flip(v))

    return [black(moves[0], before)] + [black(m, after) for m in moves]


def _is_go(review: dict[str, Any]) -> bool:
    return review["thresholds"]["unit"] == "points"


def format_report(review: dict[str, Any], flagged: tuple[str, ...] | None = None) -> str:
    """The text ``zero9 review`` prints: the flagged moves, then one summary line per player."""
    go = _is_go(review)
    flagged = flagged or (GO_FLAGGED if go else GOMOKU_FLAGGED)
    if go:
        lines = [f"{'move':>4} {'who':>3} {'played':>6} {'best':>6} {'lost':>6} {'winrate':>15}  "
                 "class       best line"]
    else:
        lines = [f"{'move':>4} {'who':>3} {'played':>6} {'best':>6} {'before':>7} {'after':>7} {'loss':>6}  "
                 "class       best line"]
    for m in review["moves"]:
        if m["class"] not in flagged:
            continue
        line = " ".join(m["pv"][:8])
        if go:
            winrate = f"{100 * m['winrate_before']:.0f}%->{100 * m['winrate_after']:.0f}%"
            lines.append(f"{m['move_number']:>4} {m['color']:>3} {m['move']:>6} {m['best_move']:>6} "
                         f"{m['points_lost']:>6.1f} {winrate:>15}  {m['class']:<11} {line}")
        else:
            lines.append(f"{m['move_number']:>4} {m['color']:>3} {m['move']:>6} {m['best_move']:>6} "
                         f"{100 * m['winrate_before']:>6.1f}% {100 * m['winrate_after']:>6.1f}% "
                         f"{100 * m['winrate_loss']:>5.1f}%  {m['class']:<11} {line}")
    if len(lines) == 1:
        lines.append(f"  (no {', '.join(flagged[:-1])} or {flagged[-1]})")
    lines.append("")
    names = {"B": review.get("black") or "Black", "W": review.get("white") or "White"}
    for colour, s in review["summary"].items():
        counts = ", ".join(f"{s[c]} {c}" for c in reversed(flagged))
        average = f"{s['average_loss']:.1f} points" if go else f"{100 * s['average_loss']:.1f}%"
        forced = f", {s['forced']} forced (not judged)" if s.get("forced") else ""
        lines.append(f"{colour} {names[colour]}: moves {s['moves']}, {counts}, average loss {average}, "
                     f"match rate {100 * s['match_rate']:.0f}%{forced}")
    if review.get("count"):  # Go ended by passes: the count the last pass was judged by
        count = review["count"]
        stones = f"{count['dead']} dead stone{'' if count['dead'] == 1 else 's'}"
        lines.append(f"count: {count['result']} ({stones} off, as final_score counts)")
    return "\n".join(lines)


def plot_review(review: dict[str, Any], path: str | Path) -> Path:
    """Save the graph over the game (Go: Black's score lead in points; Gomoku: winrate), flags marked."""
    import matplotlib  # optional: only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    moves = review["moves"]
    go = _is_go(review)
    winrates = [None if w is None else 100 * w for w in black_winrates(moves)]
    curve = black_scores(moves) if go else winrates
    xs = range(len(curve))
    fig, ax = plt.subplots(figsize=(8, 3.4), dpi=100)
    ax.plot(xs, [float("nan") if c is None else c for c in curve], color="black", lw=1.5,
            label="Black's score lead" if go else "Black's winrate")
    ax.axhline(0 if go else 50, color="grey", lw=0.8, ls=":")
    for name, colour in MARKS:
        marked = [m for m in moves if m["class"] == name and curve[m["move_number"]] is not None]
        if marked:
            ax.scatter([m["move_number"] for m in marked], [curve[m["move_number"]] for m in marked],
                       color=colour, edgecolor="black", zorder=3, s=36, label=name)
    ax.set_xlabel("move number")
    if go:
        ax.set_ylabel("Black's score lead (points)")
        right = ax.twinx()
        right.plot(xs, [float("nan") if w is None else w for w in winrates], color="steelblue", lw=0.8,
                   alpha=0.5)
        right.set_ylabel("Black's winrate (%)", color="steelblue")
        right.set_ylim(0, 100)
    else:
        ax.set_ylabel("Black's winrate (%)")
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


def move_comment(review: dict[str, Any], m: dict[str, Any]) -> str:
    """The comment a move gets in the reviewed SGF."""
    head = f"zero9 review ({review['visits']} visits): move {m['move_number']} {m['color']} {m['move']}"
    if m["class"] == "forced":
        return f"{head}: an opening move the game imposed, not judged."
    go = _is_go(review)
    winrate = f"winrate {100 * m['winrate_before']:.1f}% -> {100 * m['winrate_after']:.1f}%"
    if m["move"] == m["best_move"]:
        score = f", score lead {m['score_before']:+.1f}" if go else ""
        return f"{head}: the engine's best move ({winrate}{score})."
    lost = f"lost {m['points_lost']:.1f} points" if go else f"lost {100 * m['winrate_loss']:.1f}% winrate"
    beside = f"; {winrate}" if go else f" ({winrate})"
    if m["class"] == "good":
        return f"{head}: {lost} (good){beside}. The engine's choice: {m['best_move']}."
    better = f" Better: {m['best_move']}"
    if go:
        better += f" (score lead {m['score_before']:+.1f} against {m['score_after']:+.1f})"
    return f"{head}: {lost} ({m['class']}){beside}.{better}. Best line: {' '.join(m['pv'][:10])}"


def review_sgf(review: dict[str, Any], sgf: str | bytes, flagged: tuple[str, ...] | None = None) -> str:
    """``sgf`` (the reviewed game) with a comment on every move and the better line at flagged moves."""
    from sgfmill import sgf as sgfmill  # the reader's dependency (zero9.games.sgf)

    data = sgf.encode("utf-8") if isinstance(sgf, str) else sgf
    tree = sgfmill.Sgf_game.from_bytes(data)
    size = tree.get_size()
    flagged = flagged or (GO_FLAGGED if _is_go(review) else GOMOKU_FLAGGED)
    nodes = [node for node in tree.get_main_sequence()[1:] if node.get_move()[0] is not None]
    if len(nodes) != len(review["moves"]):
        raise ValueError(f"the SGF has {len(nodes)} moves, the review {len(review['moves'])}")
    for node, m in zip(nodes, review["moves"], strict=True):
        text = move_comment(review, m)
        old = node.get("C") if node.has_property("C") else ""
        node.set("C", f"{old}\n\n{text}" if old else text)
        if m["class"] in flagged and m["pv"]:
            _add_line(node.parent, m["color"].lower(), m["pv"], size,
                      f"zero9's better line instead of {m['move']}")
    return tree.serialise().decode("utf-8")


def _add_line(parent, colour: str, vertices: list[str], size: int, comment: str) -> None:
    """A variation under ``parent`` (after its existing children): the moves of ``vertices``, alternating."""
    node = parent
    for k, vertex in enumerate(vertices):
        node = node.new_child()
        node.set_move(colour, _sgfmill_move(vertex, size))
        if k == 0:
            node.set("C", comment)
        colour = "w" if colour == "b" else "b"


def _sgfmill_move(vertex: str, size: int) -> tuple[int, int] | None:
    """A GTP vertex (``D4``, ``pass``) as sgfmill's (row from the bottom, column)."""
    if vertex.lower() == "pass":
        return None
    column = "ABCDEFGHJKLMNOPQRSTUVWXYZ".index(vertex[0].upper())
    return int(vertex[1:]) - 1, column
