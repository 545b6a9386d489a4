"""What ``zero9 gtp`` says about a search: analyze tags, ``info`` lines and the verbose table.

Vocabulary (Leela Zero 0.17's, read from its GTP.cpp and UCTSearch.cpp):

- **analyze tags**: the arguments of ``lz-analyze`` / ``lz-genmove_analyze``, in any
  order: a colour (``b``, ``w``, ``black``, ``white``), an **interval** in centiseconds
  (a bare number, or ``interval N``; 0 = print nothing while searching), ``minmoves N``
  (report at least N moves, unvisited ones included), and move restrictions
  ``avoid COLOUR MOVES UNTIL`` / ``allow COLOUR MOVES UNTIL``; KataGo's ``maxmoves N`` (report
  at most N moves), ``ownership true|false`` and ``pvVisits true|false`` (kata-analyze's extra
  output, :mod:`zero9.protocols.gtp.kata`). MOVES is a comma list of
  vertices, ``pass``, ``resign`` or rectangles ``A1:C3``; UNTIL (>= 1) counts that
  colour's moves from now. ``allow`` may only be mixed with ``avoid`` of ``pass`` /
  ``resign``. Anything else makes the whole command fail (``cannot parse analyze tags``).
- **restricted root** (:class:`RestrictedRoot`): the position to search, seen through a
  filter that removes the avoided (or not allowed) moves from its legal moves. zero9
  applies restrictions at the root, the move being analysed: exact for UNTIL = 1, the
  form Lizzie and KaTrain send; deeper plies are searched without them.
- **info line**: every candidate as ``info move V visits N winrate W prior P lcb L
  order K pv ...`` (W, P, L ×10000), best first, on one line.
- **verbose table**: Leela Zero's per-move lines on stderr after a search:
  ``move -> visits (V: winrate%) (LCB: lcb%) (N: prior%) PV: moves``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from zero9.games import BLACK, WHITE, Position
from zero9.protocols.gtp.options import GTPFailure

TAG_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
DEFAULT_INTERVAL_CS = 0  # Leela Zero: no output unless an interval is given


@dataclass
class Restriction:
    colour: int
    action: int | None  # None: resign (never a search move)
    until: int  # the last move number (of the game) it applies to


@dataclass
class AnalyzeTags:
    """The parsed tags of one analyze command (see the module docstring)."""

    colour: int
    interval_cs: int = DEFAULT_INTERVAL_CS
    min_moves: int = 0
    max_moves: int = 0  # 0: no limit
    ownership: bool = False
    pv_visits: bool = False
    avoid: list[Restriction] = field(default_factory=list)
    allow: list[Restriction] = field(default_factory=list)

    @property
    def interval_s(self) -> float:
        return self.interval_cs / 100.0

    @property
    def restricted(self) -> bool:
        return bool(self.avoid or self.allow)

    def is_avoided(self, colour: int, action: int, move_number: int, pass_action: int | None) -> bool:
        """Leela Zero's ``is_to_avoid``: listed under avoid, or not listed while an allow list is active."""
        if any(r.colour == colour and r.action == action and move_number <= r.until for r in self.avoid):
            return True
        if action == pass_action:
            return False
        active = [r for r in self.allow if r.colour == colour and move_number <= r.until]
        return bool(active) and all(r.action != action for r in active)


def parse_analyze_tags(args: list[str], position: Position) -> AnalyzeTags:
    """Leela Zero's tag grammar; any bad tag raises GTPFailure('cannot parse analyze tags: ...')."""
    game = position.game
    tags = AnalyzeTags(position.to_play)
    allow_used = {BLACK: False, WHITE: False}
    avoid_real = {BLACK: False, WHITE: False}  # an avoided move other than pass / resign
    i = 0

    def fail(why: str) -> GTPFailure:
        return GTPFailure(f"cannot parse analyze tags: {why}")

    def number(k: int, what: str, lo: int = 0) -> int:
        if k >= len(args) or not args[k].isdigit() or int(args[k]) < lo:
            raise fail(f"{what} needs a whole number{f' >= {lo}' if lo else ''}")
        return int(args[k])

    while i < len(args):
        tag = args[i].lower()
        if tag[:1].isdigit():
            tags.interval_cs, i = number(i, "interval"), i + 1
        elif tag in TAG_COLOURS:
            tags.colour, i = TAG_COLOURS[tag], i + 1
        elif tag in ("interval", "minmoves", "maxmoves"):
            value = number(i + 1, tag)
            if tag == "interval":
                tags.interval_cs = value
            elif tag == "minmoves":
                tags.min_moves = value
            else:
                tags.max_moves = value
            i += 2
        elif tag in ("ownership", "pvvisits"):
            word = args[i + 1].lower() if i + 1 < len(args) else ""
            if word not in ("true", "false"):
                raise fail(f"{args[i]} needs true or false")
            setattr(tags, "ownership" if tag == "ownership" else "pv_visits", word == "true")
            i += 2
        elif tag in ("avoid", "allow"):
            if i + 3 >= len(args):
                raise fail(f"{tag} needs COLOUR MOVES UNTIL")
            colour = TAG_COLOURS.get(args[i + 1].lower())
            if colour is None:
                raise fail(f"{tag}: bad colour {args[i + 1]!r}")
            actions = _move_list(args[i + 2], game, fail)
            until = number(i + 3, f"{tag} UNTIL", lo=1) + position.move_number - 1
            for action in actions:
                (tags.avoid if tag == "avoid" else tags.allow).append(Restriction(colour, action, until))
            if tag == "avoid":
                avoid_real[colour] |= any(a != game.pass_action for a in actions if a is not None)
            else:
                allow_used[colour] = True
            if any(allow_used[c] and avoid_real[c] for c in (BLACK, WHITE)):
                raise fail("allow may only be combined with avoiding pass or resign")
            i += 4
        else:
            raise fail(f"unknown tag {args[i]!r}")
    return tags


def _move_list(text: str, game, fail) -> list[int | None]:
    """Comma list of vertices, ``pass``, ``resign`` (None) and ``A1:C3`` rectangles -> actions."""
    actions: list[int | None] = []
    for item in text.split(","):
        word = item.lower()
        if word == "resign":
            actions.append(None)  # never a search move: nothing to filter
            continue
        if ":" in word:
            corners = word.split(":")
            if len(corners) != 2 or len(corners[0]) not in (2, 3):
                raise fail(f"bad rectangle {item!r}")
            (x0, y0), (x1, y1) = (_xy(c, game, fail) for c in corners)
            for x in range(min(x0, x1), max(x0, x1) + 1):
                for y in range(min(y0, y1), max(y0, y1) + 1):
                    actions.append(y * game.size + x)
            continue
        try:
            actions.append(game.vertex_to_action(word))
        except ValueError:
            raise fail(f"bad move {item!r}") from None
    return actions


def _xy(vertex: str, game, fail) -> tuple[int, int]:
    try:
        action = game.vertex_to_action(vertex)
    except ValueError:
        raise fail(f"bad rectangle corner {vertex!r}") from None
    if action == game.pass_action:
        raise fail("a rectangle corner cannot be pass")
    return action % game.size, action // game.size


class RestrictedRoot:
    """A position whose legal moves leave out the ones ``tags`` forbid (see the module docstring).

    Everything else is the wrapped position's: the search reads its stones, history and
    hash through this object, and its children are ordinary positions.
    """

    def __init__(self, position: Position, tags: AnalyzeTags):
        self._position = position
        game = position.game
        keep = [a for a in position.legal_moves()
                if not tags.is_avoided(position.to_play, a, position.move_number, game.pass_action)]
        self._legal = keep if keep else position.legal_moves()  # never leave the search without a move

    def __getattr__(self, name: str):
        return getattr(self._position, name)

    def legal_moves(self) -> list[int]:
        return list(self._legal)

    def legal_actions(self) -> np.ndarray:
        return np.array(self._legal, dtype=np.intp)

    @property
    def unwrapped(self) -> Position:
        return self._position


def per10k(x: float) -> int:
    return int(round(float(x) * 10000))


def info_line(stats: Iterable, game, min_moves: int = 0) -> str:
    """Leela Zero's analysis line: visited moves best first, then unvisited ones up to ``min_moves``."""
    stats = list(stats)
    visited = sorted((s for s in stats if s.visits > 0), key=lambda s: (-s.visits, -s.winrate))
    unvisited = sorted((s for s in stats if s.visits == 0), key=lambda s: -s.prior)
    ranked = visited + unvisited[:max(0, min_moves - len(visited))]
    parts = []
    for order, s in enumerate(ranked):
        pv = " ".join(game.action_to_vertex(a) for a in (s.pv or [s.action]))
        winrate = s.winrate if s.visits > 0 else 0.0
        lcb = max(s.lcb, 0.0) if s.visits > 0 else 0.0
        parts.append(f"info move {s.vertex} visits {int(s.visits)} winrate {per10k(winrate)} "
                     f"prior {per10k(s.prior)} lcb {per10k(lcb)} order {order} pv {pv}")
    return " ".join(parts)


def verbose_table(stats: Iterable, game) -> str:
    """Leela Zero's ``dump_stats`` lines: at least two moves, then every visited one."""
    lines = []
    ranked = sorted(stats, key=lambda s: (-s.visits, -s.prior))
    for count, s in enumerate(ranked, 1):
        if count > 2 and not s.visits:
            break
        pv = " ".join(game.action_to_vertex(a) for a in (s.pv or [s.action]))
        winrate = 100 * s.winrate if s.visits else 0.0
        lcb = max(0.0, 100 * s.lcb)
        lines.append(f"{s.vertex:>4} -> {s.visits:7d} (V: {winrate:5.2f}%) (LCB: {lcb:5.2f}%) "
                     f"(N: {100 * s.prior:5.2f}%) PV: {pv}")
    return "\n".join(lines)
