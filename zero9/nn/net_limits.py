"""The largest net zero9 reads from a file, checked before anything is allocated.

Vocabulary:

- **net shape**: ``in_planes``, ``size``, ``num_actions``, ``blocks``, ``filters`` (a
  checkpoint's ``config``, or what a Leela Zero text file's line lengths say).
- **limits**: a file's shape is its own claim; a damaged or hostile file can claim a
  tower that needs terabytes (``filters=200000`` is 1.44 TB for one 3x3 conv). Every
  loader checks the claim against these limits first and refuses with a ValueError
  naming the file, the value and the limit. They are several times what any net in
  Go programs needs: Leela Zero's largest net is 40 blocks x 256 filters (47 million
  parameters) for 19x19 with 18 input planes.
"""

from __future__ import annotations

from typing import Any

from zero9.nn.heads import HEAD_KINDS, MAX_BOARD, MIN_BOARD, POOL_FEATURES, POOLED_HEADS
from zero9.nn.net import VALUE_HIDDEN

MAX_BLOCKS = 80
MAX_FILTERS = 512
MAX_IN_PLANES = 64
MIN_SIZE = MIN_BOARD
MAX_SIZE = MAX_BOARD  # the board's side; a net with pooled heads plays every size from MIN_SIZE to this
MAX_PARAMETERS = 200_000_000  # 800 MB of float32; a 40x256 19x19 net holds 47 million
INT_KEYS = ("in_planes", "size", "num_actions", "blocks", "filters")


def parameter_count(config: dict[str, Any]) -> int:
    """About how many numbers (weights, biases, batch-norm statistics) a net of ``config`` holds."""
    f, c, n2 = config["filters"], config["in_planes"], config["size"] ** 2
    actions, blocks = config["num_actions"], config["blocks"]
    convs = 9 * f * c + blocks * 2 * 9 * f * f + 3 * f * (1 + 2 * blocks)
    if config.get("heads") == POOLED_HEADS:  # three 1x1 conv blocks of h, the FCs from the pool
        h = config["head_channels"]
        pooled = POOL_FEATURES * h
        heads = 3 * (f * h + 3 * h) + pooled * h + h + h + 1 + pooled + 1 + pooled * VALUE_HIDDEN
        return convs + heads + 2 * VALUE_HIDDEN + 1 + 2 * f
    heads = 2 * f + actions * 2 * n2 + actions + f + VALUE_HIDDEN * n2 + 2 * VALUE_HIDDEN + 1 + 2 * f
    return convs + heads


def shape_problem(config: Any) -> str | None:
    """Why ``config`` is no net shape zero9 reads (names the value and the limit), or None when it is."""
    if not isinstance(config, dict):
        return f"its config is a {type(config).__name__}, not a dict"
    for key in INT_KEYS:
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"its config's {key} is {value!r}, not a whole number"
    if config.get("heads", HEAD_KINDS[0]) not in HEAD_KINDS:
        return f"its config's heads is {config['heads']!r}, not one of {', '.join(HEAD_KINDS)}"
    if config.get("heads") == POOLED_HEADS:
        value = config.get("head_channels")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_FILTERS:
            return f"its config's head_channels is {value!r}, not a whole number from 1 to {MAX_FILTERS}"
    if "score_komi" in config:
        value = config["score_komi"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= 1000:
            return f"its config's score_komi is {value!r}, not a komi (a number from -1000 to 1000)"
    bounds = {"in_planes": (1, MAX_IN_PLANES), "size": (MIN_SIZE, MAX_SIZE), "blocks": (0, MAX_BLOCKS),
              "filters": (1, MAX_FILTERS)}
    for key, (low, high) in bounds.items():
        if not low <= config[key] <= high:
            return f"{key}={config[key]} is outside zero9's limits ({low} to {high})"
    n2 = config["size"] ** 2
    if config["num_actions"] not in (n2, n2 + 1):
        n = config["size"]
        return f"num_actions={config['num_actions']} fits neither {n}x{n} Go ({n2 + 1}) nor Gomoku ({n2})"
    count = parameter_count(config)
    if count > MAX_PARAMETERS:
        return f"{config['blocks']} blocks x {config['filters']} filters is {count:,} parameters, " \
               f"over zero9's limit of {MAX_PARAMETERS:,}"
    return None
