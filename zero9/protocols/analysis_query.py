"""One query of ``zero9 analysis`` (KataGo's JSON analysis engine): checked, then turned into positions.

KataGo's docs/Analysis_Engine.md names the fields; this module checks each one and builds
the positions to analyse, or raises :class:`QueryError` naming the field, as KataGo's
``{"error": ..., "field": ..., "id": ...}``. Fields zero9 reads but cannot honour in full
give **warnings** (``{"warning": ...}``) and the query goes on, as KataGo does.

Vocabulary:

- **turn**: position number ``t`` of a query: the initial stones (``initialStones``),
  then the first ``t`` of ``moves``. ``analyzeTurns`` picks turns (default: the last).
- **side to move**: at turn 0 ``initialPlayer``, else the colour of the first move, else
  Black (whatever colour the initial stones were placed in); after that the colour each
  move names. A move by the colour not to move (allowed in KataGo's queries,
  and how setup stones are placed) gets a pass of the other colour first (zero9's **filler
  pass**, :func:`zero9.protocols.gtp.state.play_as`). A game that two passes ended is
  analysed as resumed (play may go on, as in KataGo).
- **rules**: a ruleset that differs from what zero9 plays gives a warning naming the
  fields, and the position is analysed under zero9's rules (KataGo does the same when a
  net does not support the rules asked for).
- **restrictions**: ``avoidMoves`` / ``allowMoves`` entries for the side to move at a turn
  restrict the root's moves (zero9 applies them at the root only, whatever ``untilDepth``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from zero9.games import BLACK, WHITE, IllegalMove, Position, make_game
from zero9.protocols.gtp.state import go_rules, play_as, resumable
from zero9.protocols.kata_format import PERSPECTIVES, parse_rules, rules_differences, shown

MAX_KOMI = 150.0  # KataGo's range
MAX_QUERY_VISITS = 10_000_000
MAX_MOVES_PER_POINT = 10  # moves (or initial stones) a query may list, per point of the board and pass
PLAYERS = {"B": BLACK, "W": WHITE, "b": BLACK, "w": WHITE}
KNOWN_FIELDS = {
    "id", "moves", "initialStones", "initialPlayer", "rules", "komi", "whiteHandicapBonus",
    "boardXSize", "boardYSize", "analyzeTurns", "maxVisits", "rootPolicyTemperature",
    "rootFpuReductionMax", "includeOwnership", "includeOwnershipStdev", "includeMovesOwnership",
    "includeMovesOwnershipStdev", "includePolicy", "includePVVisits", "avoidMoves", "allowMoves",
    "overrideSettings", "reportDuringSearchEvery", "priority", "priorities",
}
UNSUPPORTED = {  # read and checked, but zero9 cannot give them: a warning, and the query goes on
    "includeOwnershipStdev": "zero9 reports no ownership stdev",
    "includeMovesOwnership": "zero9 reports ownership for the position, not for each move",
    "includeMovesOwnershipStdev": "zero9 reports no ownership stdev",
    "rootPolicyTemperature": "zero9's search has no root policy temperature",
    "rootFpuReductionMax": "zero9's search keeps its own first-play urgency",
}
UNSUPPORTED_RANGES = {"rootPolicyTemperature": (0.01, 100.0), "rootFpuReductionMax": (0.0, 2.0)}  # KataGo's
HANDICAP_BONUSES = ("0", "N-1", "N")


class QueryError(ValueError):
    """A query field zero9 refuses: becomes KataGo's error object for that query."""

    def __init__(self, message: str, field_name: str | None = None):
        super().__init__(message)
        self.field = field_name


@dataclass
class Turn:
    """One position to analyse, with what its response must say."""

    query_id: str
    number: int
    position: Position
    visits: int
    priority: int
    allow: list[int] | None = None  # root moves to keep (None: all)
    report_every: float | None = None  # seconds between isDuringSearch responses
    max_time: float | None = None


@dataclass
class Query:
    """A checked query: its turns and the options of their responses."""

    id: str
    turns: list[Turn]
    perspective: str = "BLACK"
    include_ownership: bool = False
    include_policy: bool = False
    include_pv_visits: bool = False
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (field, message)


def parse_query(data: dict[str, Any], default_visits: int, perspective: str, sizes_served) -> Query:
    """A checked :class:`Query` from a decoded JSON object, or :class:`QueryError`.

    ``sizes_served(size)`` raises ValueError (naming the net) for a board the net cannot serve.
    """
    query_id = data["id"]
    warnings = [(key, "Unexpected or unused field") for key in data if key not in KNOWN_FIELDS]
    for key, why in UNSUPPORTED.items():
        if key in UNSUPPORTED_RANGES:
            given = key in data and _number(data[key], key, *UNSUPPORTED_RANGES[key])
        else:
            given = _flag(data, key)
        if given:
            warnings.append((key, why))
    size = _board_size(data, sizes_served)
    komi = _number(data.get("komi", 7.5), "komi", -MAX_KOMI, MAX_KOMI)
    if komi * 2 != math.floor(komi * 2):
        raise QueryError(f"komi {komi:g} is not an integer or half-integer", "komi")
    if "rules" not in data:
        raise QueryError("missing field: rules", "rules")
    try:
        rules = parse_rules(data["rules"])
    except ValueError as e:
        raise QueryError(str(e), "rules") from None
    if "whiteHandicapBonus" in data:  # KataGo's field beside the rules, overriding theirs
        bonus = data["whiteHandicapBonus"]
        if not (isinstance(bonus, str) and bonus in HANDICAP_BONUSES):
            raise QueryError(f"whiteHandicapBonus must be one of {', '.join(HANDICAP_BONUSES)}, got "
                             f"{shown(bonus)}", "whiteHandicapBonus")
        rules["whiteHandicapBonus"] = bonus
    different = rules_differences(rules)
    stones = _moves(data.get("initialStones", []), size, "initialStones")
    if not any(colour == BLACK for colour, _ in stones):
        different = [d for d in different if not d.startswith("whiteHandicapBonus")]  # no handicap stones
    if different:
        warnings.append(("rules", "zero9 plays only its own rules (area scoring, positional superko, no "
                                  "suicide); analysed under them. Differences: " + ", ".join(different)))
    game = make_game("go", size, komi=komi, move_cap=0)
    positions = _positions(data, game, stones)
    turns = _turn_numbers(data, len(positions) - 1)
    overrides = data.get("overrideSettings", {})
    if not isinstance(overrides, dict):
        raise QueryError("overrideSettings must be an object", "overrideSettings")
    perspective = overrides.get("reportAnalysisWinratesAs", perspective)
    perspective = perspective.upper() if isinstance(perspective, str) else perspective
    if perspective not in PERSPECTIVES:
        raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(PERSPECTIVES)}",
                         "overrideSettings")
    visits = _integer(data.get("maxVisits", default_visits), "maxVisits", 1, MAX_QUERY_VISITS)
    every = data.get("reportDuringSearchEvery")
    every = None if every is None else _number(every, "reportDuringSearchEvery", 0.001, 1e6)
    max_time = overrides.get("maxTime")
    max_time = None if max_time is None else _number(max_time, "overrideSettings", 0.0, 1e7)
    priorities = _priorities(data, len(turns))
    restrictions = _restrictions(data, game)
    query = Query(query_id, [], perspective, _flag(data, "includeOwnership"), _flag(data, "includePolicy"),
                  _flag(data, "includePVVisits"), warnings)
    for t, priority in zip(turns, priorities, strict=True):
        position = positions[t]
        query.turns.append(Turn(query_id, t, position, visits, priority,
                                _allowed(position, restrictions), every, max_time))
    return query


def _board_size(data: dict, sizes_served) -> int:
    x = _integer(data.get("boardXSize"), "boardXSize", 2, 25)
    y = _integer(data.get("boardYSize"), "boardYSize", 2, 25)
    if x != y:
        raise QueryError(f"zero9 plays square boards only, got {x}x{y}", "boardYSize")
    try:
        sizes_served(x)
    except ValueError as e:
        raise QueryError(str(e), "boardXSize") from None
    return x


def _positions(data: dict, game, stones: list[tuple[int, str]]) -> list[Position]:
    """The positions of turns 0..len(moves): initial ``stones``, then each move."""
    position = game.new_position()
    for i, (colour, action) in enumerate(_actions(stones, game, "initialStones")):
        try:
            position = play_as(position, colour, action)
        except IllegalMove as e:
            raise QueryError(f"initialStones[{i}]: {e}", "initialStones") from None
    moves = data.get("moves")
    if moves is None:
        raise QueryError("missing field: moves", "moves")
    moves = _actions(_moves(moves, game.size, "moves"), game, "moves")
    first = data.get("initialPlayer")
    if first is not None and not _is_player(first):
        raise QueryError(f"initialPlayer must be B or W, got {shown(first)}", "initialPlayer")
    wanted = PLAYERS[first] if first is not None else moves[0][0] if moves else BLACK
    if wanted != position.to_play:  # undo the last filler pass, or pass
        filled = position.last_move == game.pass_action and position.parent is not None
        position = position.parent if filled else position.play(game.pass_action)
    positions = [position]
    for i, (colour, action) in enumerate(moves):
        try:
            positions.append(play_as(_playable(positions[-1]), colour, action))
        except IllegalMove as e:
            raise QueryError(f"Illegal move {i}: {e}", "moves") from None
    return [_playable(p) for p in positions]


def _playable(position: Position) -> Position:
    """A game two passes ended, resumed (analysis goes on); any other position as it is."""
    if resumable(position):
        return go_rules(position).resume()
    return position


def _moves(items, size: int, name: str) -> list[tuple[int, str]]:
    """(colour, location text) of each [player, location] pair of a list; at most one a point and a pass
    each (a longer list is no game on a ``size`` board)."""
    if not isinstance(items, list):
        raise QueryError(f"{name} must be a list of [player, location] pairs", name)
    if len(items) > MAX_MOVES_PER_POINT * (size * size + 1):
        raise QueryError(f"{name}: {len(items):,} moves, more than {MAX_MOVES_PER_POINT} a point of a "
                         f"{size}x{size} board", name)
    out = []
    for i, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 2 and _is_player(item[0])
                and isinstance(item[1], str)):
            raise QueryError(f"{name}[{i}] must be [\"B\" or \"W\", location], got {shown(item)}", name)
        out.append((PLAYERS[item[0]], item[1]))
    return out


def _actions(moves: list[tuple[int, str]], game, name: str) -> list[tuple[int, int]]:
    return [(colour, _location(text, game, f"{name}[{i}]", name)) for i, (colour, text) in enumerate(moves)]


def _is_player(value) -> bool:
    return isinstance(value, str) and value in PLAYERS


def _location(text, game, where: str, name: str) -> int:
    if isinstance(text, str):
        try:
            return game.vertex_to_action(text)
        except ValueError:
            pass
    raise QueryError(f"{where}: bad location {shown(text)}", name)


def _turn_numbers(data: dict, last: int) -> list[int]:
    turns = data.get("analyzeTurns", [last])
    if not isinstance(turns, list) or not turns:
        raise QueryError("analyzeTurns must be a non-empty list of turn numbers", "analyzeTurns")
    for t in turns:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= last:
            raise QueryError(f"analyzeTurns: turn {shown(t)} is not in 0..{last}", "analyzeTurns")
    if len(set(turns)) < len(turns):
        raise QueryError("analyzeTurns: a turn is named twice", "analyzeTurns")
    return list(turns)


def _priorities(data: dict, count: int) -> list[int]:
    if "priorities" in data:
        values = data["priorities"]
        if not isinstance(values, list) or len(values) != count:
            raise QueryError("priorities must be a list as long as analyzeTurns", "priorities")
        return [_integer(v, "priorities", -2**31, 2**31 - 1) for v in values]
    return [_integer(data.get("priority", 0), "priority", -2**31, 2**31 - 1)] * count


def _restrictions(data: dict, game) -> list[tuple[str, int, set[int]]]:
    """(kind, colour, moves) of avoidMoves / allowMoves entries."""
    out = []
    for kind in ("avoidMoves", "allowMoves"):
        entries = data.get(kind, [])
        if not isinstance(entries, list) or (kind == "allowMoves" and len(entries) > 1):
            raise QueryError(f"{kind} must be a list of objects" + (" (at most one)" if kind == "allowMoves"
                                                                     else ""), kind)
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not _is_player(entry.get("player")) or not isinstance(
                    entry.get("moves"), list):
                raise QueryError(f"{kind}[{i}] needs player (B or W), moves and untilDepth", kind)
            _integer(entry.get("untilDepth"), kind, 1, 10_000)
            moves = {_location(m, game, f"{kind}[{i}]", kind) for m in entry["moves"]}
            out.append((kind, PLAYERS[entry["player"]], moves))
    return out


def _allowed(position: Position, restrictions) -> list[int] | None:
    if not restrictions:
        return None
    keep = list(position.legal_moves())
    for kind, colour, moves in restrictions:
        if colour != position.to_play:
            continue
        keep = [a for a in keep if (a in moves) == (kind == "allowMoves")]
    if not keep:
        raise QueryError("avoidMoves/allowMoves leave no legal move", "avoidMoves")
    return keep if len(keep) < len(position.legal_moves()) else None


def _flag(data: dict, name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise QueryError(f"{name} must be true or false", name)
    return value


def _integer(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)  # (JSON's 5.0: an integer written as a number)
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(f"{name} must be an integer, got {shown(value)}", name)
    if not lo <= value <= hi:  # (an int of any size compares exactly)
        raise QueryError(f"{name} {shown(value)} is out of range ({lo}..{hi})", name)
    return value


def _number(value, name: str, lo: float, hi: float) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not math.isfinite(value))):
        raise QueryError(f"{name} must be a number, got {shown(value)}", name)
    if not lo <= value <= hi:  # (before float(): an int too large for a float compares exactly)
        raise QueryError(f"{name} {shown(value)} is out of range ({lo:g}..{hi:g})", name)
    return float(value)
