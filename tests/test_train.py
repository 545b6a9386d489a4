"""Training: the window, the split, symmetries, learning, and resuming a killed round."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from zero9.games import BLACK, WHITE, make_game
from zero9.learn.rundir import RunDir
from zero9.learn.training.losses import make_batch
from zero9.learn.training.train import learning_rate, train_generation, train_round
from zero9.learn.training.window import ChunkCache, held_out_chunks, is_test_chunk, load_window, select_window
from zero9.nn.checkpoint import load_checkpoint, save_checkpoint
from zero9.nn.chunks import ChunkData, write_npz_shard
from zero9.nn.net import make_net
from zero9.settings import TrainOptions
from zero9.util.files import read_jsonl

GAME = make_game("gomoku", 6, connect=4)

torch.set_num_threads(1)  # tiny nets: threads only fight (the machine runs several test suites)


def fake_game_chunk(path: Path, n: int, rng: np.random.Generator, game=GAME) -> None:
    """A 'game' of ``n`` positions whose policy target is the point holding plane 0's only stone.

    The rule is learnable, and symmetry-equivariant, so a net must learn it from planes.
    """
    from zero9.nn.features import num_planes

    c, size = num_planes(game), game.size
    planes = np.zeros((n, c, size, size), np.uint8)
    policy = np.zeros((n, game.num_actions), np.float32)
    for i in range(n):
        p = int(rng.integers(size * size))
        planes[i, 0].flat[p] = 1
        policy[i, p] = 1.0
    to_play = np.where(np.arange(n) % 2 == 0, BLACK, WHITE).astype(np.int8)
    value = np.where(to_play == BLACK, 1.0, -1.0).astype(np.float32)
    write_npz_shard(path, ChunkData(planes, to_play, policy, value, None, game.to_dict()))


def make_run(tmp_path: Path, games: int, per_game: int = 10) -> RunDir:
    rd = RunDir(tmp_path / "run")
    rng = np.random.default_rng(0)
    for i in range(games):
        fake_game_chunk(rd.gen_chunks_dir(i // 10) / f"{i:019d}-w00-{i:05d}-{per_game}p.npz", per_game, rng)
    return rd


def test_window_is_the_newest_share_clamped(tmp_path):
    rd = make_run(tmp_path, 30)
    files = rd.chunk_files()
    assert [f.parent.name for f in files[:2]] == ["gen0000", "gen0000"] and files[-1].parent.name == "gen0002"
    chosen, have, total = select_window(files, GAME, TrainOptions(window=0.2, window_min=0, window_max=10**6))
    assert total == 300 and have == 60 and chosen == files[-6:]
    chosen, have, _ = select_window(files, GAME, TrainOptions(window=0.2, window_min=100, window_max=10**6))
    assert have == 100 and chosen == files[-10:]
    chosen, have, _ = select_window(files, GAME, TrainOptions(window=0.9, window_min=0, window_max=25))
    assert have == 30 and chosen == files[-3:]


def test_split_is_by_chunk_and_stable(tmp_path):
    rd = make_run(tmp_path, 40)
    opts = TrainOptions(window=1.0, window_min=0, downsample=1)
    train, test, info = load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(1))
    test_files = sorted(held_out_chunks(rd.chunk_files()))
    assert {f for f in rd.chunk_files() if is_test_chunk(f)} <= set(test_files)
    assert len(test_files) >= 4 and len(test) == 10 * len(test_files)
    assert set(test.sources) == {str(f) for f in test_files}
    assert not set(train.sources) & set(test.sources)
    assert len(train) + len(test) == info["window_positions"] == 400


def test_downsampling_keeps_about_one_in_n(tmp_path):
    rd = make_run(tmp_path, 40, per_game=50)
    opts = TrainOptions(window=1.0, window_min=0, downsample=4)
    train, test, info = load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(2))
    assert info["downsample"] == 4
    assert 350 < len(train) + len(test) < 650  # 2000 / 4, binomial spread


def test_a_chunk_cache_reads_only_new_files_and_gives_the_same_window(tmp_path, monkeypatch):
    import zero9.learn.training.window as window_module

    rd = make_run(tmp_path, 30)
    opts = TrainOptions(window=0.0, window_min=100, downsample=2)
    reads = []
    real_read = window_module.read_chunk

    def counting_read(path, game):
        reads.append(path)
        return real_read(path, game)

    monkeypatch.setattr(window_module, "read_chunk", counting_read)
    cache = ChunkCache()
    load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(5), cache)
    assert len(reads) == len(cache) == 10
    rng = np.random.default_rng(4)
    for i in range(30, 33):  # the next round's games push three old ones out of the window
        fake_game_chunk(rd.gen_chunks_dir(3) / f"{i:019d}-w00-{i:05d}-10p.npz", 10, rng)
    reads.clear()
    cached = load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(6), cache)
    assert sorted(p.name for p in reads) == [f"{i:019d}-w00-{i:05d}-10p.npz" for i in range(30, 33)]
    assert len(cache) == 10 and all(f in cache for f in rd.chunk_files()[-10:])
    fresh = load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(6))
    for a, b in zip(cached[:2], fresh[:2], strict=True):
        assert np.array_equal(a.planes, b.planes) and np.array_equal(a.policy, b.policy)
        assert a.sources == b.sources


def test_symmetry_moves_planes_policy_and_ownership_together():
    rng = np.random.default_rng(3)
    n, size = 64, 5
    planes = np.zeros((n, 5, size, size), np.uint8)
    policy = np.zeros((n, size * size), np.float32)
    own = np.zeros((n, size * size), np.int8)
    for i in range(n):
        p = int(rng.integers(size * size))
        planes[i, 0].flat[p] = 1
        policy[i, p] = 1
        own[i, p] = 1
    samples = ChunkData(planes, np.full(n, BLACK, np.int8), policy, np.ones(n, np.float32), own)
    bp, bpol, _, bown = make_batch(samples, np.arange(n), rng, size)
    moved = 0
    for i in range(n):
        stone = int(np.argmax(bp[i, 0].reshape(-1)))
        assert int(np.argmax(bpol[i])) == stone == int(np.argmax(bown[i]))
        moved += stone != int(np.argmax(policy[i]))
    assert moved > n // 3  # symmetries were really applied


def test_warmup_then_cosine_decay():
    opts = TrainOptions(lr=0.1, warmup=10, steps=100, lr_floor=0.1)
    assert learning_rate(opts, 0, 0) == pytest.approx(0.01)
    assert learning_rate(opts, 10, 10) == pytest.approx(0.1 * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * 0.1))))
    assert learning_rate(opts, 100, 500) == pytest.approx(0.01)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_tiny_net_learns_the_rule(tmp_path, optimizer):
    rd = make_run(tmp_path, 40)
    lr = 0.05 if optimizer == "sgd" else 0.005
    opts = TrainOptions(steps=150, batch_size=64, lr=lr, optimizer=optimizer,
                        window=1.0, window_min=0, downsample=1, warmup=10, seed=0, test_every=50, max_reuse=0)
    rng = np.random.default_rng(0)
    train, test, _ = load_window([rd.chunks_dir], GAME, opts, rng)
    torch.manual_seed(0)
    net = make_net(GAME, blocks=1, filters=16)
    log = tmp_path / "log.jsonl"
    result = train_round(net, train, test, opts, log_path=log, progress=False)
    rows = read_jsonl(log)
    tests = [r for r in rows if r["kind"] == "test"]
    assert [r["step"] for r in tests] == [0, 50, 100, 150]
    assert result.last_test["policy_loss"] < np.log(36) * 0.6
    assert result.last_test["accuracy"] > 0.5
    assert result.optimizer_state["state"]


def test_killed_round_resumes_from_its_saved_state(tmp_path):
    rd = make_run(tmp_path, 20)
    opts = TrainOptions(steps=40, batch_size=32, window=1.0, window_min=0, downsample=1, seed=0,
                        test_every=10, save_every=0.0)
    torch.manual_seed(0)
    net = make_net(GAME, blocks=1, filters=8)
    meta = save_checkpoint(rd.nets_dir / "start.pt", net, {"game": GAME.to_dict()})

    class Killed(Exception):
        pass

    import zero9.learn.training.train as train_mod

    original = train_mod.train_round

    def dying_round(*args, **kwargs):
        saver = kwargs["state_saver"]

        def save_then_die(step, optimizer):
            if step == 25:
                saver(step, optimizer)
            if step >= 32:  # after the row for step 30 was logged: that row must not count twice
                raise Killed

        kwargs["state_saver"] = save_then_die
        return original(*args, **kwargs)

    train_mod.train_round = dying_round
    try:
        with pytest.raises(Killed):
            train_generation(rd, net, meta, opts, generation=0, optimizer_state=None, global_step=0,
                             progress=False)
    finally:
        train_mod.train_round = original
    assert rd.train_state_path.exists()
    state = load_checkpoint(rd.train_state_path)
    assert state.extra["round_step"] == 25 and state.optimizer_state["state"]
    net2, _ = make_net(GAME, blocks=1, filters=8), None
    net2.load_state_dict(load_checkpoint(rd.nets_dir / "start.pt").net.state_dict())
    result = train_generation(rd, net2, meta, opts, generation=0, optimizer_state=None, global_step=0,
                              progress=False)
    assert result.global_step == 40
    steps = [r["step"] for r in read_jsonl(rd.train_log) if r["kind"] == "train"]
    assert steps == [10, 20, 30, 40]  # rows past the saved step were dropped, none doubled


def test_corrupt_chunk_is_named(tmp_path):
    rd = make_run(tmp_path, 3)
    bad = rd.gen_chunks_dir(0) / "0000000000000000009-w00-00009-10p.npz"
    bad.write_bytes(b"not a zip")
    opts = TrainOptions(window=1.0, window_min=0, downsample=1)
    with pytest.raises(ValueError, match=bad.name):
        load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(0))


def test_compiled_training_learns_as_eager_and_compiles_once_per_process(tmp_path):
    """TrainOptions.compile (on by default on CUDA): the same round through torch.compile ends at
    the eager round's losses (float noise only), and a later round's fresh net of the same shape
    reuses the compiled graphs instead of compiling again (autotrain loads a new net every round)."""
    from torch._dynamo.utils import counters

    from zero9.learn.training.train import compiles

    assert compiles(TrainOptions(), torch.device("cuda"))
    assert not compiles(TrainOptions(), torch.device("cpu"))
    rd = make_run(tmp_path, 20)
    ends, graphs = [], []
    for compile_ in (False, True, True):
        opts = TrainOptions(steps=12, batch_size=32, lr=0.05, window=1.0, window_min=0, downsample=1,
                            warmup=2, seed=0, test_every=12, max_reuse=0, compile=compile_)
        train, test, _ = load_window([rd.chunks_dir], GAME, opts, np.random.default_rng(0))
        torch.manual_seed(0)
        net = make_net(GAME, blocks=1, filters=8)
        ends.append(train_round(net, train, test, opts, progress=False).last_test)
        graphs.append(counters["stats"]["unique_graphs"])
    assert graphs[2] == graphs[1] > graphs[0]  # compiled once, by the first compiled round
    assert ends[1]["total"] == pytest.approx(ends[0]["total"], rel=1e-3)  # compiled learns as eager
    assert ends[2]["total"] == pytest.approx(ends[1]["total"], rel=1e-5)
