"""Leela Zero text weights (format version 1), read and written exactly.

Vocabulary:

- **LZ text** (``.txt``, or gzip'd ``.txt.gz`` / ``.gz``): line 1 is ``1``; then
  one tensor per line, whitespace-separated floats, in this order:

  - input conv block, 4 lines: conv weights ``[filters, in_planes, 3, 3]``,
    channel biases ``[filters]``, BN means, BN variances;
  - per residual block, 8 lines: the same 4 lines for each of its two convs;
  - policy head, 6 lines: conv weights ``[2, filters, 1, 1]``, biases ``[2]``,
    BN means, BN variances, FC weights ``[actions, 2*N*N]``, FC biases ``[actions]``;
  - value head, 8 lines: conv weights ``[1, filters, 1, 1]``, bias, BN mean, BN
    variance, FC1 weights ``[256, N*N]``, FC1 biases, FC2 weights ``[1, 256]``, FC2 bias.

- **shape detection** (as leelaz does): ``blocks = (lines - 1 - 4 - 14) / 8``;
  ``filters`` = the number of values on line 3; ``in_planes`` from the input conv;
  the board size ``N`` from the policy FC: ``N*N + 1`` outputs for Go. A file whose
  policy has exactly ``N*N`` outputs is read as a pass-less (Gomoku) net, a zero9
  extension that Leela Zero itself cannot use.
- **channel bias** ``b``: Leela Zero computes ``(conv + b - mean) / sqrt(var + 1e-5)``;
  zero9's conv blocks add a ``beta`` after normalising (see :mod:`zero9.nn.net`), so
  ``beta = b / sqrt(var + eps)`` on reading and ``b = beta * sqrt(var + eps)`` on
  writing, both in float64.
- **exact round trip**: float32 tensors are written with 9 significant digits and
  the channel biases as float64 ``repr``; a file zero9 writes loads back into a net
  whose parameters and buffers are bit-identical.

A file is parsed completely and checked line by line before any net exists, so a
truncated or garbled file raises ValueError naming the file and the line and
never leaves a half-loaded net.

- **bounded reading**: the file is streamed a line at a time (gunzipped as it is
  read), from a regular file only. Each cap is what the largest net of
  :mod:`zero9.nn.net_limits` needs: a line holds at most :data:`MAX_LINE_BYTES`
  (:data:`CHARS_PER_VALUE` characters for each value of the longest line), a file at
  most :data:`MAX_LINES` lines and :data:`MAX_PARAMETERS` values, and the shape the
  lines describe is checked against the limits before the net is built. A tiny gzip
  holding one endless line costs one capped line of memory, then a ValueError naming
  the file, the line and the cap.
"""

from __future__ import annotations

import gzip
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
import torch

from zero9.nn.net import BN_EPSILON, POLICY_FILTERS, VALUE_FILTERS, VALUE_HIDDEN, ZeroNet
from zero9.nn.net_limits import (
    MAX_BLOCKS,
    MAX_FILTERS,
    MAX_IN_PLANES,
    MAX_PARAMETERS,
    MAX_SIZE,
    shape_problem,
)
from zero9.util.files import atomic_write_bytes, read_text_lines

FORMAT_VERSION = "1"
INPUT_LINES = 4
BLOCK_LINES = 8
HEAD_LINES = 6 + 8  # policy + value
CHARS_PER_VALUE = 32  # "-1.2345678901234567e-05 " is 24; Leela Zero's own files use about 12
MAX_LINE_VALUES = max(9 * MAX_FILTERS * MAX_FILTERS, 9 * MAX_FILTERS * MAX_IN_PLANES,
                      (MAX_SIZE ** 2 + 1) * POLICY_FILTERS * MAX_SIZE ** 2, VALUE_HIDDEN * MAX_SIZE ** 2)
MAX_LINE_BYTES = CHARS_PER_VALUE * MAX_LINE_VALUES  # 75 MB: a 3x3 conv of 512 filters
MAX_LINES = 1 + INPUT_LINES + BLOCK_LINES * MAX_BLOCKS + HEAD_LINES + 16  # 16 blank lines may end it
MAX_WEIGHTS_FILE_BYTES = 2 << 30  # the file as stored (gzip'd or not)
MAX_WEIGHTS_TEXT_BYTES = 4 << 30  # its text; MAX_PARAMETERS values bound the parsing work first
PARSE_PIECE = 1 << 20  # a long line is split into tokens a MB at a time (tokens cost ~60 bytes each)


@dataclass(frozen=True)
class LZShape:
    """What a Leela Zero weights file says about its net."""

    blocks: int
    filters: int
    in_planes: int
    size: int
    num_actions: int

    @property
    def has_pass(self) -> bool:
        return self.num_actions == self.size * self.size + 1


def load_lz_weights(path: str | os.PathLike, expected_size: int | None = None) -> ZeroNet:
    """Read a Leela Zero v1 weights file (``.txt`` or gzip'd) into a new :class:`ZeroNet` on the CPU.

    ``expected_size``: refuse a net for another board size, naming both sizes. The file is
    streamed with caps (module docstring, *bounded reading*).
    """
    lines = read_text_lines(path, MAX_WEIGHTS_FILE_BYTES, MAX_WEIGHTS_TEXT_BYTES, MAX_LINE_BYTES,
                            "weights file")
    return _weights_from_lines(lines, str(path), expected_size)


def parse_lz_weights(text: str, name: str = "<text>", expected_size: int | None = None) -> ZeroNet:
    """Parse LZ v1 weights from ``text``; ``name`` is used in error messages."""
    return _weights_from_lines(text.splitlines(), name, expected_size)


def _weights_from_lines(lines: Iterable[str], name: str, expected_size: int | None) -> ZeroNet:
    tensors = _read_tensors(lines, name)
    blocks = _count_blocks(len(tensors), name)
    shape = _detect_shape(tensors, blocks, tensors[1].size, name)
    if expected_size is not None and shape.size != expected_size:
        raise ValueError(
            f"weights file {name} holds a {shape.size}x{shape.size} net, "
            f"but a {expected_size}x{expected_size} net is needed"
        )
    problem = shape_problem(asdict(shape))
    if problem is not None:
        raise ValueError(f"weights file {name}: {problem}; refused before allocating the net")
    _check_counts(tensors, shape, name)
    net = ZeroNet(shape.in_planes, shape.size, shape.num_actions, shape.blocks, shape.filters)
    net.load_state_dict(_state_dict(tensors, net), strict=True)
    net.eval()
    return net


def save_lz_weights(net: ZeroNet, path: str | os.PathLike, drop_ownership: bool = False) -> None:
    """Write ``net`` as Leela Zero v1 text, atomically; gzip'd when ``path`` ends in ``.gz``.

    A net with an ownership head is refused unless ``drop_ownership`` (the format cannot hold it).
    """

    data = lz_text(net, drop_ownership).encode("ascii")
    if str(path).endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)  # mtime 0: same net, same bytes
    atomic_write_bytes(path, data)


def lz_text(net: ZeroNet, drop_ownership: bool = False) -> str:
    """The LZ v1 text of ``net`` (see the module docstring for the layout)."""
    if net.size_independent:  # the format's policy and value heads are fully connected over N*N points
        raise ValueError("this net has size-independent (pooled) heads, which Leela Zero weights cannot "
                         "hold (the format's heads are fully connected layers for one board size); "
                         "keep it as a zero9 .pt checkpoint")
    if net.config["ownership"] and not drop_ownership:
        raise ValueError("this net has an ownership head, which Leela Zero weights cannot hold; "
                         "pass drop_ownership=True to write the rest")
    sd = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in net.state_dict().items()}
    out = [FORMAT_VERSION]
    for prefix in _conv_block_prefixes(net.config["blocks"]):
        out.extend(_conv_block_lines(sd, prefix))
        if prefix == "policy_conv":
            out += [_floats(sd["policy_fc.weight"]), _floats(sd["policy_fc.bias"])]
    for key in ("value_fc1.weight", "value_fc1.bias", "value_fc2.weight", "value_fc2.bias"):
        out.append(_floats(sd[key]))
    return "\n".join(out) + "\n"


# --- reading -------------------------------------------------------------------------


def _read_tensors(lines: Iterable[str], name: str) -> list[np.ndarray]:
    """The values of every line after the version line, each checked as it is read.

    A line that may be a channel-bias line (no more values than filters) stays float64, for the
    exact bias -> beta conversion; longer lines become float32 at once (they are stored so anyway).
    """
    tensors: list[np.ndarray] = []
    blank_at = None
    total = 0
    seen = False
    for lineno, line in enumerate(lines, 1):
        if lineno > MAX_LINES:
            raise ValueError(f"weights file {name}: more than {MAX_LINES:,} lines, more than a net of "
                             f"zero9's limit of {MAX_BLOCKS} blocks holds")
        if not line.strip():
            blank_at = blank_at or lineno
            continue
        if blank_at is not None:
            raise ValueError(f"weights file {name}, line {blank_at}: empty line")
        seen = True
        if lineno == 1:
            if line.strip() != FORMAT_VERSION:
                raise ValueError(f"weights file {name}, line 1: format version {line.strip()[:20]!r}; "
                                 "only Leela Zero v1 ('1') is supported")
            continue
        values = _parse_line(line, name, lineno)
        total += values.size
        if total > MAX_PARAMETERS:
            raise ValueError(f"weights file {name}, line {lineno}: more than {MAX_PARAMETERS:,} values, "
                             f"zero9's limit for a net")
        if lineno == 3 and values.size > MAX_FILTERS:
            raise ValueError(f"weights file {name}, line 3: {values.size:,} filters, over zero9's limit "
                             f"of {MAX_FILTERS}")
        tensors.append(values if values.size <= MAX_FILTERS else values.astype(np.float32))
    if not seen:
        raise ValueError(f"weights file {name} is empty")
    return tensors


def _count_blocks(body_lines: int, name: str) -> int:
    extra = body_lines - INPUT_LINES - HEAD_LINES
    if extra < 0 or extra % BLOCK_LINES:
        raise ValueError(
            f"weights file {name}: {body_lines} weight lines after line 1 is not 18 + 8 per block; "
            f"the file is truncated or garbled after line {body_lines + 1}"
        )
    return extra // BLOCK_LINES


def _parse_line(line: str, name: str, lineno: int) -> np.ndarray:
    """A line's values (float64), a piece of :data:`PARSE_PIECE` characters at a time."""
    pieces = []
    start = 0
    while start < len(line):
        end = line.find(" ", start + PARSE_PIECE)
        end = len(line) if end < 0 else end
        tokens = line[start:end].split()
        try:
            pieces.append(np.array(tokens, dtype=np.float64))
        except ValueError as e:
            bad = next((t for t in tokens if not _is_float(t)), "?")
            raise ValueError(f"weights file {name}, line {lineno}: {bad[:30]!r} is not a number") from e
        start = end
    values = np.concatenate(pieces) if len(pieces) != 1 else pieces[0]
    if not values.size:
        raise ValueError(f"weights file {name}, line {lineno}: empty line")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"weights file {name}, line {lineno}: holds a NaN or infinity")
    return values


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _detect_shape(tensors: list[np.ndarray], blocks: int, filters: int, name: str) -> LZShape:
    in_values = tensors[0].size
    if in_values % (9 * filters):
        raise ValueError(
            f"weights file {name}, line 2: {in_values} input conv weights "
            f"is not a multiple of 9 x {filters} filters"
        )
    head = INPUT_LINES + BLOCK_LINES * blocks
    actions = tensors[head + 5].size  # policy FC biases
    size = math.isqrt(actions - 1)
    if size * size + 1 != actions:
        size = math.isqrt(actions)
        if size * size != actions:
            raise ValueError(
                f"weights file {name}, line {head + 5 + 2}: "
                f"{actions} policy outputs is neither N*N+1 (Go) nor N*N"
            )
    return LZShape(blocks, filters, in_values // (9 * filters), size, actions)


def _expected_counts(shape: LZShape) -> list[int]:
    f, n2 = shape.filters, shape.size * shape.size
    counts = [f * shape.in_planes * 9, f, f, f]
    counts += [f * f * 9, f, f, f] * (2 * shape.blocks)
    p, v = POLICY_FILTERS, VALUE_FILTERS
    counts += [p * f, p, p, p, shape.num_actions * p * n2, shape.num_actions]
    counts += [v * f, v, v, v, VALUE_HIDDEN * v * n2, VALUE_HIDDEN, VALUE_HIDDEN, 1]
    return counts


def _check_counts(tensors: list[np.ndarray], shape: LZShape, name: str) -> None:
    variance_lines = _variance_lines(shape.blocks)
    for i, (tensor, want) in enumerate(zip(tensors, _expected_counts(shape), strict=True)):
        if tensor.size != want:
            raise ValueError(
                f"weights file {name}, line {i + 2}: {tensor.size} values, expected {want} for a "
                f"{shape.blocks}x{shape.filters} {shape.size}x{shape.size} net"
            )
        if i in variance_lines and np.any(tensor < 0):
            raise ValueError(f"weights file {name}, line {i + 2}: negative batch-norm variance")


def _variance_lines(blocks: int) -> set[int]:
    """Indices (after line 1) of every conv block's BN variance line."""
    head = INPUT_LINES + BLOCK_LINES * blocks
    return {i for i in range(head) if i % 4 == 3} | {head + 3, head + 6 + 3}


def _conv_block_prefixes(blocks: int) -> list[str]:
    names = ["input_block"]
    for b in range(blocks):
        names += [f"tower.{b}.conv1", f"tower.{b}.conv2"]
    return names + ["policy_conv", "value_conv"]


def _state_dict(tensors: list[np.ndarray], net: ZeroNet) -> dict[str, torch.Tensor]:
    """Map the file's lines onto ``net``'s state-dict keys, converting bias -> beta."""
    template = net.state_dict()
    sd: dict[str, torch.Tensor] = {}
    it = iter(tensors)
    for prefix in _conv_block_prefixes(net.config["blocks"]):
        weight, bias, mean, var = next(it), next(it), next(it), next(it)
        sd[f"{prefix}.conv.weight"] = _as(weight, template[f"{prefix}.conv.weight"])
        sd[f"{prefix}.beta"] = _as(bias / np.sqrt(var.astype(np.float32).astype(np.float64) + BN_EPSILON),
                                   template[f"{prefix}.beta"])
        sd[f"{prefix}.bn.running_mean"] = _as(mean, template[f"{prefix}.bn.running_mean"])
        sd[f"{prefix}.bn.running_var"] = _as(var, template[f"{prefix}.bn.running_var"])
        sd[f"{prefix}.bn.num_batches_tracked"] = template[f"{prefix}.bn.num_batches_tracked"]
        if prefix == "policy_conv":
            sd["policy_fc.weight"] = _as(next(it), template["policy_fc.weight"])
            sd["policy_fc.bias"] = _as(next(it), template["policy_fc.bias"])
    for key in ("value_fc1.weight", "value_fc1.bias", "value_fc2.weight", "value_fc2.bias"):
        sd[key] = _as(next(it), template[key])
    return sd


def _as(values: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(values.astype(np.float32).reshape(tuple(like.shape)))


# --- writing -------------------------------------------------------------------------


def _conv_block_lines(sd: dict[str, torch.Tensor], prefix: str) -> list[str]:
    var = sd[f"{prefix}.bn.running_var"]
    beta = sd[f"{prefix}.beta"].double().numpy()
    bias = beta * np.sqrt(var.numpy().astype(np.float64) + BN_EPSILON)
    return [
        _floats(sd[f"{prefix}.conv.weight"]),
        " ".join(repr(float(b)) for b in bias),  # float64 repr: beta comes back exactly
        _floats(sd[f"{prefix}.bn.running_mean"]),
        _floats(var),
    ]


def _floats(t: torch.Tensor) -> str:
    """float32 values, 9 significant digits: enough to read every float32 back exactly."""
    return " ".join(map("{:.9g}".format, t.reshape(-1).tolist()))
