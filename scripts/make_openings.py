"""Make a file of balanced openings for ``zero9 match --openings`` (docs/cli-match.md), judged by a zero9 net.

    python scripts/make_openings.py                      # 60 openings of 3 stones, 15x15 Gomoku
    python scripts/make_openings.py --game go --size 9 --stones 2 --radius 2 --count 20 --candidates 200 \\
        --net example-data/go_9x9_best.pt                 # 20 openings of 2 stones, 9x9 Go, komi 7.5
    python scripts/make_openings.py --count 60 --stones 3 --visits 200 --margin 0.1 \\
        --net example-data/gomoku_15x15_best.pt --out example-data/openings_gomoku_15x15.txt

Vocabulary:

- **candidate**: ``--stones`` stones placed at random, alternating from Black, on distinct
  points within ``--radius`` of the centre (Gomocup's openings are such small central
  positions); candidates equal under the board's 8 symmetries count once.
- **balance**: the net's search (``--visits`` visits) gives the side to move a winrate;
  from it Black's winrate ``b``. A candidate is balanced when ``|b - 0.5| <= --margin``;
  the ``--count`` most balanced are written, each with its ``b`` as a comment.

A match plays each opening twice with colours swapped, so even a leftover imbalance
favours both players equally; balance keeps the games worth playing. The file records the
net's hash and every parameter in its header, so a run can be repeated. ``--seed`` fixes
the candidates; the search uses a fixed seed too.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from zero9.arena.openings import canonical_opening, read_openings, write_openings
from zero9.games import BLACK, make_game, play_moves
from zero9.nn.checkpoint import default_net_path, load_net
from zero9.search.evaluator import NetEvaluator
from zero9.search.player import SearchPlayer
from zero9.settings import PlayConfig


def random_candidate(rng: random.Random, size: int, stones: int, radius: int) -> tuple[int, ...]:
    """``stones`` distinct points within ``radius`` (Chebyshev) of the centre, in playing order."""
    centre = size // 2
    points = [y * size + x for y in range(centre - radius, centre + radius + 1)
              for x in range(centre - radius, centre + radius + 1)]
    return tuple(rng.sample(points, stones))


def black_winrate(player: SearchPlayer, game, actions: tuple[int, ...]) -> float:
    """Black's winrate after ``actions``, from the net's search."""
    position = play_moves(game, list(actions))
    player.reset()
    player.genmove(position)
    side = player.winrate()
    return side if position.to_play == BLACK else 1.0 - side


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=("gomoku", "go"), default="gomoku", help="the rules")
    parser.add_argument("--net", help="the judging net (default: the shipped net for the game and size)")
    parser.add_argument("--size", type=int, default=15, help="board size (default 15)")
    parser.add_argument("--count", type=int, default=60, help="openings to write (default 60)")
    parser.add_argument("--stones", type=int, default=3, help="stones per opening (default 3)")
    parser.add_argument("--radius", type=int, default=3, help="how near the centre (default 3)")
    parser.add_argument("--visits", type=int, default=200, help="search visits per judgement (default 200)")
    parser.add_argument("--margin", type=float, default=0.1, help="keep |Black winrate - 0.5| <= this")
    parser.add_argument("--candidates", type=int, default=400, help="most candidates to judge (default 400)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the candidates (default 1)")
    parser.add_argument("--out", help="the file to write (default example-data/openings_GAME_NxN.txt)")
    parser.add_argument("--exclude", action="append", default=[], metavar="FILE",
                        help="skip openings of this file, under any symmetry (repeatable): a tuning set "
                             "that shares no opening with a match's set")
    args = parser.parse_args(argv)
    args.net = args.net or default_net_path(args.game, args.size)
    args.out = args.out or f"example-data/openings_{args.game}_{args.size}x{args.size}.txt"
    if args.net is None:
        parser.error(f"no shipped net for {args.game} {args.size}x{args.size}: give --net")
    if args.stones < 1 or (2 * args.radius + 1) ** 2 < args.stones or args.count < 1:
        parser.error("need --stones >= 1 that fit in the centre square, and --count >= 1")

    game = make_game(args.game, args.size)
    net, meta = load_net(args.net, device="cpu")
    if not net.serves_size(args.size):  # a net with size-independent heads serves 20x20 too
        parser.error(f"{args.net} is a net for {net.sizes_served()}, not {args.size}x{args.size}")
    play = PlayConfig(visits=args.visits, resign_threshold=None)
    player = SearchPlayer(game, NetEvaluator(net), play, seed=0)
    rng = random.Random(args.seed)
    excluded = {canonical_opening(opening, args.size) for path in args.exclude
                for opening in read_openings(path, game)}
    seen: set[tuple[int, ...]] = set()
    judged: list[tuple[float, tuple[int, ...]]] = []  # (Black's winrate, opening)
    started = time.monotonic()
    for _ in range(args.candidates):
        actions = random_candidate(rng, args.size, args.stones, args.radius)
        key = canonical_opening(actions, args.size)
        if key in seen or key in excluded or play_moves(game, list(actions)).is_terminal():
            continue
        seen.add(key)
        b = black_winrate(player, game, actions)
        if abs(b - 0.5) <= args.margin:
            judged.append((b, actions))
            if len(judged) >= 3 * args.count:  # plenty to choose the most balanced from
                break
    if len(judged) < args.count:
        print(f"make_openings: only {len(judged)} of {len(seen)} candidates are within {args.margin} "
              f"of even; raise --candidates or --margin", file=sys.stderr)
        if not judged:
            return 1
    chosen = sorted(judged, key=lambda item: abs(item[0] - 0.5))[: args.count]
    rules = "Gomoku (freestyle)" if args.game == "gomoku" else f"Go (komi {game.komi:g})"
    header = (f"{len(chosen)} balanced {args.size}x{args.size} {rules} openings for "
              f"zero9 match --openings\n"
              f"made by scripts/make_openings.py --game {args.game} --net {args.net} --count {args.count} "
              f"--stones {args.stones} --radius {args.radius} --visits {args.visits} --margin {args.margin} "
              f"--candidates {args.candidates} --seed {args.seed}"
              + "".join(f" --exclude {path}" for path in args.exclude) + "\n"
              f"judge: net hash {meta.get('hash', '?')}; comment = Black's winrate by its search\n"
              f"format: one opening per line, moves from the empty board as vertices, Black first")
    path = write_openings(args.out, game, [a for _, a in chosen], header=header,
                          comments=[f"black {b:.3f}" for b, _ in chosen])
    print(f"{path}: {len(chosen)} openings from {len(seen)} distinct candidates judged "
          f"in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
