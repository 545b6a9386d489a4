"""Give a Go net a score head without changing how it plays: the head is fitted, nothing else moves.

    python scripts/graft_score_head.py example-data/go_9x9_best.pt RUN/chunks --out grafted.pt

A score head (:mod:`zero9.nn.heads`) is one linear layer on the value head's hidden layer, so
with the rest of the net frozen its best weights are a **least-squares fit**: the net (in eval
mode, as it plays) reads every position of the chunks once, and the head's 257 weights solve
the ridge-regularised normal equations for the score target of each position (the game's final
area count from the side to move's view, komi counted: :func:`score_target`). The policy, value
and ownership are the starting net's to the last bit (the script checks), so the grafted net
plays exactly as the net it came from; its hash differs because it has one more head.

Chunks: Go self-play shards of games played to the end (an autotrain run with
``--resign-threshold -1``; a resigned board's count is not the game's score). The newest
``--holdout`` share of the files (by name: creation order) is kept out of the fit and reported:
the head's mean absolute error in points against the ownership sum's (the estimate without a
score head: the predicted ownership summed, komi counted).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch

from zero9.learn.training.losses import komi_view, score_target
from zero9.nn.checkpoint import load_checkpoint, save_checkpoint
from zero9.nn.chunks import chunk_files, load_chunks
from zero9.nn.heads import make_net
from zero9.nn.net import resolve_device


def grafted_net(path: str):
    """The net at ``path`` with a fresh score head, every other weight copied; (net, meta)."""
    ckpt = load_checkpoint(path, "cpu")
    source, meta = ckpt.net, ckpt.meta
    config = source.config
    if not config.get("ownership"):
        raise ValueError(f"{path}: a score head needs a net with an ownership head")
    if config.get("score"):
        raise ValueError(f"{path}: the net has a score head already")
    from zero9.nn.checkpoint import game_from_meta

    game = game_from_meta(meta)
    net = make_net(game, config["blocks"], config["filters"], ownership=True, score=True,
                   in_planes=config["in_planes"])
    missing, unexpected = net.load_state_dict(source.state_dict(), strict=False)
    if unexpected or sorted(missing) != ["score_fc.bias", "score_fc.weight"]:
        raise ValueError(f"{path}: weights do not fit a net with a score head ({missing}, {unexpected})")
    return net.eval(), meta, game


@torch.no_grad()
def features(net, planes: np.ndarray, device: torch.device, batch: int = 4096):
    """The value head's hidden layer [P, H] and the ownership sum [P] (from the side to move's view)."""
    hidden, own_sum = [], []
    for start in range(0, len(planes), batch):
        x = torch.from_numpy(planes[start:start + batch].astype(np.float32)).to(device)
        trunk = net.tower(net.input_block(x))
        hidden.append(net.value_hidden(trunk).double().cpu())
        own_sum.append(torch.tanh(torch.flatten(net.ownership_conv(trunk), 1)).sum(1).double().cpu())
    return torch.cat(hidden).numpy(), torch.cat(own_sum).numpy()


def targets(data) -> tuple[np.ndarray, np.ndarray]:
    """The score target over the board's points [P] and komi from the mover's view [P]."""
    idx = np.arange(len(data.to_play))
    komi = komi_view(data, idx)
    if komi is None:
        raise ValueError("the chunks carry no ownership targets (not Go self-play?)")
    lead = score_target(torch.from_numpy(data.ownership.astype(np.float32)), torch.from_numpy(komi))
    return lead.double().numpy(), komi.astype(np.float64)


def fit(hidden: np.ndarray, target: np.ndarray, ridge: float) -> tuple[np.ndarray, float]:
    """Least squares with an intercept, ridge on the weights only: (weights [H], bias)."""
    design = np.hstack([hidden, np.ones((len(hidden), 1))])
    gram = design.T @ design
    gram[:-1, :-1] += ridge * len(hidden) * np.eye(hidden.shape[1])
    solution = np.linalg.solve(gram, design.T @ target)
    return solution[:-1], float(solution[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("net", help="a Go net with an ownership head and no score head (.pt)")
    parser.add_argument("chunks", nargs="+", help="chunk files or folders (Go self-play played to the end)")
    parser.add_argument("--out", required=True, help="where the grafted net goes (.pt)")
    parser.add_argument("--holdout", type=float, default=0.1,
                        help="the newest share of files, kept out of the fit")
    parser.add_argument("--max-files", type=int, default=20_000, help="the newest this many files at most")
    parser.add_argument("--ridge", type=float, default=1e-4)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    files = chunk_files(args.chunks)[-args.max_files:]
    held = max(1, int(len(files) * args.holdout))
    if len(files) < held + 1:
        raise SystemExit(f"graft: {len(files)} chunk files; need at least 2")
    device = resolve_device(args.device)
    net, meta, game = grafted_net(args.net)
    net.to(device)
    size_points = game.size * game.size
    parts = {}
    for name, part in (("fit", files[:-held]), ("held-out", files[-held:])):
        data = load_chunks(part, game)
        hidden, own_sum = features(net, data.planes, device)
        target, komi = targets(data)
        parts[name] = (hidden, own_sum, target, komi)
        print(f"{name}: {len(part)} games, {len(target)} positions")
    hidden, _, target, _ = parts["fit"]
    weights, bias = fit(hidden, target, args.ridge)
    with torch.no_grad():
        net.score_fc.weight.copy_(torch.from_numpy(weights).float().unsqueeze(0))
        net.score_fc.bias.fill_(bias)
    for name, (h, own_sum, t, komi) in parts.items():
        head = (h @ weights + bias) * size_points
        truth = t * size_points
        own_error = np.abs(own_sum + komi - truth).mean()
        print(f"{name}: mean absolute error of the final score lead, points: score head "
              f"{np.abs(head - truth).mean():.2f}, ownership sum + komi {own_error:.2f}")
    # the grafted net plays as the source: its other outputs are the source's, bit for bit
    source = load_checkpoint(args.net, "cpu").net.to(device).eval()
    probe = torch.from_numpy(load_chunks(files[-1:], game).planes[:64].astype(np.float32)).to(device)
    with torch.no_grad():
        a, b = source(probe), net(probe)
    if not all(torch.equal(x, y) for x, y in zip(a, b[:len(a)], strict=True)):
        raise SystemExit("graft: the grafted net's policy, value or ownership differ from the source's")
    # not the source's training record (its steps and losses are another net's): where it came from
    fitted = {"games": len(files) - held, "ridge": args.ridge}
    written = save_checkpoint(args.out, net.cpu(), {"game": game.to_dict(), "grafted_from": meta.get("hash"),
                                                    "score_fit": fitted})
    print(f"wrote {args.out}: net {written['hash']}, {meta.get('hash')} with a fitted score head")
    return 0


if __name__ == "__main__":
    sys.exit(main())
