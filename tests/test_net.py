"""The residual tower: shapes, heads, batch-norm semantics, devices, FLOP count; the score head's and the
shipped nets' layout (zero9.nn.heads on zero9.nn.net)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn
from torch import nn

from zero9.games import make_game
from zero9.nn import heads
from zero9.nn.net import BN_EPSILON, ZeroNet, flops_per_position, make_net, resolve_device

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("size,actions,planes", [(9, 82, 18), (7, 49, 5), (13, 170, 18)])
def test_forward_shapes_for_any_board(size, actions, planes):
    net = ZeroNet(planes, size, actions, blocks=2, filters=8).eval()
    policy, value = net(torch.from_numpy(random_planes(3, planes, size)))
    assert policy.shape == (3, actions)
    assert value.shape == (3,)
    assert torch.all(value.abs() <= 1)


def test_ownership_head_gives_a_third_output():
    net = ZeroNet(18, 9, 82, blocks=1, filters=8, ownership=True).eval()
    out = net(torch.from_numpy(random_planes(2, 18, 9)))
    assert len(out) == 3
    assert out[2].shape == (2, 81)
    assert torch.all(out[2].abs() <= 1)


def test_predict_returns_float32_probabilities():
    net = ZeroNet(18, 9, 82, blocks=1, filters=8)
    net.train()  # predict must switch to eval mode itself
    probs, value = net.predict(random_planes(4, 18, 9))
    assert probs.dtype == np.float32 and value.dtype == np.float32
    assert probs.shape == (4, 82) and value.shape == (4,)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert not net.training


def test_predict_rejects_wrong_planes():
    net = ZeroNet(18, 9, 82, blocks=1, filters=8)
    with pytest.raises(ValueError, match="planes"):
        net.predict(random_planes(2, 17, 9))
    with pytest.raises(ValueError, match="planes"):
        net.predict(random_planes(2, 18, 7))


def test_conv_block_is_leela_zero_batch_norm():
    """Eval-mode conv block = (conv - mean) / sqrt(var + 1e-5) + beta, then ReLU."""
    net = ZeroNet(18, 9, 82, blocks=0, filters=4).eval()
    randomise_bn(net)
    block = net.input_block
    x = torch.from_numpy(random_planes(2, 18, 9))
    conv = torch.nn.functional.conv2d(x, block.conv.weight, padding=1)
    mean = block.bn.running_mean.view(1, -1, 1, 1)
    var = block.bn.running_var.view(1, -1, 1, 1)
    want = torch.relu((conv - mean) / torch.sqrt(var + BN_EPSILON) + block.beta.view(1, -1, 1, 1))
    with torch.no_grad():
        torch.testing.assert_close(block(x), want)
    assert block.conv.bias is None and block.bn.weight is None  # no conv bias, no gamma


def test_policy_flatten_is_channel_major_point_order():
    """The policy FC sees feature c*N*N + (y*N + x), the order of Leela Zero's weights."""
    net = ZeroNet(18, 5, 26, blocks=0, filters=4).eval()
    seen = {}
    net.policy_fc.register_forward_hook(lambda m, inp, out: seen.setdefault("x", inp[0]))
    x = torch.from_numpy(random_planes(1, 18, 5))
    with torch.no_grad():
        net(x)
        head = net.policy_conv(net.input_block(x))  # [1, 2, N, N], row = y
    assert torch.equal(seen["x"][0, 25 + 2 * 5 + 3], head[0, 1, 2, 3])


def test_training_step_updates_beta():
    net = ZeroNet(18, 9, 82, blocks=1, filters=8).train()
    policy, value = net(torch.from_numpy(random_planes(8, 18, 9)))
    (policy.logsumexp(1).mean() + value.pow(2).mean()).backward()
    assert net.input_block.beta.grad is not None
    assert net.input_block.beta.grad.abs().sum() > 0


def test_from_config_rebuilds_the_shape():
    net = ZeroNet(5, 15, 225, blocks=3, filters=16)
    again = heads.net_from_config(net.config)
    assert again.config == net.config and type(again) is ZeroNet
    shapes = {k: v.shape for k, v in net.state_dict().items()}
    assert {k: v.shape for k, v in again.state_dict().items()} == shapes
    with pytest.raises(ValueError, match="filters"):
        heads.net_from_config({"in_planes": 5, "size": 15, "num_actions": 225, "blocks": 3})


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="num_actions"):
        ZeroNet(18, 9, 80)
    with pytest.raises(ValueError, match="board size"):
        ZeroNet(18, 1, 2)


def test_make_net_follows_the_game():
    net = make_net(make_game("go", 9), blocks=1, filters=8, in_planes=18)
    assert net.config["num_actions"] == 82 and net.size == 9
    with pytest.raises(ValueError, match="Go only"):
        make_net(make_game("gomoku", 9), blocks=1, filters=8, in_planes=5, ownership=True)


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="unknown device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            resolve_device("cuda")


def test_flops_match_a_count_over_the_modules():
    net = ZeroNet(18, 9, 82, blocks=3, filters=16, ownership=True)
    n2 = 81
    count = 0
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            count += 2 * n2 * m.in_channels * m.out_channels * m.kernel_size[0] * m.kernel_size[1]
        elif isinstance(m, nn.Linear):
            count += 2 * m.in_features * m.out_features
    assert flops_per_position(net.config) == count
    scored = heads.make_net(make_game("go", 9), 3, 16, ownership=True, in_planes=18, score=True)
    assert heads.flops_per_position(scored.config) == count + 2 * 256  # the score head's FC


def test_the_score_head_sits_on_the_value_heads_hidden_layer_after_ownership():
    # ExtendedNet makes its layers in ZeroNet's order, the score head last: the state dict (which the
    # net hash reads in order) and a seeded net's weights are those of the nets made before the split
    net = heads.make_net(make_game("go", 9), blocks=1, filters=8, ownership=True, in_planes=18, score=True)
    assert type(net) is heads.ExtendedNet and net.config["score"] and not net.size_independent
    order = [k.split(".")[0] for k in net.state_dict()]
    assert list(dict.fromkeys(order)) == ["input_block", "tower", "policy_conv", "policy_fc", "value_conv",
                                          "value_fc1", "value_fc2", "ownership_conv", "score_fc"]
    policy, value, own, score = net.eval()(torch.from_numpy(random_planes(2, 18, 9)))
    assert score.shape == (2,) and own.shape == (2, 81)
    with pytest.raises(ValueError, match="needs the ownership head"):
        heads.make_net(make_game("go", 9), blocks=1, filters=8, score=True)
    assert type(heads.make_net(make_game("go", 9), blocks=1, filters=8)) is ZeroNet  # AlphaGo Zero's


SHIPPED_NETS = sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("example-data/*.pt"),
                                                           *ROOT.glob("docs/runs/**/*.pt")])


@pytest.mark.parametrize("path", SHIPPED_NETS)
def test_every_shipped_net_loads_with_its_recorded_hash(path):
    from zero9.nn.checkpoint import load_net, net_hash

    net, meta = load_net(ROOT / path)  # load_net refuses a net whose content hash differs from its meta's
    assert net_hash(net) == meta["hash"]
    if path.startswith("docs/runs"):
        assert (ROOT / path).stem == meta["hash"]
    extended = bool(net.config.get("score") or net.config.get("heads"))
    assert isinstance(net, heads.ExtendedNet) == extended


def test_the_shipped_nets_include_a_score_head():
    assert len(SHIPPED_NETS) >= 6
    assert any("d56d79dae4f5" in path for path in SHIPPED_NETS)  # docs/runs/host-go9: ownership and score


def test_channels_last_gives_the_same_answer():
    net = ZeroNet(18, 9, 82, blocks=1, filters=8).eval()
    x = random_planes(2, 18, 9)
    before = net.predict(x)
    net.set_channels_last(True)
    after = net.predict(x)
    np.testing.assert_allclose(before[0], after[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(before[1], after[1], rtol=1e-5, atol=1e-6)
