"""Replay lost Gomoku games against Rapfi and ask what zero9's threat search would have seen.

    python3 scripts/threat_audit.py docs/runs/gomoku15-rapfi/final_threats_sgf \\
        --log docs/runs/gomoku15-rapfi/final_threats_vs_rapfi10k.log --net /work/res/8f4c090bb465.pt \\
        --rapfi /opt/rapfi/pbrain-rapfi

Vocabulary:

- **oracle**: Rapfi itself (pbrain), asked for its move on each position; its MESSAGE line
  says ``Eval +M<n>`` when its search proves a win in n plies.
- **entry**: the first position of a game, past the opening, where Rapfi (to move, at
  ``--nodes``) proved a win; the move before it is zero9's, the one that let Rapfi in.
- **found**: at the entry, :func:`find_vcf` or :func:`find_vct` proves Rapfi's win too.
- **refuted**: at the position before the entry (zero9 to move), :func:`threat_move` (the
  player's root decision: our VCF or VCT, else :func:`refute_vct` with the net's policy as the
  ranking) insists on a move after which the oracle at ``--check-nodes`` finds no win for
  Rapfi (find_vct finds none by construction).
- **lost before**: the oracle at ``--check-nodes``, playing zero9's side there, sees itself
  mated (``Eval -M``): no move holds, so no defence could have refuted.

Prints one line per lost game, then the counts and the time each threat search took
(mean and max): run it under ``flock /work/bench.lock`` when the times matter.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import numpy as np

from zero9.arena.players import PbrainAgent
from zero9.games.sgf import read_sgf
from zero9.search.player import NetSource
from zero9.search.threats import find_vcf, find_vct, threat_move

LOST = re.compile(r"^game (\d+): .*-> A loss")
OPENING = re.compile(r"opening \d+: (\d+) moves")
EVAL = re.compile(r"Eval (\S+)")
RANKED = 24  # the policy's best moves given to refute_vct, as the player gives its search's best


def lost_games(log: Path) -> list[int]:
    """The game numbers the match log marks as lost by zero9 (player A)."""
    return sorted(int(m.group(1)) for line in log.read_text().splitlines() if (m := LOST.match(line)))


class Oracle:
    """Rapfi at a fixed node count: its move and whether it proved a win (plies, or None)."""

    def __init__(self, argv: list[str], nodes: int):
        info = [("timeout_turn", "5000"), ("timeout_match", "0"), ("rule", "0"), ("max_node", str(nodes))]
        self.agent = PbrainAgent(f"rapfi@{nodes}", argv, timeout=120, info=info)

    def evaluation(self, position) -> str:
        """Rapfi's last ``Eval`` for the side to move: a score, ``+M<n>`` (it wins), ``-M<n>`` (it loses)."""
        # a fresh brain each time: Rapfi answered a second BOARD after a move with "Unknown command"
        self.agent.close()
        self.agent.new_game(position.game)
        self.agent.genmove(position)
        evals = [m.group(1) for line in self.agent.drain_log() if (m := EVAL.search(line))]
        return evals[-1] if evals else ""

    def mate(self, position) -> int | None:
        """The plies of the win Rapfi proved for the side to move, or None."""
        evaluation = self.evaluation(position)
        return int(evaluation[2:]) if evaluation.startswith("+M") else None

    def close(self) -> None:
        self.agent.close()


def timed(fn, *args, times: list[float], **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    times.append(time.perf_counter() - start)
    return result


def ranked_moves(source: NetSource, position) -> list[int]:
    """The net's policy, best first, over the legal moves."""
    policy, _ = source.raw_policy(position, 0)
    legal = position.legal_actions()
    return [int(a) for a in legal[np.argsort(-policy[legal], kind="stable")][:RANKED]]


def audit_game(path: Path, source: NetSource, oracle: Oracle, checker: Oracle, times: dict,
               every: bool) -> dict:
    record = read_sgf(path)
    game = record.game
    zero9 = 1 if "rapfi" in record.white.lower() else 2
    opening = int(OPENING.search(record.properties.get("GC", "")).group(1))
    positions = [game.new_position()]
    for action in record.actions:
        positions.append(positions[-1].play(action))
    row = {"game": path.stem, "entry": None}
    for ply in range(opening + 1, len(record.actions)):
        pos = positions[ply]
        if pos.to_play == zero9:
            if every:  # the player's root cost, on every move of zero9's before the entry
                timed(threat_move, pos, ranked_moves(source, pos), times=times["threat_move (every move)"])
            continue
        plies = oracle.mate(pos)
        if plies is not None:
            row.update(entry=ply, rapfi_plies=plies)
            break
    if row["entry"] is None:
        return row
    entry, before = positions[row["entry"]], positions[row["entry"] - 1]
    vcf = timed(find_vcf, entry, times=times["find_vcf"])
    vct = timed(find_vct, entry, times=times["find_vct"])
    row.update(vcf=vcf is not None, vct=vct is not None, line=len(vct) if vct else 0)
    row["played"] = game.action_to_vertex(record.actions[row["entry"] - 1])
    row["seen"] = find_vct(before.passed()) is not None or find_vcf(before.passed()) is not None
    row["lost_before"] = checker.evaluation(before).startswith("-M")  # no move of zero9's holds, says Rapfi
    move = timed(threat_move, before, ranked_moves(source, before), times=times["threat_move (before entry)"])
    row["threat_move"] = None if move is None else game.action_to_vertex(move)
    if move is not None:
        row["check_plies"] = checker.mate(before.play(move))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the match's SGF folder (game-NNNN.sgf)")
    parser.add_argument("--log", type=Path, required=True, help="the match log: which games zero9 lost")
    parser.add_argument("--net", required=True, help="zero9's net: its policy ranks the defence's moves")
    parser.add_argument("--rapfi", default="/opt/rapfi/pbrain-rapfi", help="the Rapfi pbrain binary")
    parser.add_argument("--nodes", type=int, default=10000, help="the oracle's nodes (the match's)")
    parser.add_argument("--check-nodes", type=int, default=100000, help="nodes to check a refutation")
    parser.add_argument("--games", type=int, default=None, help="audit only the first N lost games")
    parser.add_argument("--every", action="store_true",
                        help="also time threat_move on every move of zero9's before the entry")
    args = parser.parse_args()

    games = lost_games(args.log)[: args.games]
    source = NetSource(args.net, device="cpu")
    oracle, checker = Oracle([args.rapfi], args.nodes), Oracle([args.rapfi], args.check_nodes)
    times = {"find_vcf": [], "find_vct": [], "threat_move (before entry)": [], "threat_move (every move)": []}
    rows = []
    try:
        for number in games:
            path = args.folder / f"game-{number:04d}.sgf"
            row = audit_game(path, source, oracle, checker, times, args.every)
            rows.append(row)
            print(row, flush=True)
    finally:
        oracle.close()
        checker.close()

    entered = [r for r in rows if r["entry"] is not None]
    moved = [r for r in entered if r["threat_move"] is not None]
    print(f"\n{len(rows)} lost games; past the opening Rapfi at {args.nodes} nodes proved a win in "
          f"{len(entered)}")
    print(f"at that entry find_vcf finds it in {sum(r['vcf'] for r in entered)}, "
          f"find_vct in {sum(r['vct'] for r in entered)}")
    print(f"the move before it: threat search sees the threat in {sum(r['seen'] for r in entered)}, "
          f"threat_move insists on a move in {len(moved)}; after it Rapfi at {args.check_nodes} nodes "
          f"proves no win in {sum(r['check_plies'] is None for r in moved)}")
    print(f"the move before it was already lost (Rapfi at {args.check_nodes} nodes, on zero9's side, "
          f"sees itself mated) in {sum(r['lost_before'] for r in entered)}; of the others, threat_move "
          f"refuted in {sum(r['check_plies'] is None for r in moved if not r['lost_before'])} "
          f"of {sum(not r['lost_before'] for r in entered)}")
    for name, values in times.items():
        if values:
            print(f"{name}: mean {statistics.mean(values):.3f} s, max {max(values):.3f} s "
                  f"over {len(values)} calls")


if __name__ == "__main__":
    main()
