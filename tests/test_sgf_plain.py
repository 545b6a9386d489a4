"""The plain-record SGF reader against sgfmill's whole reading: the same record, or the same error.

``parse_sgf`` reads a plain record (one game tree, no variations, one move per node after the
root) with a regular expression and leaves the rest to sgfmill. These tests read a corpus both
ways: the repo's SGF files, generated games of every size, hand-made records that must fall back
(variations, comments, odd syntax) and random corruptions of a plain record.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers import corrupted

from zero9.games import make_game
from zero9.games.sgf import _parse_plain, _parse_whole, parse_sgf, write_sgf

pytest.importorskip("sgfmill")

ROOT = Path(__file__).resolve().parents[1]


def outcome(read, raw: bytes):
    """What a reader makes of ``raw``: the record, or the error's type and message."""
    try:
        return read(raw)
    except Exception as e:  # any error: the two ways must raise the same
        return type(e).__name__, str(e)


def assert_same_as_sgfmill(raw: bytes) -> None:
    assert outcome(parse_sgf, raw) == outcome(_parse_whole, raw), raw[:300]


def random_game_sgf(game, rng: random.Random, moves: int, **properties) -> bytes:
    """SGF of a random legal game (passes included for Go) of at most ``moves`` moves."""
    position, played = game.new_position(), []
    while len(played) < moves and not position.is_terminal():
        legal = list(position.legal_actions())
        action = rng.choice(legal)
        played.append(action)
        position = position.play(action)
    return write_sgf(game, played, "B+R" if rng.random() < 0.5 else "W+3.5", properties=properties).encode()


def test_every_sgf_in_the_repo_reads_the_same_and_plainly():
    files = sorted(ROOT.glob("docs/**/*.sgf")) + sorted(ROOT.glob("tests/data/*.sgf"))
    assert len(files) >= 20
    for path in files[::7]:  # a seventh of the 2,000 files: every kind of run they come from
        raw = path.read_bytes()
        if not path.name.endswith("-review.sgf"):  # a reviewed game holds its better lines as variations
            assert _parse_plain(raw) is not None, path  # written by zero9: the plain reader takes them
        assert parse_sgf(raw) == _parse_whole(raw), path


@pytest.mark.parametrize("name,size", [("go", 5), ("go", 9), ("go", 13), ("go", 19), ("gomoku", 9),
                                       ("gomoku", 15)])
def test_generated_games_read_plainly_and_the_same(name, size):
    game, rng = make_game(name, size), random.Random(size)
    tricky = {"C": 'a comment with ;B[aa] and ] and \\ in it', "GN": "(;W[bb])", "PB": "Ünïcode"}
    for i in range(6):
        raw = random_game_sgf(game, rng, moves=rng.randrange(0, 3 * size * size), **(tricky if i % 2 else {}))
        record = _parse_plain(raw)
        assert record is not None, raw[:200]
        assert record == _parse_whole(raw)
        assert parse_sgf(raw.decode()) == record  # text in, as bytes


PLAIN = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee];W[cc];B[];W[tt];B[gc])"

FALLBACK_CASES = {
    "a variation": b"(;GM[1]SZ[9];B[ee](;W[cc])(;W[dd]))",
    "a move with a comment": b"(;GM[1]SZ[9];B[ee]C[good];W[cc])",
    "a comment-only node": b"(;GM[1]SZ[9];B[ee];C[hm];W[cc])",
    "an empty node": b"(;GM[1]SZ[9];B[ee];;W[cc])",
    "B and W in one node": b"(;GM[1]SZ[9];B[ee]W[cc])",
    "two values for a move": b"(;GM[1]SZ[9];B[ee][ff])",
    "a lower-case property name": b"(;GaMe[1]SZ[9];B[ee])",
    "junk before the game": b"junk (;GM[1]SZ[9];B[ee])",
    "upper-case point": b"(;GM[1]SZ[9];B[EE])",
    "setup in a node": b"(;GM[1]SZ[9];B[ee];AB[aa];W[cc])",
    "a one-letter point": b"(;GM[1]SZ[9];B[e])",
    "a point off the board": b"(;GM[1]SZ[9];B[jj])",
    "tt on 21x21 is a point": b"(;GM[1]SZ[21];B[tt];W[])",
    "a Gomoku pass": b"(;GM[4]SZ[9];B[ee];W[])",
    "a Gomoku tt": b"(;GM[4]SZ[9];B[tt])",
    "AE in the root": b"(;GM[1]SZ[9]AE[aa];B[ee])",
    "a bad size": b"(;GM[1]SZ[x];B[ee])",
    "a bad komi": b"(;GM[1]SZ[9]KM[lots];B[ee])",
    "an unknown game": b"(;GM[7]SZ[9];B[ee])",
    "never closed": b"(;GM[1]SZ[9];B[ee];W[cc]",
    "an unclosed value": b"(;GM[1]SZ[9]C[oops \\];B[ee)",
    "no game": b"just text",
    "empty": b"",
    "a 65-letter property name": b"(;" + b"A" * 65 + b"[1];B[ee])",
    "an unknown encoding": b"(;GM[1]CA[no-such-code]SZ[9];B[ee])",
}

PLAIN_CASES = {
    "plain": PLAIN,
    "blanks everywhere": b" \n( ;GM [1]\tSZ[9] ;\nB [ee] ;W\r\n[cc] ) trailing junk (;B[aa])",
    "escapes in the root": b"(;GM[1]SZ[9]C[a \\] b \\\\ c ;B[aa\\] \\\n end]GN[x:y];B[ee])",
    "a composed AP": b"(;GM[1]SZ[9]AP[zero9:0.1];B[ee])",
    "setup stones": b"(;GM[1]SZ[9]AB[aa][bb]AW[cc];W[ee])",
    "no moves": b"(;GM[1]SZ[9]RE[0])",
    "no properties at all": b"(;)",
    "tt on 19x19 is a pass": b"(;GM[1]SZ[19];B[tt];W[aa])",
    "utf-8 names": "(;GM[1]CA[UTF-8]SZ[9]PB[élève];B[ee])".encode(),
    "latin-1 without CA": b"(;GM[1]SZ[9]PB[\xe9l\xe8ve];B[ee])",
    "a comment holding a move": b"(;GM[1]SZ[9]C[oops;B[ee])",
    "a repeated root property": b"(;GM[1]SZ[9]C[a]C[b];B[ee])",
}


@pytest.mark.parametrize("name", sorted(FALLBACK_CASES))
def test_records_the_plain_reader_leaves_to_sgfmill(name):
    raw = FALLBACK_CASES[name]
    assert _parse_plain(raw) is None
    assert_same_as_sgfmill(raw)


@pytest.mark.parametrize("name", sorted(PLAIN_CASES))
def test_plain_records_with_odd_but_valid_syntax(name):
    raw = PLAIN_CASES[name]
    assert _parse_plain(raw) is not None
    assert parse_sgf(raw) == _parse_whole(raw)


def test_random_corruptions_read_the_same_both_ways():
    rng = random.Random(21)
    base = random_game_sgf(make_game("go", 9), rng, 60, C="x ;B[aa] \\] y")
    alphabet = b"()[];\\BWAEaesz9 \n:"
    plain = 0
    for _ in range(600):
        raw = bytearray(corrupted(base, rng, alphabet, rng.randrange(1, 4)))
        plain += _parse_plain(bytes(raw)) is not None
        assert_same_as_sgfmill(bytes(raw))
    assert 20 < plain < 580  # both ways were exercised
