"""Checkpoints: exact resume, atomic writes, content hashes, load_net, shipped nets, zero9 convert."""

from __future__ import annotations

import gzip
import os
import random

import numpy as np
import pytest
import torch

import zero9.nn.checkpoint as ckpt_mod
from zero9.cli import main as cli_main
from zero9.nn.checkpoint import (
    default_net_path,
    load_checkpoint,
    load_net,
    net_hash,
    save_checkpoint,
)
from zero9.nn.net import ZeroNet
from zero9.nn.weights import save_lz_weights

GO9 = {"game": "go", "size": 9, "komi": 7.5}


def small_net(seed: int = 0, **kw) -> ZeroNet:
    torch.manual_seed(seed)
    return ZeroNet(18, 9, 82, blocks=kw.pop("blocks", 1), filters=kw.pop("filters", 8), **kw)


def train_steps(net: ZeroNet, opt, sched, steps: int) -> None:
    """Steps whose data comes from the global RNGs, so a resume must restore them too."""
    net.train()
    for _ in range(steps):
        x = (torch.rand(16, 18, 9, 9) < 0.3).float()
        target = torch.from_numpy(np.random.random((16, 82)).astype(np.float32)).softmax(1)
        z = torch.tensor([random.choice([-1.0, 1.0]) for _ in range(16)])
        policy, value = net(x)
        loss = -(target * policy.log_softmax(1)).sum(1).mean() + (value - z).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def make_opt(net):
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def test_resume_is_exact(tmp_path):
    net = small_net()
    opt, sched = make_opt(net)
    train_steps(net, opt, sched, 3)
    save_checkpoint(tmp_path / "run.pt", net, {"game": GO9, "step": 3}, opt, sched, extra={"cursor": 7})
    train_steps(net, opt, sched, 3)  # the run without interruption
    straight = {k: v.clone() for k, v in net.state_dict().items()}

    random.seed(123)  # scramble everything the resume must put back
    np.random.seed(123)
    torch.manual_seed(123)
    ck = load_checkpoint(tmp_path / "run.pt")
    resumed = ck.net
    opt2, sched2 = make_opt(resumed)
    ck.restore(opt2, sched2)
    assert ck.meta["step"] == 3 and ck.extra == {"cursor": 7}
    assert opt2.state_dict()["state"][0]["momentum_buffer"].abs().sum() > 0
    assert sched2.last_epoch == 3
    train_steps(resumed, opt2, sched2, 3)
    for key, value in resumed.state_dict().items():
        assert torch.equal(value, straight[key]), key


def test_meta_and_hash(tmp_path):
    net = small_net(ownership=True)
    meta = save_checkpoint(tmp_path / "n.pt", net, {"game": GO9, "generation": 2})
    assert meta["hash"] == net_hash(net) and len(meta["hash"]) == 12
    assert meta["blocks"] == 1 and meta["filters"] == 8 and meta["ownership"] is True
    assert meta["input_encoding"] == "lz18" and meta["generation"] == 2 and meta["game"] == GO9
    ck = load_checkpoint(tmp_path / "n.pt")
    assert ck.meta["hash"] == net_hash(ck.net) == meta["hash"]
    assert net_hash(small_net(seed=1, ownership=True)) != meta["hash"]


def test_lz_conversion_keeps_the_hash(tmp_path):
    net = small_net()
    with torch.no_grad():
        net.input_block.beta.normal_()
        net.input_block.bn.running_var.uniform_(0.5, 2.0)
    save_lz_weights(net, tmp_path / "n.txt.gz")
    _, meta = load_net(tmp_path / "n.txt.gz", device="cpu")
    assert meta["hash"] == net_hash(net)
    assert meta["game"] == GO9 and meta["input_encoding"] == "lz18"


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "best.pt"
    first = save_checkpoint(path, small_net(seed=1), {"game": GO9})

    def crash_half_way(obj, f, *args, **kwargs):
        f.write(b"PK\x03\x04 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash_half_way)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, small_net(seed=2), {"game": GO9})
    monkeypatch.undo()
    assert load_checkpoint(path).meta["hash"] == first["hash"]  # the old file, whole
    assert os.listdir(tmp_path) == ["best.pt"]  # and no temporary file left


def test_corrupt_checkpoints_are_named(tmp_path):
    path = tmp_path / "broken.pt"
    save_checkpoint(path, small_net(), {"game": GO9})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="broken.pt"):
        load_checkpoint(path)
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(ValueError, match="not a zero9 checkpoint"):
        load_net(other)
    tampered = tmp_path / "tampered.pt"
    save_checkpoint(tampered, small_net(), {"game": GO9})
    payload = torch.load(tampered, weights_only=True)
    payload["state_dict"]["value_fc2.bias"] += 1
    torch.save(payload, tampered)
    with pytest.raises(ValueError, match="tampered.pt: content hash"):
        load_checkpoint(tampered)
    with pytest.raises(ValueError, match="needs 'game'"):
        save_checkpoint(tmp_path / "x.pt", small_net(), {})


def test_load_net_reads_both_kinds_and_checks_size(tmp_path):
    net = small_net().eval().set_channels_last(True)  # load_net tunes; same layout, same arithmetic
    save_checkpoint(tmp_path / "n.pt", net, {"game": GO9})
    save_lz_weights(net, tmp_path / "n.txt")
    x = np.random.default_rng(0).integers(0, 2, (2, 18, 9, 9)).astype(np.float32)
    for name in ("n.pt", "n.txt"):
        loaded, meta = load_net(tmp_path / name, device="cpu")
        assert not loaded.training and meta["size"] == 9 and loaded.channels_last
        assert np.array_equal(loaded.predict(x)[0], net.predict(x)[0])
        with pytest.raises(ValueError, match="9x9.*13x13"):
            load_net(tmp_path / name, expected_size=13)
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        load_net(tmp_path / "missing.pt")


def test_default_net_path(tmp_path, monkeypatch):
    shipped = default_net_path("go", 9)
    assert shipped is not None and shipped.name.startswith("go_9x9_best")  # the trained net beats initial_
    net, meta = load_net(shipped, device="cpu")
    assert (meta["blocks"], meta["filters"], meta["size"]) == (10, 64, 9)
    for size in (9, 15):  # every shipped Gomoku net names the board it was trained on
        net, meta = load_net(default_net_path("gomoku", size), device="cpu")
        assert meta["game"] == {"game": "gomoku", "size": size, "connect": 5, "variant": "freestyle"}
        assert meta["hash"] == net_hash(net)

    monkeypatch.setattr(ckpt_mod, "EXAMPLE_DATA", tmp_path)
    assert default_net_path("go", 9) is None
    (tmp_path / "initial_9x9.txt.gz").write_bytes(b"")
    assert default_net_path("go", 9).name == "initial_9x9.txt.gz"  # Go 9x9 falls back to the random net
    assert default_net_path("gomoku", 15) is None
    for name in ("gomoku_15x15_gen3.pt", "gomoku_15x15_gen9.pt", "gomoku_15x15_best.pt", "go_9x9_x.pt"):
        (tmp_path / name).write_bytes(b"")
    assert default_net_path("gomoku", 15).name == "gomoku_15x15_best.pt"
    (tmp_path / "gomoku_15x15_best.pt").unlink()
    assert default_net_path("gomoku", 15).name == "gomoku_15x15_gen9.pt"
    assert default_net_path("go", 9).name == "go_9x9_x.pt"
    for name in ("go_9x9_best.txt.gz", "go_9x9_best.pt", "go_9x9_best.txt"):  # .pt: keeps the ownership head
        (tmp_path / name).write_bytes(b"")
    assert default_net_path("go", 9).name == "go_9x9_best.pt"


def test_convert_command_round_trips_bit_identically(tmp_path, capsys):
    net = small_net(blocks=2)
    save_lz_weights(net, tmp_path / "a.txt")
    assert cli_main(["convert", str(tmp_path / "a.txt"), str(tmp_path / "a.pt"), "--komi", "6.5"]) == 0
    assert load_checkpoint(tmp_path / "a.pt").meta["game"]["komi"] == 6.5
    assert cli_main(["convert", str(tmp_path / "a.pt"), str(tmp_path / "b.txt.gz")]) == 0
    assert gzip.decompress((tmp_path / "b.txt.gz").read_bytes()) == (tmp_path / "a.txt").read_bytes()
    out = capsys.readouterr().out
    assert net_hash(net) in out
    assert cli_main(["convert", str(tmp_path / "a.pt"), str(tmp_path / "c.txt"), "--size", "19"]) == 1
    assert "9x9" in capsys.readouterr().out and not (tmp_path / "c.txt").exists()
    assert cli_main(["convert", str(tmp_path / "a.pt"), str(tmp_path / "c.bin")]) == 1
