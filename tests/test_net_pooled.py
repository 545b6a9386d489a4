"""Size-independent (pooled) heads: one net's weights on 9x9, 15x15 and 20x20; saving, loading,
Leela Zero export refused, shipped fixed-head nets unchanged, and the one check that a net serves a size."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn
from torch import nn

from zero9.cli import main as cli_main
from zero9.games import make_game
from zero9.nn.checkpoint import EXAMPLE_DATA, load_checkpoint, load_net, net_hash, read_meta, save_checkpoint
from zero9.nn.heads import (
    POOLED_HEADS,
    ExtendedNet,
    flops_per_position,
    global_pool,
    make_net,
    net_from_config,
)
from zero9.nn.net import ZeroNet
from zero9.nn.net_limits import MAX_SIZE, shape_problem
from zero9.nn.weights import lz_text, save_lz_weights
from zero9.search.player import NetMismatch, NetSource

GOMOKU15 = {"game": "gomoku", "size": 15, "connect": 5, "variant": "freestyle"}

# The shipped nets as they were before pooled heads existed: content hash, and the SHA-256 (first 12
# digits) of their Leela Zero text. Fixed-head nets must load, hash and export exactly as before.
SHIPPED = {
    "go_9x9_best.pt": ("51bcc069b326", "76b62678e888"),
    "go_9x9_best.txt.gz": ("4942b2e0ed38", "76b62678e888"),
    "gomoku_15x15_best.pt": ("10aa01e6e5ff", "086c56d5b6cb"),
    "gomoku_9x9_best.pt": ("9cf99f730c38", "933301465b6c"),
    "initial_9x9.txt.gz": ("032d3f3a1255", "8784bb77c070"),
}


def pooled_gomoku(size: int = 15, seed: int = 0, **kw) -> ZeroNet:
    torch.manual_seed(seed)
    net = make_net(make_game("gomoku", size), kw.pop("blocks", 2), kw.pop("filters", 16), heads=POOLED_HEADS)
    randomise_bn(net, seed)
    return net.eval()


def pooled_go(size: int = 9, seed: int = 0) -> ZeroNet:
    torch.manual_seed(seed)
    net = ExtendedNet(18, size, size * size + 1, blocks=1, filters=8, ownership=True, score=True,
                      heads=POOLED_HEADS)
    randomise_bn(net, seed)
    return net.eval()


@pytest.mark.parametrize("size", [9, 15, 20])
def test_one_gomoku_net_gives_one_logit_per_point_on_every_size(size):
    net = pooled_gomoku(15)
    probs, value = net.predict(random_planes(3, 5, size))
    assert probs.shape == (3, size * size) and value.shape == (3,)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert np.all(np.abs(value) <= 1)
    assert net.serves_size(size) and net.actions_for(size) == size * size


@pytest.mark.parametrize("size", [9, 15, 20])
def test_go_net_has_pass_ownership_and_score_on_every_size(size):
    policy, value, own, score = pooled_go(9)(torch.from_numpy(random_planes(2, 18, size)))
    assert policy.shape == (2, size * size + 1) and value.shape == (2,)
    assert own.shape == (2, size * size) and score.shape == (2,)
    assert pooled_go(9).actions_for(size) == size * size + 1


def test_the_same_weights_serve_each_size_whatever_size_the_net_was_made_for():
    made_for_15 = pooled_gomoku(15, seed=3)
    made_for_20 = net_from_config({**made_for_15.config, "size": 20, "num_actions": 400}).eval()
    made_for_20.load_state_dict(made_for_15.state_dict())  # every tensor has the same shape
    for size in (9, 15, 20):
        x = random_planes(4, 5, size, seed=size)
        a, b = made_for_15.predict(x), made_for_20.predict(x)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_global_pool_is_mean_scaled_mean_and_max():
    x = torch.arange(2 * 3 * 20 * 20, dtype=torch.float32).reshape(2, 3, 20, 20)
    pooled = global_pool(x)
    mean = x.mean(dim=(2, 3))
    assert pooled.shape == (2, 9)
    torch.testing.assert_close(pooled[:, :3], mean)
    torch.testing.assert_close(pooled[:, 3:6], mean * (20 - 14) / 10)
    torch.testing.assert_close(pooled[:, 6:], x.amax(dim=(2, 3)))


def test_config_names_the_heads_and_fixed_configs_do_not():
    pooled, fixed = pooled_gomoku(15), make_net(make_game("gomoku", 15), 1, 8)
    assert pooled.config["heads"] == "pooled" and pooled.config["head_channels"] == 32
    assert "heads" not in fixed.config and "head_channels" not in fixed.config
    assert pooled.size_independent and not fixed.size_independent
    assert {k.split(".")[0] for k in pooled.state_dict()} >= {"policy_head", "value_conv", "value_fc1"}
    assert not any(k.startswith(("policy_conv", "policy_fc")) for k in pooled.state_dict())
    with pytest.raises(ValueError, match="unknown heads"):
        ExtendedNet(5, 15, 225, 1, 8, heads="global")


def test_shape_limits_check_the_new_fields():
    good = pooled_gomoku(15).config
    assert shape_problem(good) is None
    assert "heads" in shape_problem({**good, "heads": "global"})
    assert "head_channels" in shape_problem({**good, "head_channels": 100_000})
    assert "head_channels" in shape_problem({**good, "head_channels": True})


@pytest.mark.parametrize("size", [15, 20])
def test_flops_match_a_count_over_the_modules(size):
    net = pooled_go(9)
    count = 0
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            count += 2 * size * size * m.in_channels * m.out_channels * m.kernel_size[0] * m.kernel_size[1]
        elif isinstance(m, nn.Linear):
            count += 2 * m.in_features * m.out_features
    assert flops_per_position(net.config, size) == count


def test_save_load_round_trip_keeps_hash_and_answers(tmp_path):
    net = pooled_gomoku(15, seed=2)
    meta = save_checkpoint(tmp_path / "multi.pt", net, {"game": GOMOKU15})
    assert meta["heads"] == "pooled" and read_meta(tmp_path / "multi.pt")["hash"] == net_hash(net)
    loaded = load_checkpoint(tmp_path / "multi.pt").net
    assert loaded.config == net.config and net_hash(loaded) == meta["hash"]
    served, _ = load_net(tmp_path / "multi.pt", device="cpu", expected_size=20)  # any size it serves
    for size in (15, 20):
        x = random_planes(2, 5, size, seed=size)
        np.testing.assert_array_equal(loaded.predict(x)[0], net.predict(x)[0])
        # load_net stores it channels-last for speed: the same sums in another order
        np.testing.assert_allclose(served.predict(x)[0], net.predict(x)[0], rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError, match="26x26"):
        load_net(tmp_path / "multi.pt", expected_size=26)


def test_predict_refuses_sizes_outside_the_limits_and_wrong_planes():
    net = pooled_gomoku(15)
    with pytest.raises(ValueError, match="any N it serves"):
        net.predict(random_planes(1, 5, MAX_SIZE + 1))
    with pytest.raises(ValueError, match="planes"):
        net.predict(random_planes(1, 4, 15))


def test_leela_zero_export_is_refused_with_a_reason(tmp_path, capsys):
    net = pooled_gomoku(15)
    with pytest.raises(ValueError, match="size-independent.*Leela Zero"):
        lz_text(net)
    with pytest.raises(ValueError, match="pooled"):
        save_lz_weights(net, tmp_path / "x.txt")
    save_checkpoint(tmp_path / "multi.pt", net, {"game": GOMOKU15})
    assert cli_main(["convert", str(tmp_path / "multi.pt"), str(tmp_path / "x.txt")]) == 1
    assert "size-independent" in capsys.readouterr().out and not (tmp_path / "x.txt").exists()


def test_shipped_nets_load_hash_and_export_as_before():
    for name, (content, lz) in SHIPPED.items():
        net, meta = load_net(EXAMPLE_DATA / name, device="cpu")
        assert not net.size_independent and "heads" not in meta
        assert net_hash(net) == content, name
        text = lz_text(net, drop_ownership=True).encode()
        assert hashlib.sha256(text).hexdigest()[:12] == lz, name


def test_net_source_serves_every_size_with_pooled_heads_and_one_without(tmp_path):
    save_checkpoint(tmp_path / "multi.pt", pooled_gomoku(15), {"game": GOMOKU15})
    source = NetSource(tmp_path / "multi.pt", device="cpu")
    for size in (9, 15, 20, 25):
        source.check(make_game("gomoku", size))
    with pytest.raises(NetMismatch, match="for gomoku"):
        source.check(make_game("go", 15))
    fixed = NetSource(EXAMPLE_DATA / "gomoku_15x15_best.pt", device="cpu")
    with pytest.raises(NetMismatch, match="is for a 15x15 board, not 20x20"):
        fixed.check(make_game("gomoku", 20))
