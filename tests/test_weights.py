"""Leela Zero v1 text weights: exact round trip, LZ semantics, and refusing bad files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn

from zero9.nn.net import ZeroNet
from zero9.nn.weights import load_lz_weights, lz_text, parse_lz_weights, save_lz_weights

# --- an independent Leela Zero writer and forward pass, from the README and Network.cpp ---


def hand_made_lz(rng: np.random.Generator, blocks: int, filters: int, size: int, in_planes: int = 18):
    """LZ v1 text written line by line from random tensors, plus the tensors (biases pre-BN, as LZ)."""

    def conv(out, inp, k):
        return {"w": rng.normal(0, 0.2, (out, inp, k, k)).astype(np.float32),
                "b": rng.normal(0, 0.3, out).astype(np.float32),
                "mean": rng.normal(0, 0.5, out).astype(np.float32),
                "var": rng.uniform(0.3, 2.0, out).astype(np.float32)}

    n2 = size * size
    t = {"input": conv(filters, in_planes, 3),
         "res": [(conv(filters, filters, 3), conv(filters, filters, 3)) for _ in range(blocks)],
         "pol": conv(2, filters, 1), "val": conv(1, filters, 1),
         "pol_fc_w": rng.normal(0, 0.1, (n2 + 1, 2 * n2)).astype(np.float32),
         "pol_fc_b": rng.normal(0, 0.1, n2 + 1).astype(np.float32),
         "fc1_w": rng.normal(0, 0.1, (256, n2)).astype(np.float32),
         "fc1_b": rng.normal(0, 0.1, 256).astype(np.float32),
         "fc2_w": rng.normal(0, 0.1, (1, 256)).astype(np.float32),
         "fc2_b": rng.normal(0, 0.1, 1).astype(np.float32)}

    def line(a):
        return " ".join(map(str, np.ravel(a).tolist()))  # Python's float str, not zero9's writer

    lines = ["1"]
    for c in [t["input"]] + [c for pair in t["res"] for c in pair] + [t["pol"]]:
        lines += [line(c["w"]), line(c["b"]), line(c["mean"]), line(c["var"])]
    lines += [line(t["pol_fc_w"]), line(t["pol_fc_b"])]
    c = t["val"]
    lines += [line(c["w"]), line(c["b"]), line(c["mean"]), line(c["var"])]
    lines += [line(t["fc1_w"]), line(t["fc1_b"]), line(t["fc2_w"]), line(t["fc2_b"])]
    return "\n".join(lines), t


def lz_forward(t: dict, planes: np.ndarray) -> tuple[np.ndarray, float]:
    """Leela Zero's forward pass for one position [C, N, N] in float64: (policy probs, tanh value)."""

    def conv(x, c, relu=True, skip=None):
        w = c["w"].astype(np.float64)
        k = w.shape[-1]
        pad = k // 2
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
        n = x.shape[1]
        y = np.zeros((w.shape[0], n, n))
        for dy in range(k):
            for dx in range(k):
                y += np.einsum("oi,iyx->oyx", w[:, :, dy, dx], xp[:, dy:dy + n, dx:dx + n])
        mean = c["mean"] - c["b"]  # Network.cpp: biases folded into the means
        y = (y - mean[:, None, None]) / np.sqrt(c["var"].astype(np.float64) + 1e-5)[:, None, None]
        if skip is not None:
            y = y + skip
        return np.maximum(y, 0) if relu else y

    x = conv(planes.astype(np.float64), t["input"])
    for c1, c2 in t["res"]:
        x = conv(conv(x, c1), c2, skip=x)
    pol = conv(x, t["pol"]).reshape(-1)
    logits = t["pol_fc_w"] @ pol + t["pol_fc_b"]
    probs = np.exp(logits - logits.max())
    val = conv(x, t["val"]).reshape(-1)
    hidden = np.maximum(t["fc1_w"] @ val + t["fc1_b"], 0)
    return probs / probs.sum(), float(np.tanh(t["fc2_w"] @ hidden + t["fc2_b"])[0])


# --- tests ------------------------------------------------------------------------------


def test_round_trip_is_bit_identical(tmp_path):
    torch.manual_seed(1)
    net = ZeroNet(18, 9, 82, blocks=2, filters=16).eval()
    randomise_bn(net)
    for name in ("w.txt", "w.txt.gz"):
        path = tmp_path / name
        save_lz_weights(net, path)
        back = load_lz_weights(path)
        for key, value in net.state_dict().items():
            assert torch.equal(value, back.state_dict()[key]), key
        x = random_planes(5, 18, 9)
        for a, b in zip(net.predict(x), back.predict(x), strict=True):
            assert np.array_equal(a, b)
        assert lz_text(back) == lz_text(net)  # and it writes the same file again
    assert gzip.decompress((tmp_path / "w.txt.gz").read_bytes()).decode() == (tmp_path / "w.txt").read_text()


def test_layout_line_counts_and_first_lines(tmp_path):
    net = ZeroNet(18, 9, 82, blocks=3, filters=8)
    lines = lz_text(net).splitlines()
    assert lines[0] == "1"
    assert len(lines) == 1 + 4 + 8 * 3 + 14
    assert len(lines[1].split()) == 8 * 18 * 9  # input conv [out, in, 3, 3]
    assert len(lines[2].split()) == 8  # filters = values on the third line
    assert len(lines[-1].split()) == 1 and len(lines[-2].split()) == 256


def test_hand_made_file_computes_what_leela_zero_computes():
    rng = np.random.default_rng(7)
    text, tensors = hand_made_lz(rng, blocks=2, filters=8, size=9)
    net = parse_lz_weights(text, "hand.txt")
    assert net.config == {"in_planes": 18, "size": 9, "num_actions": 82, "blocks": 2, "filters": 8,
                          "ownership": False}
    planes = random_planes(3, 18, 9, seed=3)
    probs, values = net.predict(planes)
    for i in range(3):
        want_p, want_v = lz_forward(tensors, planes[i])
        np.testing.assert_allclose(probs[i], want_p, rtol=2e-4, atol=1e-6)
        assert values[i] == pytest.approx(want_v, abs=2e-5)


def test_leelaz_ninenine_10x128_file_loads_and_plays(tmp_path):
    """A 9x9 10x128 file in leelaz-ninenine's layout (written by the independent writer) plays legal moves."""
    from zero9.games import make_game

    text, _ = hand_made_lz(np.random.default_rng(0), blocks=10, filters=128, size=9)
    path = tmp_path / "leelaz-9x9-10x128.txt.gz"
    path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    net = load_lz_weights(path, expected_size=9)
    assert (net.config["blocks"], net.config["filters"], net.size) == (10, 128, 9)
    game = make_game("go", 9, komi=7.5)
    pos = game.new_position()
    planes = np.zeros((1, 18, 9, 9), dtype=np.float32)
    planes[0, 16] = 1  # empty board, black to move (Leela Zero's planes)
    probs, value = net.predict(planes)
    move = int(np.argmax(probs[0]))
    assert pos.is_legal(move) and -1 <= value[0] <= 1
    try:
        from zero9.nn.features import encode
    except ImportError:
        return
    for _ in range(6):  # a few more moves through the real input encoder
        probs, _ = net.predict(encode(pos)[None])
        legal = pos.legal_moves()
        pos = pos.play(max(legal, key=lambda a: probs[0][a]))
    assert pos.move_number == 6


def test_wrong_board_size_is_refused_naming_both(tmp_path):
    path = tmp_path / "net19.txt"
    save_lz_weights(ZeroNet(18, 19, 362, blocks=1, filters=4), path)
    with pytest.raises(ValueError, match=r"19x19.*9x9"):
        load_lz_weights(path, expected_size=9)
    assert load_lz_weights(path).size == 19


def lz_lines(blocks=1, filters=4):
    return lz_text(ZeroNet(18, 9, 82, blocks=blocks, filters=filters)).splitlines()


def test_truncated_file_is_refused_naming_file_and_line(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text("\n".join(lz_lines()[:-3]) + "\n")
    with pytest.raises(ValueError, match=r"cut\.txt.*line 24"):
        load_lz_weights(path)


def test_line_cut_short_is_refused_naming_the_line(tmp_path):
    lines = lz_lines()
    lines[5] = " ".join(lines[5].split()[:-1])  # line 6: the first residual conv's weights
    path = tmp_path / "short.txt"
    path.write_text("\n".join(lines))
    with pytest.raises(ValueError, match=r"short\.txt, line 6: 143 values, expected 144"):
        load_lz_weights(path)


def test_garbled_value_is_refused_naming_the_line(tmp_path):
    lines = lz_lines()
    tokens = lines[9].split()
    tokens[2] = "0.1x3"
    lines[9] = " ".join(tokens)
    path = tmp_path / "garbled.txt.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(ValueError, match=r"garbled\.txt\.gz, line 10: '0\.1x3' is not a number"):
        load_lz_weights(path)


def test_other_bad_files(tmp_path):
    lines = lz_lines()
    bad = tmp_path / "bad.txt"
    bad.write_text("2\n" + "\n".join(lines[1:]))
    with pytest.raises(ValueError, match="line 1: format version '2'"):
        load_lz_weights(bad)
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="bad.txt: corrupt gzip"):
        load_lz_weights(bad)
    lines[4] = " ".join(["-1"] * 4)  # a negative BN variance
    bad.write_text("\n".join(lines))
    with pytest.raises(ValueError, match="line 5: negative batch-norm variance"):
        load_lz_weights(bad)
    bad.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_lz_weights(bad)


def test_ownership_head_must_be_dropped_explicitly(tmp_path):
    net = ZeroNet(18, 9, 82, blocks=1, filters=4, ownership=True)
    with pytest.raises(ValueError, match="ownership"):
        save_lz_weights(net, tmp_path / "o.txt")
    save_lz_weights(net, tmp_path / "o.txt", drop_ownership=True)
    assert not load_lz_weights(tmp_path / "o.txt").config["ownership"]


def test_passless_gomoku_net_round_trips():
    net = ZeroNet(5, 15, 225, blocks=1, filters=4).eval()
    back = parse_lz_weights(lz_text(net))
    assert back.config == net.config
