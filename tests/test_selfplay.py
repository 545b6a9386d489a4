"""Self-play with a real tiny net: records on disk, their contents, SGFs, workers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zero9.games import BLACK, WHITE, make_game
from zero9.learn.rundir import RECORD_NAME
from zero9.learn.selfplay.pool import play_selfplay
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.chunks import read_chunk
from zero9.nn.net import make_net
from zero9.settings import SelfPlayConfig

torch.set_num_threads(1)  # tiny nets: threads only fight (the machine runs several test suites)


def tiny_net(tmp_path, game, ownership=False):
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8, ownership=ownership)
    meta = save_checkpoint(tmp_path / "net.pt", net, {"game": game.to_dict()})
    return tmp_path / "net.pt", meta["hash"]


def test_gomoku_records_hold_consistent_training_targets(tmp_path):
    import sgfmill.sgf

    game = make_game("gomoku", 6, connect=4)
    net_path, net_hash = tiny_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=12, parallel_games=3, leaves_per_tree=4, randomcnt=4, seed=1,
                         no_resign_share=1.0)
    stats = play_selfplay(net_path, 4, cfg, tmp_path / "chunks", tmp_path / "sgf", workers=1, progress=False,
                          threads=1)
    files = sorted((tmp_path / "chunks").glob("*.npz"))
    assert stats.games == 4 and len(files) == 4
    # every move was a full search, so every move is recorded
    assert stats.evals > 0 and stats.moves == sum(len(read_chunk(f)) for f in files)
    for f in files:
        data = read_chunk(f, game)
        n = int(RECORD_NAME.search(f.name).group(1))
        assert len(data) == n > 0
        np.testing.assert_allclose(data.policy.sum(axis=1), 1.0, atol=1e-5)
        assert set(np.unique(data.value)) <= {-1.0, 0.0, 1.0}
        assert data.to_play[0] == BLACK and set(data.to_play[:2]) == {BLACK, WHITE}
        # The value is the result from the side to move's view: opposite for the two colours.
        if data.value[0] != 0:
            assert np.all(data.value[data.to_play == BLACK] == -data.value[data.to_play == WHITE][0])
        # No policy mass on occupied points (the planes hold the stones).
        stones = data.planes[:, :2].reshape(len(data), 2, -1).sum(axis=1)
        assert np.all(data.policy[stones > 0] == 0)
        sgf_path = tmp_path / "sgf" / f.name.replace(f"-{n}p.npz", ".sgf")
        sgf = sgfmill.sgf.Sgf_game.from_bytes(sgf_path.read_bytes())
        root = sgf.get_root()
        assert sgf.get_size() == 6 and root.get("GM") == 4
        assert net_hash in root.get("C") and root.get("RE")[0] in "BW0"
        assert len(sgf.get_main_sequence()) - 1 == n


def test_go_records_carry_ownership_and_pcr_records_only_full_moves(tmp_path):
    game = make_game("go", 5, komi=0.5)
    net_path, _ = tiny_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=16, fast_visits=4, full_search_share=0.5, parallel_games=2, leaves_per_tree=4,
                         seed=3, move_cap=40, resign_threshold=None)
    stats = play_selfplay(net_path, 2, cfg, tmp_path / "chunks", None, workers=1, progress=False, threads=1,
                          lz_dir=tmp_path / "lz")
    files = sorted((tmp_path / "chunks").glob("*.npz"))
    assert len(files) == 2
    recorded = sum(len(read_chunk(f)) for f in files)
    assert 0 < recorded < stats.moves  # about half the moves are fast and unrecorded
    for f in files:
        data = read_chunk(f, game)
        assert data.ownership is not None and data.ownership.shape == (len(data), 25)
        assert set(np.unique(data.ownership)) <= {-1, 0, 1}
        assert data.planes.shape[1:] == (18, 5, 5)
    for f in (tmp_path / "lz").glob("*.gz"):  # Leela Zero text chunks of the same games
        assert read_chunk(f).policy.shape[1] == 26


@pytest.mark.timeout(120)
def test_two_worker_processes_write_exactly_the_games_asked(tmp_path):
    game = make_game("gomoku", 6, connect=4)
    net_path, _ = tiny_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=8, parallel_games=2, leaves_per_tree=4, seed=5)
    stats = play_selfplay(net_path, 5, cfg, tmp_path / "chunks", None, workers=2, progress=False, threads=1)
    names = sorted(p.name for p in (tmp_path / "chunks").glob("*.npz"))
    assert stats.games == 5 and len(names) == 5
    assert {n.split("-")[1] for n in names} == {"w00", "w01"}
    assert not list((tmp_path / "chunks").glob(".tmp-*"))


def test_bad_options_are_clear_errors(tmp_path):
    import argparse

    from zero9.cli.selfplay import add_selfplay_arguments, selfplay_config

    parser = argparse.ArgumentParser()
    add_selfplay_arguments(parser)
    with pytest.raises(ValueError, match="--visits"):
        selfplay_config(parser.parse_args(["--visits", "0"]))
    with pytest.raises(ValueError, match="--pcr"):
        selfplay_config(parser.parse_args(["--pcr", "1.5"]))
    with pytest.raises(ValueError, match="--eval-cache"):
        selfplay_config(parser.parse_args(["--eval-cache", "-1"]))


def test_eval_cache_option_reaches_the_workers_evaluator(tmp_path, monkeypatch):
    import argparse

    import zero9.learn.selfplay.worker as workers
    from zero9.cli.autotrain import add_arguments, loop_settings
    from zero9.cli.selfplay import add_selfplay_arguments, selfplay_config
    from zero9.search.evaluator import NetEvaluator

    parser = argparse.ArgumentParser()
    add_selfplay_arguments(parser)
    assert selfplay_config(parser.parse_args([])).eval_cache == SelfPlayConfig.eval_cache == 100_000
    assert selfplay_config(parser.parse_args(["--eval-cache", "0"])).eval_cache == 0
    autotrain = argparse.ArgumentParser()
    add_arguments(autotrain)
    settings = loop_settings(autotrain.parse_args(["--dir", "x", "--eval-cache", "500"]))
    assert settings["selfplay"].eval_cache == 500
    with pytest.raises(ValueError, match="eval_cache"):
        SelfPlayConfig(eval_cache=-1)
    # The worker's evaluator gets the config's size; without a cache every position goes to the net.
    made: list[NetEvaluator] = []

    def recorded(*args, **kwargs) -> NetEvaluator:
        made.append(NetEvaluator(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(workers, "NetEvaluator", recorded)
    game = make_game("gomoku", 6, connect=4)
    net_path, _ = tiny_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=8, parallel_games=2, leaves_per_tree=4, seed=5, eval_cache=0)
    stats = play_selfplay(net_path, 2, cfg, tmp_path / "chunks", None, workers=1, progress=False, threads=1)
    assert stats.games == 2 and len(list((tmp_path / "chunks").glob("*.npz"))) == 2
    assert [e.cache_size for e in made] == [0] and made[0].cache_hits == 0 and made[0].positions > 0


def test_autotrain_turns_pcr_on_for_puct_only():
    import argparse

    from zero9.cli.autotrain import add_arguments, loop_settings

    parser = argparse.ArgumentParser()
    add_arguments(parser)

    def share(*extra: str) -> float:  # on this CPU: the laptop's recipe (PUCT at 200 visits)
        settings = loop_settings(parser.parse_args(["--dir", "x", "--device", "cpu", *extra]))
        return settings["selfplay"].full_search_share

    assert share() == 0.25  # PUCT at 200 visits, fast moves at 32
    assert share("--gumbel", "--visits", "64") == 1.0
    assert share("--visits", "32") == 1.0  # fast moves would not be cheaper
    assert share("--pcr", "0.5") == 0.5
    with pytest.raises(ValueError, match="--fast-visits"):
        share("--visits", "16", "--pcr", "0.25")
