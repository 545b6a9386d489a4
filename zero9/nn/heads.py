"""KataGo's heads on AlphaGo Zero's tower: the score lead, and heads pooled so that one net plays any size.

:mod:`zero9.nn.net` is the net to read first; :class:`ExtendedNet` is that :class:`ZeroNet` with
either or both of these, and :func:`make_net` / :func:`net_from_config` build whichever net a
shape or a checkpoint's config names (a plain :class:`ZeroNet` when it has neither).

Vocabulary:

- **score head** (with ownership, ``score=True``): FC from the value head's hidden layer to the
  final **score lead** (area, komi counted, side to move's view) over the board's ``N*N`` points;
  its target is the ownership target's sum and komi (:func:`zero9.learn.training.losses.score_target`).
  The input planes do not carry komi, so the head answers for the komi its games were played at:
  ``score_komi`` in the config (absent: Go's default komi, the only one nets were trained at before
  the key existed); :meth:`zero9.search.evaluator.NetEvaluator.ownership_and_scores` moves the
  answer to each position's own komi.
- **size-independent heads** (``heads="pooled"``; the fixed heads of :mod:`zero9.nn.net` are the
  default). The tower is convolutions only, so it runs on any board; the fixed heads' fully
  connected layers are what tie a net to one size. With pooled heads nothing is sized by the
  board, so the same weights run on every size within :mod:`zero9.nn.net_limits` (a Gomoku net
  plays 15x15 and 20x20):

  - **global pooling** (:func:`global_pool`): per channel, over the board, the mean, the mean
    times ``(N - 14) / 10`` (so a layer can tell a big board from a small one, KataGo's width
    scaling) and the max: ``3 * C`` numbers whatever N is.
  - **pooled policy head**: two 1x1 conv blocks of ``head_channels``; the second is pooled and a
    linear layer turns it into a per-channel bias added to the first (a board-wide view, e.g.
    "a four is on the board somewhere"), ReLU, then a 1x1 conv with bias to **one logit per
    point**; Go's **pass logit** is a linear layer from the same pooled vector.
  - **pooled value head**: a 1x1 conv block of ``head_channels``, pooled, then the fixed head's
    FC to 256, ReLU, FC to 1, tanh (and the score head on that hidden layer, as above).
  - **serves**: a pooled net plays any size in the net limits (:data:`MIN_BOARD` ..
    :data:`MAX_BOARD`, 2..25). Batches hold one board size each (pooling has no mask for
    padding, unlike KataGo's mixed-size batches).
- **config**: ``score``, ``heads: "pooled"`` and ``head_channels`` are in ``net.config`` (so in a
  checkpoint's ``config`` and meta, and in the hash) only for nets that have them; ``size`` and
  ``num_actions`` name the board it was made for (its checkpoint's game). Configs without them
  are as they always were, so shipped nets load and hash as before. Leela Zero's weight files
  cannot hold pooled heads: :func:`zero9.nn.weights.lz_text` refuses them.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from zero9.games.go import Go
from zero9.nn import net as zero
from zero9.nn.net import VALUE_HIDDEN, ConvBlock, ZeroNet

FIXED_HEADS, POOLED_HEADS = "fixed", "pooled"
HEAD_KINDS = (FIXED_HEADS, POOLED_HEADS)
POOLED_HEAD_CHANNELS = 32  # KataGo's b10c128 heads are 32 wide too
POOL_FEATURES = 3  # mean, width-scaled mean, max
WIDTH_CENTRE, WIDTH_SCALE = 14, 10  # KataGo's: the scaled mean is 0 at 14x14, +-0.5 at 9x9 and 19x19
MIN_BOARD, MAX_BOARD = 2, 25  # the board sides zero9 nets take (zero9.nn.net_limits checks files by them)


def global_pool(x: torch.Tensor) -> torch.Tensor:
    """[B, C, N, N] -> [B, 3C]: per channel the mean, the mean scaled by the board's width, the max."""
    mean = x.mean(dim=(2, 3))
    width = (x.shape[-1] - WIDTH_CENTRE) / WIDTH_SCALE
    return torch.cat([mean, mean * width, x.amax(dim=(2, 3))], dim=1)


class PooledPolicyHead(nn.Module):
    """One logit per point from 1x1 convs, biased by a pooled view of the board; Go's pass from the pool."""

    def __init__(self, filters: int, channels: int, pass_logit: bool):
        super().__init__()
        self.spatial = ConvBlock(filters, channels, 1, relu=False)
        self.pooled = ConvBlock(filters, channels, 1)
        self.bias_fc = nn.Linear(POOL_FEATURES * channels, channels)
        self.logit_conv = nn.Conv2d(channels, 1, 1)
        self.pass_fc = nn.Linear(POOL_FEATURES * channels, 1) if pass_logit else None

    def forward(self, trunk: torch.Tensor) -> torch.Tensor:
        pooled = global_pool(self.pooled(trunk))
        spatial = F.relu(self.spatial(trunk) + self.bias_fc(pooled)[:, :, None, None])
        logits = torch.flatten(self.logit_conv(spatial), 1)
        if self.pass_fc is None:
            return logits
        return torch.cat([logits, self.pass_fc(pooled)], dim=1)


class ExtendedNet(ZeroNet):
    """:class:`ZeroNet` with a score head and/or pooled heads (see the module docstring).

    Its layers are made, and so drawn from torch's random numbers and listed in the state dict
    (whose order the net hash follows), in the order they always were: the tower, the policy head,
    the value head, ownership, score.
    """

    def __init__(self, in_planes: int, size: int, num_actions: int, blocks: int = zero.DEFAULT_BLOCKS,
                 filters: int = zero.DEFAULT_FILTERS, ownership: bool = False, score: bool = False,
                 heads: str = FIXED_HEADS, head_channels: int = POOLED_HEAD_CHANNELS,
                 score_komi: float | None = None):
        if score and not ownership:
            raise ValueError("a score head needs the ownership head (its target is the ownership sum)")
        if heads not in HEAD_KINDS:
            raise ValueError(f"unknown heads {heads!r}: expected {' or '.join(HEAD_KINDS)}")
        if heads == POOLED_HEADS and head_channels < 1:
            raise ValueError(f"bad head_channels {head_channels} for pooled heads")
        # read by make_policy_and_value_heads, which ZeroNet.__init__ calls (a plain int: no Module state)
        self.pooled_channels = int(head_channels) if heads == POOLED_HEADS else None
        super().__init__(in_planes, size, num_actions, blocks, filters, ownership)
        self.score_fc = nn.Linear(VALUE_HIDDEN, 1) if score else None
        if score:  # only when on: older checkpoints' configs (and hashes) stay as they were
            self.config["score"] = True
        # the komi the score head's games were played at (module docstring); only when given, likewise
        self.score_komi = float(Go.komi if score_komi is None else score_komi)
        if score and score_komi is not None:
            self.config["score_komi"] = self.score_komi
        if self.pooled_channels is not None:  # likewise: fixed-head configs carry neither key
            self.config["heads"] = POOLED_HEADS
            self.config["head_channels"] = self.pooled_channels

    def make_policy_and_value_heads(self, filters: int, size: int, num_actions: int) -> None:
        channels = self.pooled_channels
        if channels is None:
            super().make_policy_and_value_heads(filters, size, num_actions)
            return
        # no policy_conv/policy_fc: the state dict's keys say which heads a net has
        self.policy_head = PooledPolicyHead(filters, channels, num_actions == size * size + 1)
        self.value_conv = ConvBlock(filters, channels, 1)
        self.value_fc1 = nn.Linear(POOL_FEATURES * channels, VALUE_HIDDEN)

    @property
    def size_independent(self) -> bool:
        """Pooled heads: the same weights on every board size in the net limits."""
        return self.pooled_channels is not None

    def serves_size(self, size: int) -> bool:
        """Whether the net plays a ``size`` x ``size`` board: its own, or any in the limits when pooled."""
        if not self.size_independent:
            return super().serves_size(size)
        return MIN_BOARD <= size <= MAX_BOARD

    def sizes_served(self) -> str:
        if not self.size_independent:
            return super().sizes_served()
        return f"any board from {MIN_BOARD}x{MIN_BOARD} to {MAX_BOARD}x{MAX_BOARD} (size-independent heads)"

    def policy(self, trunk: torch.Tensor) -> torch.Tensor:
        return self.policy_head(trunk) if self.size_independent else super().policy(trunk)

    def value_hidden(self, trunk: torch.Tensor) -> torch.Tensor:
        if not self.size_independent:
            return super().value_hidden(trunk)
        return F.relu(self.value_fc1(global_pool(self.value_conv(trunk))))

    def more_heads(self, hidden: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The score lead [B] (the lead over N*N, see the module docstring), after ownership."""
        return () if self.score_fc is None else (self.score_fc(hidden).squeeze(1),)


def make_net(game: Any, blocks: int = zero.DEFAULT_BLOCKS, filters: int = zero.DEFAULT_FILTERS,
             ownership: bool = False, in_planes: int | None = None, score: bool = False,
             heads: str = FIXED_HEADS) -> ZeroNet:
    """A fresh net shaped for ``game`` (a :class:`zero9.games.Game`): :func:`zero9.nn.net.make_net`'s,
    with a score head and/or ``heads="pooled"`` (one that plays every size, made for ``game``'s)."""
    if not score and heads == FIXED_HEADS:
        return zero.make_net(game, blocks, filters, ownership, in_planes)
    if in_planes is None:
        in_planes = zero.num_planes(game)
    if ownership and game.name != "go":
        raise ValueError(f"an ownership head is for Go only, not {game.name}")
    komi = getattr(game, "komi", None) if score else None
    return ExtendedNet(in_planes, game.size, game.num_actions, blocks, filters, ownership, score, heads,
                       score_komi=komi)


def net_from_config(config: dict[str, Any]) -> ZeroNet:
    """Rebuild an (untrained) net of the shape that ``net.config`` describes (a checkpoint's ``config``)."""
    keys = ("in_planes", "size", "num_actions", "blocks", "filters")
    missing = [k for k in keys if k not in config]
    if missing:
        raise ValueError(f"net config lacks {', '.join(missing)}: {config!r}")
    in_planes, size, num_actions, blocks, filters = (int(config[k]) for k in keys)
    ownership, score = bool(config.get("ownership", False)), bool(config.get("score", False))
    heads = config.get("heads", FIXED_HEADS)
    if not score and heads == FIXED_HEADS:
        return ZeroNet(in_planes, size, num_actions, blocks, filters, ownership=ownership)
    return ExtendedNet(in_planes, size, num_actions, blocks, filters, ownership=ownership, score=score,
                       heads=heads, head_channels=config.get("head_channels", POOLED_HEAD_CHANNELS),
                       score_komi=config.get("score_komi"))


def flops_per_position(config: dict[str, Any], size: int | None = None) -> int:
    """:func:`zero9.nn.net.flops_per_position` for any net: with a score head, with pooled heads (pooling
    left out), and for a pooled net on another board ``size`` (default its own)."""
    size = config["size"] if size is None else size
    if config.get("heads") != POOLED_HEADS:
        if size != config["size"]:
            raise ValueError(f"a fixed-head net plays {config['size']}x{config['size']}, not {size}x{size}")
        return zero.flops_per_position(config) + 2 * VALUE_HIDDEN * bool(config.get("score"))
    n2, f = size * size, config["filters"]
    h, pooled = config["head_channels"], POOL_FEATURES * config["head_channels"]
    macs = zero.tower_macs(config, size)
    macs += 2 * n2 * f * h + pooled * h + n2 * h  # policy: two convs, the bias FC, the logit conv
    if config["num_actions"] == config["size"] ** 2 + 1:
        macs += pooled  # the pass logit
    macs += n2 * f * h + pooled * VALUE_HIDDEN + VALUE_HIDDEN
    if config.get("ownership"):
        macs += n2 * f
    if config.get("score"):
        macs += VALUE_HIDDEN
    return 2 * macs
