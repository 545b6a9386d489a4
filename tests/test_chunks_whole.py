"""The whole-text chunk reader against the line-by-line one: the same records, or the same error.

``parse_lz_chunk`` reads a well-formed Leela Zero v1 chunk with numpy on the whole text and
leaves everything else to the line-by-line reader, which names what is wrong. These tests read
well-formed chunks of every board size, valid chunks in unusual spellings (which must fall
back), every kind of malformed chunk, and random corruptions, both ways.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import corrupted

from zero9.games import BLACK, WHITE
from zero9.nn.chunks import (
    ChunkData,
    _parse_lz_chunk_lines,
    _parse_lz_chunk_whole,
    lz_chunk_text,
    parse_lz_chunk,
)


def records(count: int, size: int = 9, seed: int = 0, sparse: bool = True) -> ChunkData:
    """Well-formed 18-plane Go records; ``sparse`` policies are visit shares, mostly zero."""
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 2, (count, 18, size, size)).astype(np.uint8)
    to_play = rng.choice([BLACK, WHITE], count).astype(np.int8)
    planes[:, 16] = (to_play == BLACK)[:, None, None]
    planes[:, 17] = (to_play == WHITE)[:, None, None]
    actions = size * size + 1
    if sparse:
        visits = np.zeros((count, actions))
        for row in visits:
            row[rng.choice(actions, 5, replace=False)] = rng.integers(1, 400, 5)
    else:
        visits = rng.random((count, actions))
    policy = (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32)
    value = rng.choice([-1.0, 1.0], count).astype(np.float32)
    return ChunkData(planes, to_play, policy, value, None, {"game": "go", "size": size, "komi": 7.5})


def outcome(read, text: str):
    """What a reader makes of ``text``: its arrays (with dtypes) and record, or the error's message."""
    try:
        data = read(text, "t.gz")
    except ValueError as e:
        return "error", str(e)
    arrays = tuple((a.dtype.str, a.shape, a.tobytes()) for a in (data.planes, data.to_play, data.policy,
                                                                 data.value))
    return arrays, data.game, data.meta, data.sources, data.ownership


def assert_same_both_ways(text: str):
    result = outcome(parse_lz_chunk, text)
    assert result == outcome(_parse_lz_chunk_lines, text)
    return result


def leela_zero_text(data: ChunkData) -> str:
    """The text as Leela Zero's own writer spells it: probabilities with ``%g``, so ``1e-05``."""
    lines = lz_chunk_text(data).splitlines()
    for r in range(len(data)):
        lines[r * 19 + 17] = " ".join(f"{p:g}" for p in data.policy[r].astype(np.float64))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("size", [5, 6, 7, 9, 13, 19])
@pytest.mark.parametrize("sparse", [True, False])
def test_well_formed_chunks_read_whole_and_the_same(size, sparse):
    data = records(12, size, seed=size, sparse=sparse)
    for text in (lz_chunk_text(data), leela_zero_text(data), lz_chunk_text(data).upper()):
        assert _parse_lz_chunk_whole(text, "t.gz") is not None  # the numpy reader takes it
        assert assert_same_both_ways(text)[0] != "error"
    back = parse_lz_chunk(lz_chunk_text(data))
    assert np.array_equal(back.planes, data.planes) and np.array_equal(back.policy, data.policy)


def test_tiny_probabilities_and_one_position():
    data = records(1, seed=3)
    data.policy[0] = 0
    data.policy[0, [0, 5, 81]] = [1e-7, 0.5 - 1e-7, 0.5]
    text = leela_zero_text(data)
    assert "1e-07" in text
    assert _parse_lz_chunk_whole(text, "t.gz") is not None
    assert_same_both_ways(text)


def edit(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line] = new
    return "\n".join(lines)


BASE = lz_chunk_text(records(3, seed=1))
BASE_LINES = BASE.split("\n")

# Valid, but not in the spelling the numpy reader takes: the line-by-line reader reads them.
ODD_BUT_VALID = {
    "CRLF line ends": BASE.replace("\n", "\r\n"),
    "trailing blank lines": BASE + "\n \n\t\n",
    "tabs between probabilities": edit(BASE, 17, BASE_LINES[17].replace(" ", "\t")),
    "outcome 1.0": edit(BASE, 18, "1.0" if BASE_LINES[18] == "1" else "-1.0"),
    "side with blanks": edit(BASE, 16, f" {BASE_LINES[16]} "),
    "a probability longer than 16 characters": edit(BASE, 17, BASE_LINES[17].replace(
        " 0 ", " 0.00000000000000000 ", 1)),
}

MALFORMED = {
    "empty": "",
    "blank": "\n \n",
    "truncated": "\n".join(BASE_LINES[:30]),
    "a plane line too short": edit(BASE, 3, BASE_LINES[3][:-1]),
    "a plane line too long": edit(BASE, 22, BASE_LINES[22] + "0"),
    "a bad hex digit": edit(BASE, 5, "g" + BASE_LINES[5][1:]),
    "a last digit over 1": edit(BASE, 6, BASE_LINES[6][:-1] + "2"),
    "a side of 2": edit(BASE, 16, "2"),
    "an outcome of 0": edit(BASE, 18, "0"),
    "an outcome of 11": edit(BASE, 18, "11"),
    "an outcome of --1": edit(BASE, 18, "--1"),
    "one probability too many": edit(BASE, 19 + 17, BASE_LINES[19 + 17] + " 0"),
    "one probability too few": edit(BASE, 19 + 17, BASE_LINES[19 + 17].rsplit(" ", 1)[0]),
    "no probabilities": edit(BASE, 17, ""),
    "a negative probability": edit(BASE, 17, "-0.5" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "nan": edit(BASE, 17, "nan" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "inf": edit(BASE, 17, "inf" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "a number with two points": edit(BASE, 17, "0.2.5" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "a lone e": edit(BASE, 17, "e" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "an overflowing number": edit(BASE, 17, "1e999" + BASE_LINES[17][BASE_LINES[17].index(" "):]),
    "81 probabilities everywhere": "\n".join(line.rsplit(" ", 1)[0] if i % 19 == 17 else line
                                             for i, line in enumerate(BASE_LINES)),
    "a blank line inside": BASE.replace("\n", "\n\n", 1),
    "non-ASCII": edit(BASE, 18, "−1"),
}


@pytest.mark.parametrize("name", sorted(ODD_BUT_VALID))
def test_valid_odd_spellings_fall_back_and_read_the_same(name):
    text = ODD_BUT_VALID[name]
    assert _parse_lz_chunk_whole(text, "t.gz") is None
    assert assert_same_both_ways(text)[0] != "error"


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_every_malformed_chunk_gets_the_line_by_line_error(name):
    text = MALFORMED[name]
    assert _parse_lz_chunk_whole(text, "t.gz") is None
    assert assert_same_both_ways(text)[0] == "error"


def test_random_corruptions_read_the_same_both_ways():
    rng = random.Random(12)
    base = leela_zero_text(records(4, seed=7))
    alphabet = "01afgAF.-e \n\t"
    whole = 0
    for _ in range(600):
        text = "".join(corrupted(base, rng, alphabet, rng.randrange(1, 3)))
        whole += _parse_lz_chunk_whole(text, "t.gz") is not None
        assert_same_both_ways(text)
    assert 20 < whole < 580  # both readers were exercised
