"""The residual tower: AlphaGo Zero's network, in Leela Zero's shape, in plain PyTorch.

Vocabulary:

- **planes**: the input, float32 ``[B, C, N, N]`` from :mod:`zero9.nn.features`
  (C = 18 for Go, 5 for Gomoku). Plane row ``r`` is board row ``y = r``, so a
  plane flattened to ``N*N`` is indexed by point number ``y*N + x``.
- **tower**: one 3x3 *input conv block* then ``blocks`` *residual blocks*
  (conv block, conv, BN, add the skip, ReLU), all ``filters`` wide.
- **conv block**: convolution without bias, batch norm without scale or centre,
  then a learnable per-channel **beta** added, then (usually) ReLU.
- **policy head**: 1x1 conv to 2 filters, BN + beta, ReLU, fully connected layer
  from ``2*N*N`` features (channel-major: ``c*N*N + point``) to one **logit** per
  action (``N*N + 1`` for Go, pass last; ``N*N`` for Gomoku).
- **value head**: 1x1 conv to 1 filter, BN + beta, ReLU, FC to 256 (the **hidden** layer), ReLU,
  FC to 1, tanh. The **value** is in ``[-1, 1]`` from the side to move's view (Leela Zero v1).
- **ownership head** (optional, Go only, ``ownership=True``): a 1x1 conv from the
  tower with bias, tanh, one number per point in ``[-1, 1]``: +1 = the point ends
  as the side to move's area. A KataGo-style auxiliary target; Leela Zero's
  files cannot hold it.
- **config**: the shape as a dict (``net.config``), kept in checkpoints and hashed with the weights.

KataGo's further heads, the score lead and heads pooled so that one net plays every board size,
are :mod:`zero9.nn.heads`, on this tower.

Batch norm and Leela Zero's weight files. Leela Zero's files hold, per conv
block, the conv weights, a "channel bias" ``b``, the BN running mean ``m`` and
running variance ``v``; there is no gamma. Its engine folds the bias into the
mean (``m -= b``), i.e. it computes ``(conv(x) + b - m) / sqrt(v + eps)`` with
``eps = 1e-5``. Its trainers learn a BN *beta* after normalisation instead (a
bias before BN would be cancelled by the batch mean) and write
``b = beta * sqrt(v + eps)``. So here each conv block is
``BatchNorm2d(affine=False, eps=1e-5)`` plus a parameter ``beta``, and
:mod:`zero9.nn.weights` converts ``beta <-> b`` through the running variance. The
two forms give the same output in eval mode.

Sizes and devices: the default, 10 blocks x 64 filters, is for play on a desktop CPU; 10 x 128
(leelaz-ninenine's 9x9 nets) for training on a GPU (``scripts/bench_net.py`` measures both).
:func:`resolve_device` picks ``cuda`` when there is one; there :meth:`ZeroNet.predict` runs under
bf16 autocast. Channels-last memory (:meth:`ZeroNet.set_channels_last`) is what loaded nets use
for inference, where the bench measured it faster.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zero9.nn.features import num_planes
from zero9.settings import NetConfig

BN_EPSILON = 1e-5  # Leela Zero's
VALUE_HIDDEN = 256  # Leela Zero's value head width
POLICY_FILTERS = 2
VALUE_FILTERS = 1
DEFAULT_BLOCKS = NetConfig.blocks
DEFAULT_FILTERS = NetConfig.filters


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """'auto' -> cuda if available else cpu; 'cpu' and 'cuda[:k]' as given.

    Asking for cuda on a machine without it is a ValueError, not a silent fallback.
    """
    if isinstance(name, torch.device):
        return name
    text = str(name).strip().lower()
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text == "cpu":
        return torch.device("cpu")
    if text.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {name!r} asked for, but torch sees no CUDA device")
        return torch.device(text)
    raise ValueError(f"unknown device {name!r}: expected auto, cpu or cuda")


class ConvBlock(nn.Module):
    """Conv (no bias) -> BN without scale or centre -> + beta -> optional ReLU."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, relu: bool = True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, eps=BN_EPSILON, affine=False)
        self.beta = nn.Parameter(torch.zeros(out_channels))
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.conv(x)) + self.beta.view(1, -1, 1, 1)
        return F.relu(y) if self.relu else y


class ResidualBlock(nn.Module):
    """Two 3x3 conv blocks with the skip added before the second ReLU."""

    def __init__(self, filters: int):
        super().__init__()
        self.conv1 = ConvBlock(filters, filters, 3)
        self.conv2 = ConvBlock(filters, filters, 3, relu=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.conv2(self.conv1(x)) + x)


class ZeroNet(nn.Module):
    """Policy and value (and optional ownership) from input planes. See the module docstring."""

    def __init__(self, in_planes: int, size: int, num_actions: int, blocks: int = DEFAULT_BLOCKS,
                 filters: int = DEFAULT_FILTERS, ownership: bool = False):
        super().__init__()
        _check_shape(in_planes, size, num_actions, blocks, filters)
        self.config: dict[str, Any] = {
            "in_planes": int(in_planes),
            "size": int(size),
            "num_actions": int(num_actions),
            "blocks": int(blocks),
            "filters": int(filters),
            "ownership": bool(ownership),
        }
        self.input_block = ConvBlock(in_planes, filters, 3)
        self.tower = nn.Sequential(*[ResidualBlock(filters) for _ in range(blocks)])
        self.make_policy_and_value_heads(filters, size, num_actions)
        self.value_fc2 = nn.Linear(VALUE_HIDDEN, 1)
        self.ownership_conv = nn.Conv2d(filters, 1, 1) if ownership else None
        self.channels_last = False

    def make_policy_and_value_heads(self, filters: int, size: int, num_actions: int) -> None:
        """The policy head, and the value head up to its hidden layer: fully connected over the board."""
        self.policy_conv = ConvBlock(filters, POLICY_FILTERS, 1)
        self.policy_fc = nn.Linear(POLICY_FILTERS * size * size, num_actions)
        self.value_conv = ConvBlock(filters, VALUE_FILTERS, 1)
        self.value_fc1 = nn.Linear(VALUE_FILTERS * size * size, VALUE_HIDDEN)

    @property
    def size(self) -> int:
        """The board the net was made for (its checkpoint's game); :meth:`serves_size` says which it plays."""
        return self.config["size"]

    @property
    def num_actions(self) -> int:
        return self.config["num_actions"]

    @property
    def has_pass(self) -> bool:
        return self.config["num_actions"] == self.size * self.size + 1

    @property
    def size_independent(self) -> bool:
        """Whether the same weights play every board size (pooled heads, :mod:`zero9.nn.heads`): not these."""
        return False

    def serves_size(self, size: int) -> bool:
        """Whether the net plays a ``size`` x ``size`` board: the heads' FC layers fix it to its own."""
        return size == self.size

    def sizes_served(self) -> str:
        """The sizes :meth:`serves_size` accepts, in words for error messages."""
        return f"a {self.size}x{self.size} board"

    def actions_for(self, size: int) -> int:
        """The policy's length on a ``size`` x ``size`` board (one per point, and pass for Go)."""
        return size * size + int(self.has_pass)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def policy(self, trunk: torch.Tensor) -> torch.Tensor:
        """The policy head: the tower's output -> logits [B, A]."""
        return self.policy_fc(torch.flatten(self.policy_conv(trunk), 1))

    def value_hidden(self, trunk: torch.Tensor) -> torch.Tensor:
        """The value head up to its hidden layer, [B, 256]."""
        return F.relu(self.value_fc1(torch.flatten(self.value_conv(trunk), 1)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``x`` [B, C, N, N] -> (policy logits [B, A], value [B][, ownership [B, N*N]])."""
        trunk = self.tower(self.input_block(x))
        policy, hidden = self.policy(trunk), self.value_hidden(trunk)
        out: tuple[torch.Tensor, ...] = (policy, torch.tanh(self.value_fc2(hidden)).squeeze(1))
        if self.ownership_conv is not None:
            out += (torch.tanh(torch.flatten(self.ownership_conv(trunk), 1)),)
        return out + self.more_heads(hidden)

    def more_heads(self, hidden: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Outputs beyond AlphaGo Zero's, from the value head's hidden layer: none (the score lead:
        :mod:`zero9.nn.heads`)."""
        return ()

    def set_channels_last(self, enabled: bool = True) -> ZeroNet:
        """Store conv weights NHWC, and give :meth:`predict`'s input that layout.

        ``scripts/bench_net.py``: on 2 CPU threads 15-25% faster at batches 1-64, on an H100 1.5x at
        batch 1024; :func:`zero9.nn.checkpoint.load_net` sets it, a net being trained need not.
        """
        fmt = torch.channels_last if enabled else torch.contiguous_format
        self.to(memory_format=fmt)  # type: ignore[call-overload]  # Module.to takes it; torch's stub lacks it
        self.channels_last = enabled
        return self

    def predict(self, planes: np.ndarray, ownership: bool = False) -> tuple[np.ndarray, ...]:
        """Numpy planes [B, C, N, N] -> (probs [B, A] float32, value [B] float32), in eval mode.

        ``ownership`` (a net with the head): a third array, ownership [B, N*N] float32 (and any
        further head's output after it, :mod:`zero9.nn.heads`).
        """
        planes = np.asarray(planes)
        n = planes.shape[-1] if planes.ndim == 4 and self.serves_size(planes.shape[-1]) else self.size
        expect = (self.config["in_planes"], n, n)
        if planes.ndim != 4 or tuple(planes.shape[1:]) != expect:
            want = ", ".join(map(str, expect))
            side = "N, N for any N it serves" if self.size_independent else f"{self.size}, {self.size}"
            raise ValueError(f"predict wants planes [B, {self.config['in_planes']}, {side}] "
                             f"(e.g. [B, {want}]), got {planes.shape}")
        if self.training:
            self.eval()
        device = self.device
        x = torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32)).to(device, non_blocking=True)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.inference_mode(), torch.autocast(
            device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"
        ):
            out = self(x)
            probs = torch.softmax(out[0].float(), dim=1)
            value = out[1].float()
        if ownership:
            if len(out) < 3:
                raise ValueError("this net has no ownership head")
            heads = tuple(o.float().cpu().numpy() for o in out[2:])
            return (probs.cpu().numpy(), value.cpu().numpy(), *heads)
        return probs.cpu().numpy(), value.cpu().numpy()


def _check_shape(in_planes: int, size: int, num_actions: int, blocks: int, filters: int) -> None:
    if in_planes < 1 or filters < 1 or blocks < 0:
        raise ValueError(f"bad net shape: in_planes={in_planes}, blocks={blocks}, filters={filters}")
    if size < 2:
        raise ValueError(f"bad board size {size} for a net")
    if num_actions not in (size * size, size * size + 1):
        raise ValueError(f"num_actions {num_actions} fits neither {size}x{size} Go nor Gomoku")


def make_net(game: Any, blocks: int = DEFAULT_BLOCKS, filters: int = DEFAULT_FILTERS,
             ownership: bool = False, in_planes: int | None = None) -> ZeroNet:
    """A fresh net shaped for ``game`` (a :class:`zero9.games.Game`); with a score head or pooled
    heads: :func:`zero9.nn.heads.make_net`."""
    if in_planes is None:
        in_planes = num_planes(game)
    if ownership and game.name != "go":
        raise ValueError(f"an ownership head is for Go only, not {game.name}")
    return ZeroNet(in_planes, game.size, game.num_actions, blocks, filters, ownership)


def tower_macs(config: dict[str, Any], size: int) -> int:
    """Multiply-adds of the input conv and the residual tower on a ``size`` x ``size`` board."""
    n2, c_in, f = size * size, config["in_planes"], config["filters"]
    return n2 * 9 * c_in * f + config["blocks"] * 2 * n2 * 9 * f * f


def flops_per_position(config: dict[str, Any]) -> int:
    """Floating-point operations (2 per multiply-add) of one forward pass, convs and FCs only.

    Batch norm, ReLU, adds and the softmax are left out (under 1% for any real tower). Nets with
    further heads: :func:`zero9.nn.heads.flops_per_position`.
    """
    n2, f = config["size"] ** 2, config["filters"]
    macs = tower_macs(config, config["size"])
    macs += n2 * f * POLICY_FILTERS + POLICY_FILTERS * n2 * config["num_actions"]
    macs += n2 * f * VALUE_FILTERS + VALUE_FILTERS * n2 * VALUE_HIDDEN + VALUE_HIDDEN
    if config.get("ownership"):
        macs += n2 * f
    return 2 * macs


def parameter_count(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
