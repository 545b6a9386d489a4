"""``zero9 analysis``'s command line: KataGo's ``analysis`` shape, so KaTrain's engine line works as is.

``zero9 analysis -model M -config C [-analysis-threads N] [-override-config K=V,...]``:
``-model`` is a zero9 net (checkpoint or Leela Zero text); a regular file zero9 cannot read
as a net (KaTrain's bundled KataGo model) gives a warning and the shipped net of each board
size, and a path that is absent, empty or no regular file (a pipe, a device) is one line and
exit 2. ``-config`` is a KataGo ``.cfg`` (``key = value`` lines); zero9 reads
``maxVisits``, ``reportAnalysisWinratesAs`` and ``numAnalysisThreads`` (positions analysed
together) and ignores the rest. The protocol: :mod:`zero9.protocols.analysis_engine`.
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import cast

from zero9.nn.checkpoint import check_net_file, default_net_path, load_net
from zero9.protocols.analysis_engine import DEFAULT_BATCH, AnalysisEngine, NetFinder
from zero9.protocols.kata_format import PERSPECTIVES
from zero9.settings import PlayConfig
from zero9.util.files import read_regular_file
from zero9.util.threads import choose_torch_threads

MAX_CONFIG_BYTES = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-model", help="zero9 net file (default: the shipped net of each board size)")
    parser.add_argument("-config", help="KataGo analysis config (.cfg): maxVisits, "
                        "reportAnalysisWinratesAs, numAnalysisThreads are read")
    parser.add_argument("-analysis-threads", type=int,
                        help="positions analysed together (numAnalysisThreads)")
    parser.add_argument("-override-config", action="append", default=[],
                        help="KEY=VALUE[,KEY=VALUE...] over the config file")
    parser.add_argument("-quit-without-waiting", action="store_true",
                        help="at end of input, stop instead of finishing the queued queries")
    parser.add_argument("-human-model", help="accepted; zero9 has no human-style model")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (0: torch's default; default: OMP_NUM_THREADS if set, else "
                             "1 for the search's small batches, zero9.util.threads)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (the same queries, the same numbers)")


def read_config(path: str | None, overrides: list[str]) -> dict[str, str]:
    """KataGo's ``key = value`` config, then ``-override-config`` pairs; ValueError naming a bad line."""
    settings: dict[str, str] = {}
    if path:
        text = read_regular_file(path, MAX_CONFIG_BYTES, "config file").decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, eq, value = line.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"config file {path} line {number}: expected key = value, got {line!r}")
            settings[key.strip()] = value.strip()
    for text in overrides:
        for pair in filter(None, (p.strip() for p in text.split(","))):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"-override-config: expected KEY=VALUE, got {pair!r}")
            settings[key.strip()] = value.strip()
    return settings


def _positive(settings: dict, key: str, default: int) -> int:
    try:
        value = int(settings.get(key, default))
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {settings[key]!r}") from None
    if value < 1:
        raise ValueError(f"{key} must be >= 1, got {value}")
    return value


def net_finder(model: str | None, device: str) -> NetFinder:
    """The nets the engine uses (see the module docstring)."""
    def shipped(size: int):
        path = default_net_path("go", size)
        return None if path is None else load_net(path, device=device)[0]

    if not model:
        return NetFinder(loader=shipped)
    path = check_net_file(model)  # absent, a pipe, a device: one line and exit 2, not the shipped nets
    try:
        net, meta = load_net(path, device=device)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"zero9 analysis: {path.name} is not a zero9 net ({e}); using zero9's shipped nets",
              file=sys.stderr, flush=True)
        return NetFinder(loader=shipped)
    if meta.get("game", {}).get("game", "go") != "go":
        raise ValueError(f"the net {path.name} plays {meta['game']['game']}, not Go")
    return NetFinder(net, path.name)


def run(args: argparse.Namespace) -> int:
    settings = read_config(args.config, args.override_config)
    perspective = settings.get("reportAnalysisWinratesAs", "BLACK").upper()
    if perspective not in PERSPECTIVES:
        raise ValueError(f"reportAnalysisWinratesAs must be one of {', '.join(PERSPECTIVES)}")
    visits = _positive(settings, "maxVisits", cast(int, PlayConfig.visits))  # the class default is a number
    batch = args.analysis_threads or _positive(settings, "numAnalysisThreads", DEFAULT_BATCH)
    choose_torch_threads(batch * PlayConfig.batch_size, args.threads)  # each position's leaves, together
    nets = net_finder(args.model, args.device)
    engine = AnalysisEngine(nets, sys.stdout, visits, perspective, args.seed, batch)
    print(f"zero9 analysis: ready ({visits} visits, {perspective}'s view)", file=sys.stderr, flush=True)
    inp = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    return engine.serve(inp, wait=not args.quit_without_waiting)
