"""SGF games -> training chunks, and zero9 train learning from them."""

from __future__ import annotations

import numpy as np
import pytest

from zero9.games import BLACK, EMPTY, WHITE, make_game
from zero9.learn.training.supervised import dump_supervised, parse_result, split_collection
from zero9.nn.chunks import read_chunk

GAME9 = "(;GM[1]FF[4]SZ[9]KM[7.5]RE[{re}];B[ee];W[cc];B[gc];W[cg];B[gg])"

import torch  # noqa: E402

torch.set_num_threads(1)  # tiny nets: threads only fight


def test_results_and_collections():
    assert parse_result("B+3.5") == BLACK and parse_result("w+R") == WHITE
    assert parse_result("0") == EMPTY and parse_result("Draw") == EMPTY
    assert parse_result("?") is None and parse_result("Void") is None and parse_result(None) is None
    text = b"(;GM[1]SZ[9]C[a (tricky\\] comment)];B[aa](;W[bb])(;W[cc]))\n(;GM[1]SZ[9];B[ee])"
    games = split_collection(text)
    assert len(games) == 2 and games[1] == b"(;GM[1]SZ[9];B[ee])"


def test_go_games_become_leela_zero_chunks_with_skips_counted(tmp_path):
    src = tmp_path / "sgf"
    src.mkdir()
    (src / "a.sgf").write_text(GAME9.format(re="B+2.5") + "\n" + GAME9.format(re="W+R"))
    (src / "draw.sgf").write_text(GAME9.format(re="0"))
    (src / "noresult.sgf").write_text("(;GM[1]SZ[9];B[ee];W[cc])")
    (src / "big.sgf").write_text("(;GM[1]SZ[19]RE[B+R];B[pd])")
    (src / "handicap.sgf").write_text("(;GM[1]SZ[9]RE[W+1.5]AB[cc][gg];W[ee])")
    (src / "illegal.sgf").write_text("(;GM[1]SZ[9]RE[B+R];B[ee];W[ee])")
    game = make_game("go", 9, komi=7.5)
    report = dump_supervised([src], tmp_path / "out", game, games_per_chunk=1)
    assert report["games"] == 2 and report["positions"] == 10 and report["chunks"] == 2
    assert report["skipped"] == {"draw (Leela Zero chunks hold none; use --npz)": 1, "no result": 1,
                                 "wrong size": 1, "setup stones": 1, "illegal move": 1}
    files = sorted((tmp_path / "out").glob("*.gz"))
    first = read_chunk(files[0], game)
    assert len(first) == 5
    assert list(first.to_play) == [BLACK, WHITE, BLACK, WHITE, BLACK]
    assert list(first.value) == [1, -1, 1, -1, 1]  # black won: +1 for black to move
    ee = game.vertex_to_action("E5")
    assert first.policy[0, ee] == 1.0 and first.policy[0].sum() == 1.0
    assert first.planes[1, :, 4, 4].any()  # the stone at E5 is in the second position's planes
    second = read_chunk(files[1], game)
    assert list(second.value) == [-1, 1, -1, 1, -1]

    report = dump_supervised([src / "draw.sgf"], tmp_path / "npz", game, npz=True)
    assert report["games"] == 1
    data = read_chunk(next((tmp_path / "npz").glob("*.npz")), game)
    assert np.all(data.value == 0)


def test_gomoku_and_bad_paths(tmp_path):
    (tmp_path / "g.sgf").write_text("(;GM[4]SZ[7]RE[B+];B[dd];W[ee];B[de])")
    game = make_game("gomoku", 7, connect=5)
    report = dump_supervised([tmp_path / "g.sgf"], tmp_path / "out", game)
    assert report["games"] == 1
    assert len(read_chunk(next((tmp_path / "out").glob("*.npz")), game)) == 3
    assert dump_supervised([tmp_path / "g.sgf"], tmp_path / "o2", make_game("go", 7))["skipped"] == {
        "wrong game": 1}
    with pytest.raises(ValueError, match="nope.sgf"):
        dump_supervised([tmp_path / "nope.sgf"], tmp_path / "out", game)


def test_train_learns_from_supervised_chunks(tmp_path):
    import argparse

    from zero9.cli import supervised, train

    games = "\n".join(GAME9.format(re="B+R" if i % 2 else "W+R") for i in range(30))
    (tmp_path / "games.sgf").write_text(games)
    args = argparse.Namespace(sgf=[str(tmp_path / "games.sgf")], out=str(tmp_path / "run" / "chunks" / "sup"),
                              game="go", size=9, komi=None, connect=None, games_per_chunk=3, npz=False)
    assert supervised.run(args) == 0
    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    targs = parser.parse_args(["--dir", str(tmp_path / "run"), "--game", "go", "--size", "9", "--blocks", "1",
                               "--filters", "8", "--steps", "30", "--batch-size", "16", "--window-min", "0",
                               "--device", "cpu", "--no-progress"])
    assert train.run(targs) == 0
    nets = list((tmp_path / "run" / "nets").glob("*.pt"))
    assert len(nets) == 1 and list((tmp_path / "run" / "nets").glob("*.txt.gz"))
