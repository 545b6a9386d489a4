"""One batch and its losses: the samples drawn under a symmetry, the loss terms, their means.

Vocabulary:

- **symmetry**: each drawn sample gets one of the 8 dihedral transforms at random
  (planes and policy together; ownership too).
- **loss**: policy cross-entropy + value MSE + ``l2`` * sum of squared weights (+
  ``ownership_weight`` * ownership MSE when on, + ``score_weight`` * score MSE when the net
  has a score head: see :func:`score_target`). **accuracy**: the share of samples
  whose policy arg-max matches the target's arg-max (top-1).

The samples come from :mod:`zero9.learn.training.window`; the round that steps the optimizer
over these losses is :mod:`zero9.learn.training.train`.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from zero9.games import BLACK
from zero9.nn.chunks import ChunkData
from zero9.nn.features import transform_planes, transform_policy
from zero9.settings import TrainOptions


def make_batch(samples: ChunkData, idx: np.ndarray, rng: np.random.Generator | None,
               size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Planes, policy, value (and ownership) of ``idx``, each under a random symmetry when ``rng``."""

    planes = samples.planes[idx].astype(np.float32)
    policy = samples.policy[idx].copy()
    value = samples.value[idx]
    own = None if samples.ownership is None else samples.ownership[idx].astype(np.float32)
    if rng is not None:
        syms = rng.integers(0, 8, len(idx))
        for sym in range(1, 8):
            sel = np.nonzero(syms == sym)[0]
            if len(sel) == 0:
                continue
            planes[sel] = transform_planes(planes[sel], sym)
            policy[sel] = transform_policy(policy[sel], sym, size)
            if own is not None:
                board = own[sel].reshape(len(sel), size, size)
                own[sel] = transform_planes(board, sym).reshape(len(sel), size * size)
    return planes, policy, value, own


def komi_view(samples: ChunkData, idx: np.ndarray) -> np.ndarray | None:
    """Komi from the side to move's view for ``idx`` (-komi for Black, +komi for White), or None
    without ownership targets (no score target then)."""
    if samples.ownership is None:
        return None
    komi = float(samples.game.get("komi", 0.0))
    return np.where(samples.to_play[idx] == BLACK, -komi, komi).astype(np.float32)


def score_target(own: torch.Tensor, komi: torch.Tensor) -> torch.Tensor:
    """The final score lead from the side to move's view over the board's points: the ownership
    target summed (own area minus the opponent's, Tromp-Taylor) with komi counted.

    The chunks hold the final ownership, so this needs no new field; ``own`` is [B, N*N]
    in {-1, 0, 1}, ``komi`` [B] from :func:`komi_view`.
    """
    return (own.sum(1) + komi) / own.shape[1]


def compute_losses(net, planes, policy, value, own, opts: TrainOptions, komi=None) -> dict:
    """Loss terms (tensors) for one batch: policy, value, ownership, score, l2, total, accuracy.

    With a score head (and ``komi``, :func:`komi_view`), also ``score_error`` and
    ``ownership_sum_error``: the mean absolute error in points of the score head and of the
    other estimate a net with ownership has, its predicted ownership summed plus komi.
    """

    out = net(planes)
    logits, v = out[0].float(), out[1].float()
    policy_loss = -(policy * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = F.mse_loss(v, value)
    # One flat vector instead of a sum over tensors: a few GPU kernels instead of ~4 per weight.
    weights = torch.cat([p.reshape(-1) for p in net.parameters() if p.dim() > 1])
    l2 = (weights.float() ** 2).sum()
    total = policy_loss + value_loss + opts.l2 * l2
    terms = {"policy_loss": policy_loss, "value_loss": value_loss, "l2": opts.l2 * l2}
    if own is not None and len(out) > 2:
        own_loss = F.mse_loss(out[2].float(), own)
        total = total + opts.ownership_weight * own_loss
        terms["ownership_loss"] = own_loss
    if own is not None and komi is not None and len(out) > 3:
        target = score_target(own, komi)
        score = out[3].float()
        score_loss = F.mse_loss(score, target)
        total = total + opts.score_weight * score_loss
        terms["score_loss"] = score_loss
        with torch.no_grad():
            points = own.shape[1]
            terms["score_error"] = (score - target).abs().mean() * points
            terms["ownership_sum_error"] = (score_target(out[2].float(), komi) - target).abs().mean() * points
    with torch.no_grad():
        terms["accuracy"] = (logits.argmax(1) == policy.argmax(1)).float().mean()
    terms["total"] = total
    return terms


def to_tensors(batch, device):
    """The batch's arrays as tensors on ``device``.

    To a GPU through pinned memory without waiting: a copy from ordinary (pageable) memory
    first waits for the GPU to finish its queue, so the next batch could not be made while
    the GPU still worked on this one.
    """

    cuda = device.type == "cuda"

    def move(a):
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.pin_memory().to(device, non_blocking=True) if cuda else t.to(device)

    return [None if a is None else move(a) for a in batch]


class LossSums:
    """Running sums of loss terms, kept on the net's device.

    Reading a GPU number back (``float(tensor)``) waits for every queued kernel; doing it
    for each term of each step kept a small net's GPU idle between steps. The terms of a
    step go into one vector that stays on the device, read once when a log row is written.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.total = None  # tensor [len(keys)]
        self.weight = 0

    def add(self, terms: dict, weight: int = 1) -> None:
        if self.total is None:
            self.keys = list(terms)
        values = torch.stack([terms[k].detach().float() for k in self.keys]) * weight
        self.total = values if self.total is None else self.total + values
        self.weight += weight

    def means(self) -> dict[str, float]:
        if self.total is None:
            return {}
        values = self.total.cpu().tolist()  # the one readback
        return {k: v / self.weight for k, v in zip(self.keys, values, strict=True)}


def evaluate(net, samples: ChunkData, opts: TrainOptions, device) -> dict:
    """Mean loss terms over (up to ``test_positions`` of) ``samples``, without symmetries."""

    n = min(len(samples), opts.test_positions)
    net.eval()
    sums = LossSums()
    with torch.no_grad(), autocast(device):
        for start in range(0, n, opts.batch_size):
            idx = np.arange(start, min(n, start + opts.batch_size))
            batch = (*make_batch(samples, idx, None, samples.size), komi_view(samples, idx))
            planes, policy, value, own, komi = to_tensors(batch, device)
            terms = compute_losses(net, planes, policy, value, own, opts, komi)
            sums.add(terms, weight=len(idx))
    net.train()
    return sums.means()


def autocast(device):
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
