"""KataGo's way of writing an analysis: fields, perspectives, board order and rules, for GTP and JSON alike.

The numbers come from :mod:`zero9.search.analysis` (:class:`PositionAnalysis`, every value
from the side to move's view); this module only converts and names them as KataGo does
(its docs/GTP_Extensions.md and docs/Analysis_Engine.md), so ``kata-analyze`` and
``zero9 analysis`` say the same things the same way.

Vocabulary:

- **perspective**: whose view the numbers take. KataGo's GTP reports the side to move's
  (``SIDETOMOVE``), its analysis engine by default Black's (``reportAnalysisWinratesAs
  BLACK``; ``WHITE`` also exists). Flipping the view turns a winrate ``w`` into ``1 - w``,
  a score lead, utility and ownership into their negatives, and the LCB into ``1 - lcb``
  (KataGo's own flip).
- **utility**: KataGo mixes winrate and score; zero9's search values wins only, so its
  utility is the win/loss utility ``2 w - 1`` in ``[-1, 1]`` (KataGo's with
  ``winLossUtilityFactor 1`` and no score utility).
- **board order**: KataGo lists ownership and policy row by row from the top-left point
  (A9 on 9x9) to the bottom-right (J1); zero9's points count from A1 upward, so rows are
  reversed. The policy has one more entry, pass, last; illegal moves are ``-1``.
- **rules** (:data:`ZERO9_RULES`): what zero9 plays, in ``kata-get-rules``' JSON: area
  scoring, positional superko, suicide illegal, no tax, no button, komi as given whatever
  the handicap (``whiteHandicapBonus 0``). A ruleset asked for is compared field by field
  with it (:func:`rules_differences`); a shorthand name (``chinese-ogs``, ``tromp-taylor``,
  ...) stands for KataGo's fields for it.
- **a client's JSON** (:func:`decode_json`): a query line or a rules object as text,
  decoded within bounds: nested at most :data:`MAX_JSON_DEPTH` deep (KataGo's queries
  nest 4 deep; deeper text is refused before it is decoded, so no recursion runs out), and
  any value that cannot be decoded (a 5,000-digit integer) is an error naming it, never
  an exception of another kind. Error messages show a client's values through
  :func:`shown`: at most :data:`SHOWN_CHARS` characters of them.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Iterable
from typing import Any

import numpy as np

MAX_JSON_DEPTH = 32
SHOWN_CHARS = 80
ZERO9_RULES: dict[str, Any] = {"hasButton": False, "ko": "POSITIONAL", "scoring": "AREA",
                               "suicide": False, "tax": "NONE", "whiteHandicapBonus": "0"}


def _rules(ko: str, scoring: str, suicide: bool, tax: str, bonus: str, button: bool = False) -> dict:
    return {"hasButton": button, "ko": ko, "scoring": scoring, "suicide": suicide, "tax": tax,
            "whiteHandicapBonus": bonus}


# KataGo's shorthand names (docs/GTP_Extensions.md, kata-set-rules).
RULE_SHORTHANDS: dict[str, dict] = {
    "tromp-taylor": _rules("POSITIONAL", "AREA", True, "NONE", "0"),
    "chinese": _rules("SIMPLE", "AREA", False, "NONE", "N"),
    "chinese-ogs": _rules("POSITIONAL", "AREA", False, "NONE", "N"),
    "chinese-kgs": _rules("POSITIONAL", "AREA", False, "NONE", "N"),
    "japanese": _rules("SIMPLE", "TERRITORY", False, "SEKI", "0"),
    "korean": _rules("SIMPLE", "TERRITORY", False, "SEKI", "0"),
    "stone-scoring": _rules("SIMPLE", "AREA", False, "ALL", "0"),
    "aga": _rules("SITUATIONAL", "AREA", False, "NONE", "N-1"),
    "bga": _rules("SITUATIONAL", "AREA", False, "NONE", "N-1"),
    "new-zealand": _rules("SITUATIONAL", "AREA", True, "NONE", "0"),
    "aga-button": _rules("SITUATIONAL", "AREA", False, "NONE", "N-1", button=True),
}
RULE_ALIASES = {"tromp_taylor": "tromp-taylor", "new zealand": "new-zealand", "nz": "new-zealand",
                "stone_scoring": "stone-scoring", "cn": "chinese", "jp": "japanese", "ko": "korean",
                "tt": "tromp-taylor", "new_zealand": "new-zealand"}
RULE_VALUES = {"ko": ("SIMPLE", "POSITIONAL", "SITUATIONAL"), "scoring": ("AREA", "TERRITORY"),
               "tax": ("NONE", "SEKI", "ALL"), "whiteHandicapBonus": ("0", "N-1", "N"),
               "suicide": (True, False), "hasButton": (True, False)}
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")


def parse_rules(value: str | dict) -> dict:
    """A ruleset (KataGo's JSON object, its JSON text, or a shorthand name) -> its full field dict.

    ValueError names what is wrong (an unknown name, field or value). Fields left out of a
    JSON object keep zero9's.
    """
    if isinstance(value, str) and value.strip().startswith("{"):
        value = decode_json(value, "rules are not valid JSON")
    if isinstance(value, str):
        name = value.strip().lower()
        name = RULE_ALIASES.get(name, name)
        if name not in RULE_SHORTHANDS:
            raise ValueError(f"unknown rules {shown(value)}: expected a JSON object or one of "
                             f"{', '.join(RULE_SHORTHANDS)}")
        return dict(RULE_SHORTHANDS[name])
    if not isinstance(value, dict):
        raise ValueError("rules must be a string or a JSON object")
    rules = dict(ZERO9_RULES)
    for key, given in value.items():
        if key == "friendlyPassOk":
            continue  # KataGo's newer field: only changes how bots pass; zero9 passes its own way
        if key not in RULE_VALUES:
            raise ValueError(f"unknown rules field {shown(key)}")
        text = given.upper() if isinstance(given, str) and key != "whiteHandicapBonus" else given
        if not any(text is v or (type(text) is type(v) and text == v) for v in RULE_VALUES[key]):
            raise ValueError(f"bad value {shown(given)} for rules field {key!r}")
        rules[key] = text
    return rules


class JSONTextError(ValueError):
    """A client's JSON text that is refused; ``query_id``: its top-level ``id`` where it can be read."""

    def __init__(self, message: str, query_id: str | None = None):
        super().__init__(message)
        self.query_id = query_id


def decode_json(text: str, what: str = "Could not parse json") -> Any:
    """``text`` decoded, or :class:`JSONTextError` ``"{what}: why"`` (see **a client's JSON**)."""
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:  # (cheap: only then is the nesting read)
        depth, query_id = _nesting(text)
        if depth > MAX_JSON_DEPTH:
            raise JSONTextError(f"{what}: nested {depth} deep, more than {MAX_JSON_DEPTH}", query_id)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise JSONTextError(f"{what}: {e.msg} (column {e.colno})", _nesting(text)[1]) from None
    except (ValueError, RecursionError) as e:  # (an integer of more digits than Python converts)
        raise JSONTextError(f"{what}: {str(e)[:SHOWN_CHARS]}", _nesting(text)[1]) from None


_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]')


def _nesting(text: str) -> tuple[int, str | None]:
    """How deep ``text``'s brackets nest (outside strings), and its top-level object's string ``id``."""
    depth = deepest = 0
    query_id = key = None
    after_colon = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
        elif depth == 1 and token == ":":
            after_colon = True
            continue
        elif depth == 1 and token.startswith('"'):
            if after_colon and key == '"id"' and query_id is None:
                try:
                    query_id = json.loads(token)
                except ValueError:
                    pass
            key = None if after_colon else token
        after_colon = False
    return deepest, query_id


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, at most :data:`SHOWN_CHARS` characters and a few levels deep."""
    return _SHOWN.repr(value)


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 3, SHOWN_CHARS, SHOWN_CHARS, SHOWN_CHARS
_SHOWN.maxlist = _SHOWN.maxdict = _SHOWN.maxtuple = 6


def rules_differences(rules: dict) -> list[str]:
    """The fields where ``rules`` differ from what zero9 plays, as ``field VALUE (zero9 plays X)``."""
    return [f"{key} {json.dumps(rules[key])} (zero9 plays {json.dumps(ZERO9_RULES[key])})"
            for key in ZERO9_RULES if rules.get(key) != ZERO9_RULES[key]]


def board_order(values: np.ndarray, size: int) -> np.ndarray:
    """Per-point values from zero9's order (A1 first) to KataGo's (top-left first, row by row)."""
    return np.asarray(values[: size * size]).reshape(size, size)[::-1].reshape(-1)


def policy_order(policy: np.ndarray, size: int) -> np.ndarray:
    """The raw policy in KataGo's order, pass last (absent for a game without pass: Gomoku)."""
    board = board_order(policy, size)
    return np.append(board, policy[size * size]) if len(policy) > size * size else board


def flip_sign(to_move: int, perspective: str, black: int) -> float:
    """+1 to keep the side to move's view, -1 to flip it, for a report in ``perspective``."""
    if perspective == "SIDETOMOVE":
        return 1.0
    wanted = black if perspective == "BLACK" else 3 - black
    return 1.0 if to_move == wanted else -1.0


def move_fields(info, vertex, sign: float, pv_visits: bool = False) -> dict[str, Any]:
    """One :class:`MoveInfo` as KataGo's moveInfo fields (``vertex`` names actions), in view ``sign``."""
    winrate = info.winrate if sign > 0 else 1.0 - info.winrate
    lcb = info.lcb if sign > 0 else 1.0 - info.lcb
    fields: dict[str, Any] = {"move": vertex(info.move), "visits": int(info.visits),
                              "utility": 2.0 * winrate - 1.0, "winrate": winrate}
    if info.score_lead is not None:
        lead = sign * info.score_lead
        stdev = info.score_stdev if info.score_stdev is not None else 0.0
        fields.update(scoreMean=lead, scoreStdev=stdev, scoreLead=lead)
    fields.update(prior=float(info.prior), lcb=lcb, order=int(info.order),
                  pv=[vertex(a) for a in info.pv])
    if pv_visits:
        fields["pvVisits"] = [int(v) for v in info.pv_visits]
    return fields


def root_fields(analysis, sign: float) -> dict[str, Any]:
    """KataGo's ``rootInfo`` of a :class:`PositionAnalysis`, in view ``sign``."""
    winrate = analysis.winrate if sign > 0 else 1.0 - analysis.winrate
    fields: dict[str, Any] = {"visits": int(analysis.visits), "winrate": winrate,
                              "utility": 2.0 * winrate - 1.0, "lcb": winrate}
    if analysis.score_lead is not None:
        fields.update(scoreLead=sign * analysis.score_lead, scoreSelfplay=sign * analysis.score_lead,
                      scoreStdev=analysis.score_stdev or 0.0)
    return fields


def number(x: float) -> str:
    """A float as KataGo's GTP prints it: six significant digits."""
    return f"{float(x):.6g}"


def gtp_info(fields: dict[str, Any]) -> str:
    """``info move ... pv ...`` (KataGo's kata-analyze) from :func:`move_fields`."""
    parts = ["info"]
    for key, value in fields.items():
        if key in ("pv", "pvVisits"):
            continue
        parts += [key, value if isinstance(value, str) else str(value) if isinstance(value, int)
                  else number(value)]
    parts += ["pv", *fields["pv"]]
    if "pvVisits" in fields:
        parts += ["pvVisits", *(str(v) for v in fields["pvVisits"])]
    return " ".join(parts)


def gtp_ownership(ownership: np.ndarray, size: int, sign: float = 1.0) -> str:
    """``ownership`` and size² numbers in KataGo's board order."""
    return "ownership " + " ".join(number(sign * v) for v in board_order(ownership, size))


def json_numbers(values: Iterable[float], digits: int = 6) -> list[float]:
    """Floats rounded for JSON (KataGo prints about six significant digits too)."""
    return [round(float(v), digits) for v in values]
