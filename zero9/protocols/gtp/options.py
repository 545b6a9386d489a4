"""Strict values for ``zero9 gtp``: every number a client or a command line gives is checked here.

Vocabulary:

- **value check**: text -> a Python value of the right type inside a **range**, or
  :class:`GTPFailure` naming the option, the text and the range. Nothing is applied
  before every value of a command has passed its check, so a refused command changes
  nothing (and a search never runs with a half-applied setting).
- **range**: inclusive bounds. Numbers must be finite; the upper bounds are sane
  limits (a month of thinking time, ten million visits), not Leela Zero's: they stop a
  typo such as ``visits 1e20`` from hanging the engine.
- **setting** (:data:`SETTINGS`): one ``lz-setoption`` name with its check; Leela Zero
  0.17's names (``visits``, ``playouts``, ``lagbuffer``, ``resign percentage``,
  ``pondering``, ``maximum memory use (mib)``, ``percentage of memory for cache``)
  plus the search's own knobs (``c_puct``, ``lcb``, ...). ``0`` means "no limit" for
  ``visits``, ``playouts`` and ``time`` as in Leela Zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zero9.games import parse_colour

MAX_VISITS = 10_000_000
MAX_SECONDS = 30 * 24 * 3600  # a month: anything longer is a typo
MAX_STONES = 10_000
MAX_LAG_CS = 100_000  # centiseconds (1000 s)


class GTPFailure(Exception):
    """A command that cannot be carried out: its message becomes the ``?`` reply."""


def int_value(text: str, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer in ``lo..hi`` (either bound may be open)."""
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise GTPFailure(f"{what} must be an integer, got {text!r}") from None
    _check_range(value, what, lo, hi)
    return value


def float_value(text: str, what: str, lo: float | None = None, hi: float | None = None,
                above: float | None = None) -> float:
    """A finite number in ``lo..hi``; ``above`` is an exclusive lower bound (``c_puct > 0``)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise GTPFailure(f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise GTPFailure(f"{what} must be finite, got {text!r}")
    if above is not None and value <= above:
        raise GTPFailure(f"{what} must be greater than {above:g}, got {text}")
    _check_range(value, what, lo, hi)
    return value


def bool_value(text: str, what: str) -> bool:
    word = str(text).strip().lower()
    if word in ("true", "1", "on", "yes"):
        return True
    if word in ("false", "0", "off", "no"):
        return False
    raise GTPFailure(f"{what} must be true or false, got {text!r}")


def _check_range(value: float, what: str, lo: float | None, hi: float | None) -> None:
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        low = "-inf" if lo is None else f"{lo:g}"
        high = "inf" if hi is None else f"{hi:g}"
        raise GTPFailure(f"{what} {value:g} is out of range ({low}..{high})")


@dataclass(frozen=True)
class Setting:
    """One ``lz-setoption`` name: ``parse(text) -> value`` (raises GTPFailure) and what it sets."""

    parse: Callable[[str], Any]
    target: str  # 'player:NAME' (SearchPlayer.set_option), 'options:NAME' (LeelaZeroOptions) or 'ignored'
    help: str


def _limit(what: str, hi: float, kind: Callable = int_value) -> Callable[[str], Any]:
    return lambda text: kind(text, what, 0, hi)


SETTINGS: dict[str, Setting] = {
    "visits": Setting(_limit("visits", MAX_VISITS), "player:visits", "root visits per move, 0 = no limit"),
    "playouts": Setting(_limit("playouts", MAX_VISITS), "player:playouts",
                        "new simulations per move, 0 = no limit"),
    "time": Setting(_limit("time", MAX_SECONDS, float_value), "player:time",
                    "seconds per move when no clock is set, 0 = none"),
    "lagbuffer": Setting(_limit("lagbuffer", MAX_LAG_CS), "options:lagbuffer",
                         "time kept back per move for the pipes, centiseconds"),
    "resign percentage": Setting(lambda t: float_value(t, "resign percentage", -1, 100),
                                 "options:resignpct", "-1: 10%, 0: never resign"),
    "pondering": Setting(lambda t: bool_value(t, "pondering"), "options:ponder",
                         "accepted; zero9 never ponders"),
    "randomcnt": Setting(_limit("randomcnt", MAX_STONES), "options:randomcnt",
                         "moves drawn in proportion to visits at the start"),
    "lcb": Setting(lambda t: bool_value(t, "lcb"), "player:lcb", "choose by lower confidence bound"),
    "noise": Setting(lambda t: bool_value(t, "noise"), "player:noise", "Dirichlet noise at the root"),
    "c_puct": Setting(lambda t: float_value(t, "c_puct", hi=100, above=0), "player:c_puct",
                      "exploration constant, > 0"),
    "fpu_reduction": Setting(lambda t: float_value(t, "fpu_reduction", 0, 10), "player:fpu_reduction",
                             "first-play urgency reduction"),
    "batch_size": Setting(lambda t: int_value(t, "batch_size", 1, 1024), "player:batch_size",
                          "leaves per net call"),
    "root_parallel": Setting(lambda t: int_value(t, "root_parallel", 1, 64), "player:root_parallel",
                             "independent trees"),
    "maximum memory use (mib)": Setting(lambda t: int_value(t, "maximum memory use (mib)", 128, 131072),
                                        "ignored", "accepted; zero9's trees are small"),
    "percentage of memory for cache": Setting(lambda t: int_value(t, "percentage of memory for cache", 1, 99),
                                              "ignored", "accepted; the net cache has a fixed size"),
}
ALIASES = {"resignpct": "resign percentage", "ponder": "pondering"}


def parse_setoption(args: list[str]) -> tuple[str, str]:
    """``name NAME value VALUE`` (Leela Zero's form; NAME may hold spaces) -> (known name, value text)."""
    words = [a.lower() for a in args]
    if len(words) < 4 or words[0] != "name" or "value" not in words[2:]:
        raise GTPFailure("syntax: lz-setoption name NAME value VALUE")
    v = words.index("value", 2)
    name, value = " ".join(words[1:v]), " ".join(args[v + 1:])
    name = ALIASES.get(name, name.replace("-", "_"))
    if name not in SETTINGS:
        raise GTPFailure(f"unknown option {name!r}: expected one of {', '.join(SETTINGS)}")
    if not value:
        raise GTPFailure(f"{name}: missing value")
    return name, value


def colour_arg(text: str) -> int:
    """A GTP colour (``b``, ``w``, ``black``, ``white``, any case) or GTPFailure."""
    try:
        return parse_colour(text)
    except ValueError as e:
        raise GTPFailure(str(e)) from None


def nargs(args: list[str], lo: int, hi: int | None = None, usage: str = "") -> None:
    """GTPFailure with the usage unless there are ``lo..hi`` arguments (``hi`` None: exactly ``lo``)."""
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        raise GTPFailure(f"wrong number of arguments: usage {usage}".strip())
