"""Small helpers shared by test files: ``from helpers import ...`` (pytest puts tests/ on the path).

- **random planes**: a reproducible batch of 0/1 network inputs ``[B, C, N, N]``.
- **randomised batch norm**: non-trivial running statistics and betas, so a test
  sees what batch norm does (a fresh net's BN is the identity and hides mistakes).
- **corruption**: a file's text with a few random edits (a character deleted, inserted or
  replaced), for comparing two readers on damaged input.
"""

from __future__ import annotations

import random
import signal
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn


def random_planes(batch: int, planes: int, size: int, seed: int = 0) -> np.ndarray:
    """``batch`` random 0/1 input stacks of shape ``[planes, size, size]``, float32."""
    return np.random.default_rng(seed).integers(0, 2, (batch, planes, size, size)).astype(np.float32)


def randomise_bn(net: nn.Module, seed: int = 0) -> None:
    """Give every BatchNorm2d random running stats and every ``*beta`` parameter random values, in place."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
        for name, p in net.named_parameters():
            if name.endswith("beta"):
                p.copy_(torch.randn(p.shape, generator=g))


def corrupted(text: Sequence, rng: random.Random, alphabet: Sequence, edits: int) -> list:
    """``text`` (a str or bytes) as a list with ``edits`` random edits from ``alphabet``: each deletes,
    inserts or replaces one character."""
    out = list(text)
    for _ in range(edits):
        i = rng.randrange(len(out))
        kind = rng.randrange(3)
        if kind == 0:
            del out[i]
        elif kind == 1:
            out.insert(i, rng.choice(alphabet))
        else:
            out[i] = rng.choice(alphabet)
    return out


def default_ctrl_c() -> None:
    """In the child before exec: Ctrl-C as a terminal gives it. A child inherits an ignored SIGINT, and
    Python then leaves it ignored: in two full runs a client spawned here played on for two minutes
    after its SIGINT (its stacks, by faulthandler: still uploading games), though never alone."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def random_win(winner: int, rng: random.Random, random_moves: int = 100) -> tuple[bytes, int]:
    """A legal random 9x9 Go game (komi 7.5) that ``winner`` wins, as a forger would send it: random moves
    (never a pass while another move is legal) for ``random_moves`` moves, then passes. (SGF, moves)."""
    from zero9.games import make_game
    from zero9.games.sgf import write_sgf

    game = make_game("go", 9, komi=7.5)
    while True:
        position, moves = game.new_position(), []
        while not position.is_terminal() and len(moves) < 160:
            legal = [a for a in position.legal_moves() if a != game.pass_action] or [game.pass_action]
            action = rng.choice(legal) if len(moves) < random_moves else game.pass_action
            moves.append((position.to_play, action))
            position = position.play(action)
        if position.is_terminal() and position.winner() == winner:
            return write_sgf(game, moves, position.result_string()).encode(), len(moves)
