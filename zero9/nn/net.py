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
- **value head**: 1x1 conv to 1 filter, BN + beta, ReLU, FC to 256, ReLU, FC to 1,
  tanh. The **value** is in ``[-1, 1]`` from the side to move's view (Leela Zero v1).
- **ownership head** (optional, Go only, ``ownership=True``): a 1x1 conv from the
  tower with bias, tanh, one number per point in ``[-1, 1]``: +1 = the point ends
  as the side to move's area. A KataGo-style auxiliary target; Leela Zero's
  files cannot hold it.
- **score head** (optional, with ownership, ``score=True``): FC from the value head's hidden
  layer to the final **score lead** (area, komi counted, side to move's view) over the board's
  ``N*N`` points; its target is the ownership target's sum and komi (:func:`zero9.learn.train.score_target`).

Size-independent heads (``heads="pooled"``, KataGo's idea; the fixed heads above are the default).
The tower is convolutions only, so it runs on any board; the fixed heads' fully connected layers
are what tie a net to one size. With pooled heads nothing is sized by the board, so the same
weights run on every size within :mod:`zero9.nn.net_limits` (a Gomoku net plays 15x15 and 20x20):

- **global pooling** (:func:`global_pool`): per channel, over the board, the mean, the mean times
  ``(N - 14) / 10`` (so a layer can tell a big board from a small one, KataGo's width scaling)
  and the max: ``3 * C`` numbers whatever N is.
- **pooled policy head**: two 1x1 conv blocks of ``head_channels``; the second is pooled and a
  linear layer turns it into a per-channel bias added to the first (a board-wide view, e.g.
  "a four is on the board somewhere"), ReLU, then a 1x1 conv with bias to **one logit per
  point**; Go's **pass logit** is a linear layer from the same pooled vector.
- **pooled value head**: a 1x1 conv block of ``head_channels``, pooled, then the fixed head's
  FC to 256, ReLU, FC to 1, tanh (and the score head on that hidden layer, as above).
- **config**: ``heads: "pooled"`` and ``head_channels`` are in ``net.config`` (so in a
  checkpoint's ``config`` and meta, and in the hash) only for such nets; ``size`` and
  ``num_actions`` name the board it was made for (its checkpoint's game). Fixed-head configs
  are as they always were, so shipped nets load and hash as before. Leela Zero's weight
  files cannot hold pooled heads: :func:`zero9.nn.weights.lz_text` refuses them.
- **serves**: :meth:`ZeroNet.serves_size`: a fixed-head net its one size, a pooled one any
  size in the net limits (:data:`MIN_BOARD` .. :data:`MAX_BOARD`, 2..25). Batches hold one
  board size each (pooling has no mask for padding, unlike KataGo's mixed-size batches).

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

Sizes. The default, 10 blocks x 64 filters (0.12 GFLOP per 9x9 position), is for
play on a desktop CPU: about 0.8 ms per position at batch 64 on 2 idle Xeon threads.
For training on a GPU 10 x 128 (0.48 GFLOP, leelaz-ninenine's 9x9 nets) is the
suggested size: an H100 evaluates 160-200k positions/s of it at batch 64 compiled.
``scripts/bench_net.py`` measures these.

Devices: :func:`resolve_device` picks ``cuda`` when there is one. On CUDA,
:meth:`ZeroNet.predict` runs under bf16 autocast. Channels-last memory
(:meth:`ZeroNet.tune_for_device`) and ``torch.compile`` with CUDA graphs
(:meth:`ZeroNet.enable_compile`, CUDA only) are opt-in, used where ``scripts/bench_net.py``
measured them faster.
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
GPU_TRAINING_FILTERS = 128
FIXED_HEADS, POOLED_HEADS = "fixed", "pooled"
HEAD_KINDS = (FIXED_HEADS, POOLED_HEADS)
POOLED_HEAD_CHANNELS = 32  # KataGo's b10c128 heads are 32 wide too
POOL_FEATURES = 3  # mean, width-scaled mean, max
WIDTH_CENTRE, WIDTH_SCALE = 14, 10  # KataGo's: the scaled mean is 0 at 14x14, +-0.5 at 9x9 and 19x19
MIN_BOARD, MAX_BOARD = 2, 25  # the board sides zero9 nets take (zero9.nn.net_limits checks files by them)


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


class ZeroNet(nn.Module):
    """Policy and value (and optional ownership) from input planes. See the module docstring."""

    def __init__(
        self,
        in_planes: int,
        size: int,
        num_actions: int,
        blocks: int = DEFAULT_BLOCKS,
        filters: int = DEFAULT_FILTERS,
        ownership: bool = False,
        score: bool = False,
        heads: str = FIXED_HEADS,
        head_channels: int = POOLED_HEAD_CHANNELS,
    ):
        super().__init__()
        if score and not ownership:
            raise ValueError("a score head needs the ownership head (its target is the ownership sum)")
        _check_shape(in_planes, size, num_actions, blocks, filters)
        if heads not in HEAD_KINDS:
            raise ValueError(f"unknown heads {heads!r}: expected {' or '.join(HEAD_KINDS)}")
        if heads == POOLED_HEADS and head_channels < 1:
            raise ValueError(f"bad head_channels {head_channels} for pooled heads")
        self.config: dict[str, Any] = {
            "in_planes": int(in_planes),
            "size": int(size),
            "num_actions": int(num_actions),
            "blocks": int(blocks),
            "filters": int(filters),
            "ownership": bool(ownership),
        }
        if score:  # only when on: older checkpoints' configs (and hashes) stay as they were
            self.config["score"] = True
        pooled = heads == POOLED_HEADS
        if pooled:  # likewise: fixed-head configs carry neither key
            self.config["heads"] = POOLED_HEADS
            self.config["head_channels"] = int(head_channels)
        points = size * size
        self.input_block = ConvBlock(in_planes, filters, 3)
        self.tower = nn.Sequential(*[ResidualBlock(filters) for _ in range(blocks)])
        if pooled:  # no policy_conv/policy_fc: the state dict's keys say which heads a net has
            self.policy_head = PooledPolicyHead(filters, head_channels, num_actions == points + 1)
            self.value_conv = ConvBlock(filters, head_channels, 1)
            self.value_fc1 = nn.Linear(POOL_FEATURES * head_channels, VALUE_HIDDEN)
        else:
            self.policy_conv = ConvBlock(filters, POLICY_FILTERS, 1)
            self.policy_fc = nn.Linear(POLICY_FILTERS * points, num_actions)
            self.value_conv = ConvBlock(filters, VALUE_FILTERS, 1)
            self.value_fc1 = nn.Linear(VALUE_FILTERS * points, VALUE_HIDDEN)
        self.value_fc2 = nn.Linear(VALUE_HIDDEN, 1)
        self.ownership_conv = nn.Conv2d(filters, 1, 1) if ownership else None
        self.score_fc = nn.Linear(VALUE_HIDDEN, 1) if score else None
        self.channels_last = False
        object.__setattr__(self, "_compiled", None)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ZeroNet:
        """Rebuild an (untrained) net of the shape that ``net.config`` describes."""
        keys = ("in_planes", "size", "num_actions", "blocks", "filters")
        missing = [k for k in keys if k not in config]
        if missing:
            raise ValueError(f"net config lacks {', '.join(missing)}: {config!r}")
        return cls(**{k: config[k] for k in keys}, ownership=bool(config.get("ownership", False)),
                   score=bool(config.get("score", False)), heads=config.get("heads", FIXED_HEADS),
                   head_channels=config.get("head_channels", POOLED_HEAD_CHANNELS))

    @property
    def size(self) -> int:
        """The board the net was made for (its checkpoint's game); :meth:`serves_size` says which it plays."""
        return self.config["size"]

    @property
    def size_independent(self) -> bool:
        """Pooled heads: the same weights on every board size in the net limits."""
        return self.config.get("heads") == POOLED_HEADS

    @property
    def has_pass(self) -> bool:
        return self.config["num_actions"] == self.size * self.size + 1

    def serves_size(self, size: int) -> bool:
        """Whether the net plays a ``size`` x ``size`` board: its own, or any in the limits when pooled."""
        if not self.size_independent:
            return size == self.size
        return MIN_BOARD <= size <= MAX_BOARD

    def sizes_served(self) -> str:
        """The sizes :meth:`serves_size` accepts, in words for error messages."""
        if not self.size_independent:
            return f"a {self.size}x{self.size} board"
        return f"any board from {MIN_BOARD}x{MIN_BOARD} to {MAX_BOARD}x{MAX_BOARD} (size-independent heads)"

    def actions_for(self, size: int) -> int:
        """The policy's length on a ``size`` x ``size`` board (one per point, and pass for Go)."""
        return size * size + int(self.has_pass)

    @property
    def num_actions(self) -> int:
        return self.config["num_actions"]

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``x`` [B, C, N, N] -> (policy logits [B, A], value [B][, ownership [B, N*N][, score [B]]])."""
        trunk = self.tower(self.input_block(x))
        if self.size_independent:
            policy = self.policy_head(trunk)
            hidden = F.relu(self.value_fc1(global_pool(self.value_conv(trunk))))
        else:
            policy = self.policy_fc(torch.flatten(self.policy_conv(trunk), 1))
            hidden = F.relu(self.value_fc1(torch.flatten(self.value_conv(trunk), 1)))
        value = torch.tanh(self.value_fc2(hidden)).squeeze(1)
        if self.ownership_conv is None:
            return policy, value
        ownership = torch.tanh(torch.flatten(self.ownership_conv(trunk), 1))
        if self.score_fc is None:
            return policy, value, ownership
        return policy, value, ownership, self.score_fc(hidden).squeeze(1)

    def set_channels_last(self, enabled: bool = True) -> ZeroNet:
        """Store conv weights NHWC (faster on some GPUs; bench_net.py measures it)."""
        fmt = torch.channels_last if enabled else torch.contiguous_format
        self.to(memory_format=fmt)
        self.channels_last = enabled
        return self

    def enable_compile(self, enabled: bool = True, mode: str = "reduce-overhead") -> ZeroNet:
        """Let :meth:`predict` run a ``torch.compile``'d forward.

        Worth it on CUDA: with CUDA graphs (``reduce-overhead``) a 10x128 net runs 7-12x
        faster at batches 1-64 on an H100 (scripts/bench_net.py). Each new batch size
        compiles again (~15-30 s), so use it with a fixed batch. Not on the CPU.
        """
        # object.__setattr__: a compiled wrapper must not become a submodule (it would
        # appear twice in state_dict)
        object.__setattr__(self, "_compiled", torch.compile(self, mode=mode) if enabled else None)
        return self

    def tune_for_device(self) -> ZeroNet:
        """Make inference fast where it measured faster: channels-last on CPU and CUDA.

        scripts/bench_net.py: on 2 CPU threads channels-last was 15-25% faster at batches
        1-64 (a little slower at 256); on an H100 1.5x at batch 1024. :func:`zero9.nn.checkpoint.load_net`
        calls this; a net being trained need not.
        """
        return self.set_channels_last(True)

    def predict(self, planes: np.ndarray, ownership: bool = False) -> tuple[np.ndarray, ...]:
        """Numpy planes [B, C, N, N] -> (probs [B, A] float32, value [B] float32), in eval mode.

        ``ownership`` (a net with the head): a third array, ownership [B, N*N] float32, and with
        a score head a fourth, the score head's output [B] (the lead over N*N, see ``score``).
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
        forward = self if self._compiled is None else self._compiled
        with torch.inference_mode(), torch.autocast(
            device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"
        ):
            out = forward(x)
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
             ownership: bool = False, in_planes: int | None = None, score: bool = False,
             heads: str = FIXED_HEADS) -> ZeroNet:
    """A fresh net shaped for ``game`` (a :class:`zero9.games.Game`); ``heads="pooled"``: one that
    plays every size (module docstring), made for ``game``'s.

    ``in_planes`` defaults to :func:`zero9.nn.features.num_planes` (imported only then).
    """
    if in_planes is None:
        in_planes = num_planes(game)
    if ownership and game.name != "go":
        raise ValueError(f"an ownership head is for Go only, not {game.name}")
    return ZeroNet(in_planes, game.size, game.num_actions, blocks, filters, ownership, score, heads)


def flops_per_position(config: dict[str, Any], size: int | None = None) -> int:
    """Floating-point operations (2 per multiply-add) of one forward pass, convs and FCs only.

    Batch norm, ReLU, adds, pooling and the softmax are left out (under 1% for any real tower).
    ``size``: the board (default the net's own; another only for pooled heads).
    """
    size = config["size"] if size is None else size
    n2 = size * size
    c_in, f = config["in_planes"], config["filters"]
    macs = n2 * 9 * c_in * f  # input conv
    macs += config["blocks"] * 2 * n2 * 9 * f * f  # residual tower
    if config.get("heads") == POOLED_HEADS:
        h, pooled = config["head_channels"], POOL_FEATURES * config["head_channels"]
        macs += 2 * n2 * f * h + pooled * h + n2 * h  # policy: two convs, the bias FC, the logit conv
        if config["num_actions"] == config["size"] ** 2 + 1:
            macs += pooled  # the pass logit
        macs += n2 * f * h + pooled * VALUE_HIDDEN + VALUE_HIDDEN
    else:
        macs += n2 * f * POLICY_FILTERS + POLICY_FILTERS * n2 * config["num_actions"]
        macs += n2 * f * VALUE_FILTERS + VALUE_FILTERS * n2 * VALUE_HIDDEN + VALUE_HIDDEN
    if config.get("ownership"):
        macs += n2 * f
    if config.get("score"):
        macs += VALUE_HIDDEN
    return 2 * macs


def parameter_count(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
