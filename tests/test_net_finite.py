"""Nets with a NaN or an infinity in a weight or statistic are refused by every loader (issue 42, item 6).

A training run that diverges writes such a net, and its hash is its own (the hash is taken over the
very values), so it passed every other check: loaded, it played A1, B1, C1. Each case is a real file,
written by zero9's own writers from a real tiny net: ``.pt`` checkpoints and Leela Zero text, plain
and gzip'd, read by each loader and by the commands that play a net.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from zero9.games import make_game
from zero9.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from zero9.nn.net import ZeroNet
from zero9.nn.weights import load_lz_weights, lz_text, parse_lz_weights, save_lz_weights

ROOT = Path(__file__).resolve().parents[1]
GAME = make_game("go", 5)
pytestmark = pytest.mark.timeout(120)
# (tensor, index, value): a weight of the first conv, a batch-norm variance, the value head's last bias
SPOILS = [("input_block.conv.weight", (0, 0, 1, 1), float("nan")),
          ("tower.0.conv2.bn.running_var", (3,), float("inf")),
          ("value_fc2.bias", (0,), float("-inf"))]


def spoiled_net(tensor: str, index: tuple, value: float) -> ZeroNet:
    torch.manual_seed(5)
    net = ZeroNet(18, GAME.size, GAME.num_actions, blocks=1, filters=8)
    with torch.no_grad():
        net.state_dict()[tensor][index] = value  # the state dict's tensors are the net's own
    assert not torch.isfinite(net.state_dict()[tensor]).all()
    return net


@pytest.mark.parametrize("tensor, index, value", SPOILS)
def test_a_checkpoint_with_nan_or_inf_is_refused_naming_the_tensor(tmp_path, tensor, index, value):
    path = tmp_path / "diverged.pt"
    save_checkpoint(path, spoiled_net(tensor, index, value), {"game": GAME.to_dict()})
    for loader in (load_checkpoint, load_net):
        with pytest.raises(ValueError) as refused:
            loader(path)
        text = str(refused.value)
        assert text.startswith(f"checkpoint {path}: {tensor} holds a NaN or infinity"), text
        assert "\n" not in text


@pytest.mark.parametrize("tensor, index, value", SPOILS)
def test_leela_zero_text_with_nan_or_inf_is_refused_naming_the_line(tmp_path, tensor, index, value):
    net = spoiled_net(tensor, index, value)
    for name in ("diverged.txt", "diverged.txt.gz"):
        path = tmp_path / name
        with np.errstate(invalid="ignore"):  # the writer's bias of an infinite variance is NaN too
            save_lz_weights(net, path)
        for loader in (load_lz_weights, load_net):
            with pytest.raises(ValueError, match=r"line \d+: holds a NaN or infinity") as refused:
                loader(path)
            assert str(path) in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="holds a NaN or infinity"), np.errstate(invalid="ignore"):
        parse_lz_weights(lz_text(net), "uploaded")  # the server's reader of an uploaded net


def test_finite_nets_still_load(tmp_path):
    torch.manual_seed(5)
    net = ZeroNet(18, GAME.size, GAME.num_actions, blocks=1, filters=8)
    with torch.no_grad():  # finite, but their sum overflows to infinity: the quick test alone would refuse
        net.value_fc1.weight[0, :2] = 3e38
    save_checkpoint(tmp_path / "fine.pt", net, {"game": GAME.to_dict()})
    save_lz_weights(net, tmp_path / "fine.txt.gz")
    for path in (tmp_path / "fine.pt", tmp_path / "fine.txt.gz"):
        loaded, _ = load_net(path, device="cpu")
        assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(),
                                                     net.state_dict().values(), strict=True))


# (command, its exit status and stream for a bad net file: convert's own convention is 1 on stdout)
COMMANDS = [(["gtp", "--size", "5", "-w", "{net}"], 2, "stderr"),
            (["convert", "{net}", "{out}"], 1, "stdout")]


@pytest.mark.parametrize("command, status, stream", COMMANDS)
def test_commands_refuse_a_diverged_net_in_one_line(tmp_path, command, status, stream):
    path = tmp_path / "diverged.pt"
    save_checkpoint(path, spoiled_net(*SPOILS[0]), {"game": GAME.to_dict()})
    args = [a.format(net=path, out=tmp_path / "out.txt") for a in command]
    done = subprocess.run([sys.executable, "-m", "zero9", *args], capture_output=True, text=True, timeout=100,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == status, done.stdout + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = getattr(done, stream).strip().splitlines()[-1]
    assert "input_block.conv.weight holds a NaN or infinity" in last and str(path) in last, last
    assert not (tmp_path / "out.txt").exists()
