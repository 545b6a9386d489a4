"""Training data files: leelaz v1 text chunks, npz shards, and the reader that skips bad files."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from zero9.games import BLACK, EMPTY, WHITE
from zero9.nn.chunks import (
    ChunkData,
    iter_chunks,
    load_chunks,
    lz_chunk_text,
    ownership_target,
    parse_lz_chunk,
    read_chunk,
    read_lz_chunk,
    read_npz_shard,
    write_lz_chunk,
    write_npz_shard,
)

GO9 = {"game": "go", "size": 9, "komi": 7.5}


def go_records(count: int, size: int = 9, seed: int = 0) -> ChunkData:
    """Random but well-formed 18-plane Go records."""
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 2, (count, 18, size, size)).astype(np.uint8)
    to_play = rng.choice([BLACK, WHITE], count).astype(np.int8)
    planes[:, 16] = (to_play == BLACK)[:, None, None]
    planes[:, 17] = (to_play == WHITE)[:, None, None]
    policy = rng.random((count, size * size + 1)).astype(np.float32)
    policy /= policy.sum(axis=1, keepdims=True)
    value = rng.choice([-1.0, 1.0], count).astype(np.float32)
    return ChunkData(planes, to_play, policy, value, None, {"game": "go", "size": size, "komi": 7.5})


def assert_same_records(a: ChunkData, b: ChunkData) -> None:
    assert np.array_equal(a.planes, b.planes)
    assert np.array_equal(a.to_play, b.to_play)
    assert np.array_equal(a.policy, b.policy)
    assert np.array_equal(a.value, b.value)


def test_lz_chunk_round_trip(tmp_path):
    data = go_records(7)
    write_lz_chunk(tmp_path / "game.gz", data)
    back = read_chunk(tmp_path / "game.gz", GO9)
    assert_same_records(data, back)
    assert back.planes.dtype == np.uint8 and back.game["size"] == 9
    assert len(back) == 7
    assert [p.name for p in tmp_path.iterdir()] == ["game.gz"]  # no temporary file left


def test_the_81st_bit_is_one_digit_after_20_hex_digits():
    data = go_records(1)
    data.planes[0, :16] = 0
    data.planes[0, 0, 0, 0] = 1  # point 0 -> the top bit of the first hex digit
    data.planes[0, 1, 8, 8] = 1  # point 80 -> the lone last digit
    data.planes[0, 2].reshape(-1)[[4, 7, 76, 79]] = 1  # bit 4 -> 0x8 of digit 1; 7 -> 0x1; 76..79 -> digit 19
    lines = lz_chunk_text(data).splitlines()
    assert lines[0] == "8" + "0" * 19 + "0"
    assert lines[1] == "0" * 20 + "1"
    assert lines[2] == "09" + "0" * 17 + "9" + "0"
    assert all(len(line) == 21 for line in lines[:16])


def test_reads_text_written_the_way_leela_zero_writes_it():
    """A record built as leelaz's Training.cpp / chunkparser.py build them, not by zero9's writer."""
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2, (16, 81)).astype(np.uint8)
    lines = [np.packbits(b[:80]).tobytes().hex() + str(b[80]) for b in bits]  # MSB first, then the stray bit
    probs = np.zeros(82)
    probs[[3, 40, 81]] = [0.25, 0.5, 0.25]
    lines += ["1", " ".join(f"{p:g}" for p in probs), "-1"]
    data = parse_lz_chunk("\n".join(lines) + "\n", "lz.gz")
    assert np.array_equal(data.planes[0, :16].reshape(16, 81), bits)
    assert data.to_play[0] == WHITE
    assert np.all(data.planes[0, 16] == 0) and np.all(data.planes[0, 17] == 1)  # rebuilt from side to move
    assert data.policy[0, 81] == 0.25 and data.value[0] == -1


@pytest.mark.parametrize("size", [7, 6, 19])
def test_other_board_sizes_round_trip(size):
    data = go_records(3, size=size, seed=size)
    back = parse_lz_chunk(lz_chunk_text(data))
    assert_same_records(data, back)


def test_lz_chunk_refuses_what_it_cannot_hold():
    data = go_records(2)
    data.value[0] = 0.0
    with pytest.raises(ValueError, match="draws"):
        lz_chunk_text(data)
    data = go_records(2)
    data.planes[0, 16] = 1 - data.planes[0, 16]
    with pytest.raises(ValueError, match="16/17"):
        lz_chunk_text(data)
    gomoku = ChunkData(np.zeros((1, 5, 9, 9), np.uint8), np.array([BLACK], np.int8),
                       np.full((1, 81), 1 / 81, np.float32), np.zeros(1, np.float32), None,
                       {"game": "gomoku", "size": 9})
    with pytest.raises(ValueError, match="npz"):
        lz_chunk_text(gomoku)


def test_truncated_and_garbled_chunks_name_file_and_line(tmp_path):
    lines = lz_chunk_text(go_records(2)).splitlines()
    path = tmp_path / "cut.gz"
    path.write_bytes(gzip.compress("\n".join(lines[:30]).encode()))
    with pytest.raises(ValueError, match=r"cut\.gz.*line 20"):
        read_lz_chunk(path)
    bad = list(lines)
    bad[19 + 3] = "zz" + bad[22][2:]
    with pytest.raises(ValueError, match=r"g\.gz, line 23: bad plane digits"):
        parse_lz_chunk("\n".join(bad), "g.gz")
    bad = list(lines)
    bad[18] = "0"
    with pytest.raises(ValueError, match=r"line 19: outcome '0'"):
        parse_lz_chunk("\n".join(bad), "g.gz")
    bad = list(lines)
    bad[19 + 17] += " 0"
    with pytest.raises(ValueError, match=r"line 37: 83 probabilities, expected 82"):
        parse_lz_chunk("\n".join(bad), "g.gz")


def test_npz_shard_holds_draws_gomoku_ownership_and_meta(tmp_path):
    rng = np.random.default_rng(2)
    count = 4
    planes = rng.integers(0, 2, (count, 5, 15, 15)).astype(np.uint8)
    data = ChunkData(planes, np.array([1, 2, 1, 2], np.int8), rng.random((count, 225)).astype(np.float32),
                     np.array([0, 1, -1, 0], np.float32), None,
                     {"game": "gomoku", "size": 15, "connect": 5, "variant": "freestyle"})
    write_npz_shard(tmp_path / "g.npz", data, {"net": "0123456789ab"})
    back = read_chunk(tmp_path / "g.npz", {"game": "gomoku", "size": 15})
    assert_same_records(data, back)
    assert back.game["variant"] == "freestyle" and back.meta["net"] == "0123456789ab"
    assert back.ownership is None

    go = go_records(3)
    go.ownership = rng.integers(-1, 2, (3, 81)).astype(np.int8)
    go.value[1] = 0.0
    write_npz_shard(tmp_path / "o.npz", go)
    back = read_npz_shard(tmp_path / "o.npz")
    assert_same_records(go, back)
    assert np.array_equal(back.ownership, go.ownership)
    assert back["ownership"] is back.ownership  # mapping access for the trainer


def test_npz_keeps_non_binary_planes_exactly(tmp_path):
    data = go_records(2)
    planes = data.planes.astype(np.float32)
    planes[:, 17] = 0.375
    data = ChunkData(planes, data.to_play, data.policy, data.value, None, GO9)
    write_npz_shard(tmp_path / "f.npz", data)
    assert np.array_equal(read_npz_shard(tmp_path / "f.npz").planes, planes)


def test_bad_files_are_named_and_skipped(tmp_path, caplog):
    write_lz_chunk(tmp_path / "a.gz", go_records(3, seed=1))
    write_npz_shard(tmp_path / "b.npz", go_records(2, seed=2))
    (tmp_path / "c.gz").write_bytes(gzip.compress(b"not a chunk\n"))
    (tmp_path / "d.npz").write_bytes(b"PK\x03\x04 broken zip")
    (tmp_path / ".tmp-123-e.npz").write_bytes(b"half written")  # ignored, not even reported
    with caplog.at_level("WARNING", logger="zero9"):
        data = load_chunks(tmp_path, GO9)
    assert len(data) == 5
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert any("c.gz" in m for m in messages) and any("d.npz" in m for m in messages)
    assert not any(".tmp-" in m for m in messages)
    assert data.sources == [str(tmp_path / "a.gz"), str(tmp_path / "b.npz")]


def test_game_mismatch_is_a_bad_file(tmp_path, caplog):
    write_lz_chunk(tmp_path / "a.gz", go_records(1))
    with pytest.raises(ValueError, match=r"a\.gz is for 9x9, not 13x13"):
        read_chunk(tmp_path / "a.gz", {"game": "go", "size": 13})
    with caplog.at_level("WARNING", logger="zero9"):
        assert list(iter_chunks([tmp_path / "a.gz"], {"game": "go", "size": 13})) == []
    assert "a.gz" in caplog.text


def test_concatenate_keeps_ownership_only_when_all_have_it():
    a, b = go_records(2, seed=1), go_records(3, seed=2)
    a.ownership = np.zeros((2, 81), np.int8)
    assert ChunkData.concatenate([a, b]).ownership is None
    b.ownership = np.ones((3, 81), np.int8)
    both = ChunkData.concatenate([a, b])
    assert both.ownership.shape == (5, 81) and both.ownership[2:].all()


def test_ownership_target_is_from_the_side_to_move():
    owners = np.array([BLACK, WHITE, EMPTY, BLACK], np.int8)
    assert ownership_target(owners, BLACK).tolist() == [1, -1, 0, 1]
    assert ownership_target(owners, WHITE).tolist() == [-1, 1, 0, -1]
    batch = ownership_target(np.stack([owners, owners]), np.array([BLACK, WHITE]))
    assert batch.tolist() == [[1, -1, 0, 1], [-1, 1, 0, -1]]


def test_write_replaces_atomically(tmp_path):
    path = tmp_path / "x.gz"
    write_lz_chunk(path, go_records(2, seed=1))
    inode_data = go_records(4, seed=3)
    write_lz_chunk(path, inode_data)
    assert len(read_lz_chunk(path)) == 4
    assert os.listdir(tmp_path) == ["x.gz"]
