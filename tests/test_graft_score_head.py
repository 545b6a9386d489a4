"""scripts/graft_score_head.py: a score head fitted on a frozen net, which plays exactly as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn

from zero9.games import BLACK, WHITE, make_game
from zero9.nn.checkpoint import load_checkpoint, save_checkpoint
from zero9.nn.chunks import ChunkData, write_npz_shard
from zero9.nn.net import make_net

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import graft_score_head as graft  # noqa: E402


def _net_file(tmp_path: Path, ownership: bool = True) -> Path:
    game = make_game("go", 5, komi=7.5)
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8, ownership=ownership)
    randomise_bn(net)
    path = tmp_path / ("net.pt" if ownership else "plain.pt")
    save_checkpoint(path, net, {"game": game.to_dict()})
    return path


def _chunks(tmp_path: Path, games: int = 12, positions: int = 20) -> Path:
    """Games whose final score follows the stones on the board: something a head can learn."""
    game = make_game("go", 5, komi=7.5)
    rng = np.random.default_rng(1)
    folder = tmp_path / "chunks"
    folder.mkdir()
    for g in range(games):
        planes = random_planes(positions, 18, 5, seed=g).astype(np.uint8)
        to_play = rng.choice([BLACK, WHITE], positions).astype(np.int8)
        lead = planes[:, 0].reshape(positions, -1).sum(1) - planes[:, 8].reshape(positions, -1).sum(1)
        noisy = rng.normal(lead[:, None] / 25, 0.7, (positions, 25))
        owners = np.clip(np.round(noisy), -1, 1).astype(np.int8)
        policy = np.full((positions, 26), 1 / 26, np.float32)
        values = np.zeros(positions, np.float32)
        write_npz_shard(folder / f"{g:04d}-{positions}p.npz",
                        ChunkData(planes, to_play, policy, values, owners, game.to_dict()))
    return folder


def test_the_grafted_net_plays_as_its_source_and_its_head_fits_the_scores(tmp_path):
    source_path, chunks = _net_file(tmp_path), _chunks(tmp_path)
    out = tmp_path / "grafted.pt"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "graft_score_head.py"), str(source_path),
                           str(chunks), "--out", str(out), "--device", "cpu", "--holdout", "0.25"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "fit: 9 games" in done.stdout and "held-out: 3 games" in done.stdout
    grafted, source = load_checkpoint(out).net, load_checkpoint(source_path).net
    assert grafted.config.get("score") and not source.config.get("score")
    assert load_checkpoint(out).meta["grafted_from"] == load_checkpoint(source_path).meta["hash"]
    x = torch.from_numpy(random_planes(16, 18, 5, seed=99))
    with torch.no_grad():
        a, b = source(x), grafted(x)
    assert len(b) == len(a) + 1 and all(torch.equal(p, q) for p, q in zip(a, b[:len(a)], strict=True))


def test_least_squares_beats_the_constant_head_on_its_own_data(tmp_path):
    net, _, game = graft.grafted_net(str(_net_file(tmp_path)))
    from zero9.nn.chunks import load_chunks

    data = load_chunks(sorted(_chunks(tmp_path).glob("*.npz")), game)
    hidden, _ = graft.features(net, data.planes, torch.device("cpu"))
    target, _ = graft.targets(data)
    weights, bias = graft.fit(hidden, target, ridge=1e-6)
    fitted = ((hidden @ weights + bias - target) ** 2).mean()
    assert fitted <= ((target.mean() - target) ** 2).mean() + 1e-12


def test_a_net_without_ownership_is_refused(tmp_path):
    with pytest.raises(ValueError, match="needs a net with an ownership head"):
        graft.grafted_net(str(_net_file(tmp_path, ownership=False)))
