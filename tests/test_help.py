"""What ``zero9 COMMAND --help`` says a default is, against what the parser and zero9/settings.py hold.

Vocabulary:

- **printed default**: the value after ``default`` in an option's help text (``(default 400)``,
  ``; default off``, ``default: 7.5``, ``default here: 0.25``), as ``--help`` prints it.
- **parser default**: what argparse gives the option when it is left out.
- **resolved default**: for an option whose parser default is None, the value the library picks
  instead (``--size`` None is 9 for Go and 15 for Gomoku in ``make_game``). A printed number, or
  on/off, for such an option must be one of :data:`RESOLVED`, which works the value out from the
  code that picks it; a printed description ("the shipped net") is not checked.
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from zero9.cli import COMMANDS
from zero9.games import make_game
from zero9.settings import ADAM_LR, PCR_SHARE, PlayConfig, SearchConfig, TrainOptions

PRINTED = re.compile(r"(?:^|[(;,]\s*)default(?: here)?:?\s+(?P<value>[^\s,;)]+)(?P<rest>[^;)]*)", re.I)
NUMBER = re.compile(r"^[-+]?\d[\d_]*(?:\.\d+)?(?:e[-+]?\d+)?$", re.I)
SWITCH = {"on": True, "off": False}


def parser_of(command: str) -> argparse.ArgumentParser:
    module = importlib.import_module(COMMANDS[command][0])
    parser = argparse.ArgumentParser(prog=f"zero9 {command}")
    module.add_arguments(parser)
    return parser


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {action.option_strings[-1] if action.option_strings else action.dest: action
            for action in parser._actions if action.help and action.help != argparse.SUPPRESS}


def help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's help as --help prints it (with %(default)s filled in), on one line."""
    return " ".join(parser._get_formatter()._expand_help(action).split())


def printed_defaults(text: str) -> list[tuple[str, str]]:
    return [(m.group("value").rstrip(".:"), m.group("rest")) for m in PRINTED.finditer(text)]


def game_choices(parser: argparse.ArgumentParser) -> list[str]:
    game = options(parser).get("--game")
    return list(game.choices) if game is not None and game.choices else ["go"]


def _sizes(parser, value: str, rest: str) -> str | None:
    """'9 for Go, 15 for Gomoku', '9 / 15' (the games in --game's order) or plain '9' (every game)."""
    pairs = re.findall(r"(\d+) for (\w+)", f"{value} {rest}")
    claims = {name.lower(): int(size) for size, name in pairs}
    one_each = re.fullmatch(r"\s*/\s*(\d+)\s*", rest)
    if not claims and one_each:
        claims = dict(zip(game_choices(parser), (int(value), int(one_each.group(1))), strict=False))
    claims = claims or {game: int(value) for game in game_choices(parser)}
    wrong = {game: size for game, size in claims.items() if make_game(game).size != size}
    return f"says {wrong}, but make_game gives {({g: make_game(g).size for g in wrong})}" if wrong else None


def _lr(parser, value: str, rest: str) -> str | None:
    said = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", f"{value} {rest}")]
    held = [TrainOptions.lr, ADAM_LR]
    return None if said == held else f"says {said}, the settings say {held}"


def _thresholds(parser, value: str, rest: str) -> str | None:
    from zero9.arena.review import Thresholds

    said = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", f"{value} {rest}")]
    go = [float(b) for b in Thresholds.for_game("go").bounds]
    gomoku = [round(100 * b, 6) for b in Thresholds.for_game("gomoku").bounds]  # printed in % winrate
    runs = [said[i:i + n] for n in (len(go), len(gomoku)) for i in range(len(said) - n + 1)]
    found = [held for held in (go, gomoku) if held in runs]
    return None if found == [go] or found == [gomoku] or len(found) == 2 else (
        f"says {said}, Thresholds holds {go} (Go) and {gomoku} (Gomoku)")


def _equal(expected):
    def check(parser, value: str, rest: str) -> str | None:
        same = NUMBER.match(value) and float(value) == expected
        return None if same else f"says {value}, the code {expected}"
    return check


# option -> how the library resolves its None default (checked against the printed one)
RESOLVED = {
    "--size": _sizes,
    "--komi": lambda parser, value, rest: _equal(make_game("go").komi)(parser, value, rest),
    "--connect": lambda parser, value, rest: _equal(make_game("gomoku").connect)(parser, value, rest),
    "--lr": _lr,
    "--pcr": _equal(PCR_SHARE),
    "--thresholds": _thresholds,
}
# None defaults whose printed on/off is decided inside a run, not by a value this test can read
DECIDED_BY_THE_RUN = {("autotrain", "--no-ownership"),  # on for Go, off for Gomoku: autotrain.py
                      ("autotrain", "--no-concurrent"),  # on with 2+ GPUs: concurrent_by_default
                      ("autotrain", "--no-compile"), ("train", "--no-compile")}  # on CUDA: train.compiles


def mismatch(command: str, parser: argparse.ArgumentParser, name: str, action: argparse.Action,
             value: str, rest: str) -> str | None:
    """Why the printed default ``value`` is not the option's default, or None when it is."""
    default = action.default
    plain = value.strip("`'\"")
    if default is None:
        if not (NUMBER.match(plain) or plain.lower() in SWITCH) or re.match(r"\s*[×x*]\s", rest):
            return None  # a description: "the shipped net", "DIR/chunks", "2 × actions"
        if plain.lower() == "off":
            return None  # None: the option is off unless given
        if (command, name) in DECIDED_BY_THE_RUN:
            return None
        base = parser.get_default("recipe_base") or {}  # autotrain: a None the machine's recipe fills
        if action.dest in base and name not in RESOLVED:
            return _equal(base[action.dest])(parser, plain, rest)  # the docs and help give the CPU's
        if name not in RESOLVED:
            return f"prints default {plain}, but the parser's default is None and nothing resolves it here"
        return RESOLVED[name](parser, plain, rest)
    if isinstance(default, bool):
        if plain.lower() not in SWITCH:
            return None  # e.g. gtp --benchmark's "(-v, default 3200 visits)": the visits, not the switch
        same = SWITCH[plain.lower()] == default
        return None if same else f"prints {plain}, the parser's default is {default}"
    if isinstance(default, (int, float)):
        if not NUMBER.match(plain):
            return f"prints {plain!r}, the parser's default is {default!r}"
        same = float(plain) == float(default)
        return None if same else f"prints {plain}, the parser's default is {default!r}"
    if isinstance(default, str):
        same = Path(plain).expanduser() == Path(default).expanduser()
        return None if same else f"prints {plain!r}, the parser's default is {default!r}"
    return None  # lists and others: help does not print them


def printed_mismatches(command: str) -> list[str]:
    parser = parser_of(command)
    found = []
    for name, action in options(parser).items():
        for value, rest in printed_defaults(help_text(parser, action)):
            why = mismatch(command, parser, name, action, value, rest)
            if why:
                found.append(f"zero9 {command} {name}: {why}")
    return found


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_printed_default_is_the_real_one(command):
    assert printed_mismatches(command) == []


def test_the_check_catches_a_drifted_default():
    parser = argparse.ArgumentParser()
    parser.add_argument("--visits", type=int, default=400, help="visits per move (default 800)")
    parser.add_argument("--size", type=int, default=None, help="board size (default 9)")
    parser.add_argument("--game", default="go", choices=["go", "gomoku"], help="the rules (default go)")
    parser.add_argument("--threats", action="store_true", help="read threats (default on)")
    found = {name: mismatch("x", parser, name, action, *printed_defaults(help_text(parser, action))[0])
             for name, action in options(parser).items() if printed_defaults(help_text(parser, action))}
    assert found["--visits"] == "prints 800, the parser's default is 400"
    assert "make_game gives {'gomoku': 15}" in found["--size"]  # 9 holds for Go only
    assert found["--game"] is None
    assert found["--threats"] == "prints on, the parser's default is False"


# The commands whose parsers live in zero9/cli/{demo,match,pbrain}.py: option -> the settings value it
# must default to (and print).
FROM_SETTINGS = {
    "demo": {"--visits": PlayConfig.quick_visits},
    "match": {"--visits": PlayConfig.visits, "--batch-size": PlayConfig.batch_size,
              "--c-puct": SearchConfig.c_puct, "--fpu-reduction": SearchConfig.fpu_reduction,
              "--no-threats": PlayConfig.threats, "--threat-reading": PlayConfig.threat_reading},
    "pbrain": {"--visits": PlayConfig.visits, "--no-threats": PlayConfig.threats,
               "--threat-reading": PlayConfig.threat_reading},
}


@pytest.mark.parametrize("command", list(FROM_SETTINGS))
def test_defaults_come_from_the_settings_and_help_prints_them(command):
    parser = parser_of(command)
    actions = options(parser)
    for name, value in FROM_SETTINGS[command].items():
        action = actions[name]
        assert action.default == value, f"zero9 {command} {name}: {action.default!r}, settings say {value!r}"
        printed = printed_defaults(help_text(parser, action))
        assert printed, f"zero9 {command} {name}: --help does not say its default ({value!r})"
        assert mismatch(command, parser, name, action, *printed[0]) is None


def test_match_help_names_every_level():
    from zero9.arena.levels import LEVELS

    text = help_text(parser_of("match"), options(parser_of("match"))["a"])
    assert "level:NAME" in text and all(name in text for name in LEVELS)


# ---------------------------------------------------------------------------------------------- the docs

DOCS = Path(__file__).resolve().parents[1] / "docs"
OPTION_ROW = re.compile(r"^\|\s*`(?P<names>-[^`]*)`\s*\|\s*(?P<default>[^|]*)\|")


def documented_defaults(command: str) -> list[tuple[str, str]]:
    """(option, default cell) of each row of docs/cli-COMMAND.md's option tables."""
    page = DOCS / f"cli-{command}.md"
    if not page.is_file() or "| option | default |" not in page.read_text():
        return []
    rows = []
    for line in page.read_text().splitlines():
        match = OPTION_ROW.match(line)
        if match:
            names = re.findall(r"--?[\w-]+", match.group("names"))
            rows.append((names[-1], match.group("default").strip()))
    return rows


def documented_mismatches(command: str) -> list[str]:
    parser = parser_of(command)
    by_name = {name: action for action in parser._actions for name in action.option_strings}
    found = []
    for name, cell in documented_defaults(command):
        action = by_name.get(name)
        if action is None:
            found.append(f"docs/cli-{command}.md documents {name}, which zero9 {command} does not have")
            continue
        value, _, rest = cell.replace("`", "").partition(" ")
        why = mismatch(command, parser, action.option_strings[-1], action, value.rstrip(",;"), " " + rest)
        if why:
            found.append(f"docs/cli-{command}.md {name}: {why}")
    return found


@pytest.mark.parametrize("command", [c for c in COMMANDS if documented_defaults(c)])
def test_the_docs_option_tables_give_the_real_defaults(command):
    assert documented_mismatches(command) == []
