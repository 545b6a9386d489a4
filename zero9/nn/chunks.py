"""Training data on disk: Leela Zero's text chunks and zero9's npz shards, behind one reader.

Vocabulary:

- **position record**: one training example: input ``planes`` ``[C, N, N]``, the
  side to move ``to_play`` (``BLACK``/``WHITE``), the search ``policy`` over all
  actions (visit shares, summing to 1), the game's ``value`` for the side to move
  (+1 win, -1 loss, 0 draw) and, optionally, an ``ownership`` target.
- **ownership target**: int8 per point, from the side to move's view: +1 the point
  ended as its area, -1 the opponent's, 0 neither (see :func:`ownership_target`).
- **chunk** (``.gz``, Leela Zero / leelaz-ninenine v1 text): gzip'd ASCII, 19 lines
  per position: 16 lines for input planes 0-15, each the first ``4*(N*N // 4)``
  bits as hex digits (MSB first, 4 bits per digit) then the remaining ``N*N % 4``
  bits as one ``0``/``1`` digit each (for 9x9: 20 hex digits + 1 digit); 1 line side
  to move (``0`` black, ``1`` white); 1 line of ``N*N + 1`` probabilities (pass
  last); 1 line outcome ``1`` / ``-1`` for the side to move. Planes 16 and 17 are
  not stored: reading rebuilds them from the side to move (16 all ones when black
  is to move, 17 when white is). Go only, 18 planes, no draws, no ownership.
- **shard** (``.npz``, zero9's native format): a compressed numpy archive for
  everything the text chunk cannot hold (Gomoku, draws, ownership). Arrays:
  ``planes_bits`` uint8 (``np.packbits`` of each position's planes flattened
  ``C*N*N``, for 0/1 planes) with ``planes_shape`` int64 ``[P, C, N, N]``, *or*
  ``planes`` float32 ``[P, C, N, N]`` when some plane is not 0/1; ``to_play`` int8
  ``[P]``; ``policy`` float32 ``[P, A]``; ``value`` float32 ``[P]``; optional
  ``ownership`` int8 ``[P, N*N]``; ``meta`` a 0-d string holding JSON with
  ``format`` ``"zero9-shard"``, ``version`` 1, ``game`` (``game.to_dict()``) and
  whatever the writer added (the net hash, ...).
- **reader interface**: :func:`read_chunk` reads either format into a
  :class:`ChunkData`; :func:`iter_chunks` walks files and folders, reporting a bad
  file by name (``warnings`` and ``logging``) and skipping it; :func:`load_chunks`
  concatenates what it yields.

All writes are atomic (temporary file, then rename): a reader never sees half a file.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zero9.games import BLACK, WHITE
from zero9.util.files import atomic_write_bytes, read_text_file

log = logging.getLogger(__name__)

LZ_LINES = 19  # per position
LZ_STORED_PLANES = 16
LZ_PLANES = 18
SHARD_FORMAT = "zero9-shard"
SHARD_VERSION = 1
CHUNK_SUFFIXES = (".npz", ".gz")
TMP_PREFIX = ".tmp-"  # zero9.learn.rundir's temporary files: never read
MAX_CHUNK_BYTES = 512 << 20  # a chunk file, and its text unpacked (a 19x19 game is ~2 MB of text)

_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX_VALUE[_c] = _i
    _HEX_VALUE[ord(chr(_c).upper())] = _i
_NIBBLE_WEIGHTS = np.array([8, 4, 2, 1], dtype=np.uint8)
_NIBBLE_SHIFTS = np.array([3, 2, 1, 0], dtype=np.uint8)
PathArg = str | os.PathLike | Iterable[str | os.PathLike]


@dataclass
class ChunkData:
    """Position records as arrays (see the module docstring). Also readable as a mapping: ``d['planes']``."""

    planes: np.ndarray  # [P, C, N, N] uint8 (0/1 planes) or float32
    to_play: np.ndarray  # [P] int8, BLACK or WHITE
    policy: np.ndarray  # [P, A] float32
    value: np.ndarray  # [P] float32
    ownership: np.ndarray | None = None  # [P, N*N] int8, side to move's view
    game: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.planes)
        shapes = {"to_play": len(self.to_play), "policy": len(self.policy), "value": len(self.value)}
        if self.ownership is not None:
            shapes["ownership"] = len(self.ownership)
        bad = {k: v for k, v in shapes.items() if v != n}
        if self.planes.ndim != 4 or bad:
            raise ValueError(f"chunk arrays disagree: planes {self.planes.shape}, lengths {shapes}")

    def __len__(self) -> int:
        return len(self.planes)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    @property
    def size(self) -> int:
        return self.planes.shape[-1]

    def take(self, idx: np.ndarray) -> ChunkData:
        """The positions at ``idx`` (an index array), the rest of the record unchanged."""
        own = None if self.ownership is None else self.ownership[idx]
        return ChunkData(self.planes[idx], self.to_play[idx], self.policy[idx], self.value[idx], own,
                         self.game, self.meta, self.sources)

    @classmethod
    def concatenate(cls, parts: list[ChunkData]) -> ChunkData:
        """One ChunkData from many; ownership is kept only if every part has it."""
        if not parts:
            raise ValueError("no chunk data to concatenate")
        shapes = {(p.planes.shape[1:], p.policy.shape[1]) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"chunks of different shapes cannot be mixed: {sorted(shapes)}")
        planes_dtype = np.uint8 if all(p.planes.dtype == np.uint8 for p in parts) else np.float32
        own = all(p.ownership is not None for p in parts)
        return cls(
            planes=np.concatenate([p.planes.astype(planes_dtype, copy=False) for p in parts]),
            to_play=np.concatenate([p.to_play for p in parts]),
            policy=np.concatenate([p.policy for p in parts]),
            value=np.concatenate([p.value for p in parts]),
            ownership=np.concatenate([p.ownership for p in parts]) if own else None,
            game=dict(parts[0].game),
            meta={},
            sources=[s for p in parts for s in p.sources],
        )


def ownership_target(owners: np.ndarray, to_play: np.ndarray | int) -> np.ndarray:
    """Per-point owner colours (BLACK/WHITE/EMPTY, e.g. ``GoPosition.ownership()``) -> int8 {-1, 0, +1}.

    +1 where the side to move owns the point. Works on one position ``[N*N]`` or a batch ``[P, N*N]``.
    """
    owners = np.asarray(owners)
    me = np.asarray(to_play)
    if owners.ndim == 2:
        me = me.reshape(-1, 1)
    them = 3 - me
    return ((owners == me).astype(np.int8) - (owners == them).astype(np.int8)).astype(np.int8)


# --- the one reader ---------------------------------------------------------------------


def read_chunk(path: str | os.PathLike, game: Any = None) -> ChunkData:
    """Read a ``.npz`` shard or a Leela Zero text chunk (any other name). ValueError names a bad file.

    ``game`` (a Game or ``game.to_dict()``), when given, must match the data's board and actions.
    """
    path = Path(path)
    data = read_npz_shard(path) if path.suffix == ".npz" else read_lz_chunk(path)
    if game is not None:
        _check_game(data, game, path)
    return data


def iter_chunks(paths: PathArg, game: Any = None) -> Iterator[ChunkData]:
    """Read every chunk in ``paths`` (files, or folders searched recursively in name order).

    A file that cannot be read is reported by name (a warning and a log line) and skipped.
    """
    for path in chunk_files(paths):
        try:
            yield read_chunk(path, game)
        except BAD_CHUNK_ERRORS as e:
            warn_bad_chunk(path, e)


BAD_CHUNK_ERRORS = (ValueError, OSError, EOFError)  # what reading a damaged or unreadable chunk raises


def warn_bad_chunk(path: str | os.PathLike, error: BaseException) -> None:
    """Report a chunk that is being skipped, by name and reason (one log line: a Python warning beside
    it printed the same line twice)."""
    log.warning("skipping bad training data file %s: %s", path, error)


def load_chunks(paths: PathArg, game: Any = None) -> ChunkData:
    """All readable chunks in ``paths`` as one ChunkData (bad files reported and skipped)."""
    parts = list(iter_chunks(paths, game))
    if not parts:
        raise ValueError(f"no readable training data in {paths}")
    return ChunkData.concatenate(parts)


def chunk_files(paths: PathArg) -> list[Path]:
    """Chunk files named by ``paths``: files as given, folders searched for ``.npz``/``.gz``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found.extend(sorted(f for f in p.rglob("*") if f.suffix in CHUNK_SUFFIXES and f.is_file()
                                and not f.name.startswith(TMP_PREFIX)))
        else:
            found.append(p)
    return found


def _check_game(data: ChunkData, game: Any, path: Path) -> None:
    info = game if isinstance(game, dict) else game.to_dict()
    size = int(info.get("size", data.size))
    name = info.get("game")
    if data.size != size:
        raise ValueError(f"training data file {path} is for {data.size}x{data.size}, not {size}x{size}")
    if data.game.get("game") and name and data.game["game"] != name:
        raise ValueError(f"training data file {path} is {data.game['game']} data, not {name}")
    actions = size * size + (1 if name == "go" else 0)
    if name and data.policy.shape[1] != actions:
        raise ValueError(f"training data file {path}: policy has {data.policy.shape[1]} actions, {name} "
                         f"{size}x{size} has {actions}")


# --- Leela Zero text chunks -------------------------------------------------------------


def read_lz_chunk(path: str | os.PathLike) -> ChunkData:
    """Read a leelaz(-ninenine) v1 text chunk (gzip'd or plain) into 18-plane records."""
    return parse_lz_chunk(read_text_file(path, MAX_CHUNK_BYTES, MAX_CHUNK_BYTES, "training chunk"), str(path))


def parse_lz_chunk(text: str, name: str = "<text>") -> ChunkData:
    """Parse v1 chunk text; ``name`` is used in error messages (with 1-based line numbers).

    A well-formed chunk is read by :func:`_parse_lz_chunk_whole` (numpy on the whole text, no
    per-line Python); anything it does not accept goes to :func:`_parse_lz_chunk_lines`, which
    reads the same format line by line and names the first thing wrong, so both give the same
    records and every error is the line-by-line reader's.
    """
    fast = _parse_lz_chunk_whole(text, name)
    return fast if fast is not None else _parse_lz_chunk_lines(text, name)


def _lz_chunk_data(planes: np.ndarray, to_play: np.ndarray, policy: np.ndarray, value: np.ndarray,
                   name: str) -> ChunkData:
    """The records, planes 16 and 17 rebuilt from the side to move."""
    records, size = len(planes), planes.shape[-1]
    full = np.zeros((records, LZ_PLANES, size, size), dtype=np.uint8)
    full[:, :LZ_STORED_PLANES] = planes
    full[to_play == BLACK, 16] = 1
    full[to_play == WHITE, 17] = 1
    game = {"game": "go", "size": size, "komi": 7.5}
    return ChunkData(full, to_play, policy, value, None, game, {"format": "lz-v1"}, [name])


# The whole-text reader's alphabet: hex digits, numbers, spaces and newlines. Any other byte (a
# tab, a carriage return, "nan") sends the chunk to the line-by-line reader.
_WHOLE_TEXT_BYTES = b"0123456789abcdefABCDEF.eE+- \n"
_POLICY_BYTES = b"0123456789.eE+- \n"
_TOKEN_WIDTH = 16  # longest probability the whole-text reader takes ("{:.9g}" writes at most 15)


def _parse_lz_chunk_whole(text: str, name: str) -> ChunkData | None:
    """A well-formed chunk's records, read with numpy on the whole text; None when the text is
    anything else (then :func:`_parse_lz_chunk_lines` reads it and names what is wrong).

    Lines are split at ``\\n`` only, which is what ``splitlines`` does on this alphabet. Accepted
    here are only: plane lines of exactly the board's width in hex and 0/1 digits, side lines
    ``0``/``1``, outcome lines ``1``/``-1``, and policy lines of the same number of finite,
    non-negative numbers, each distinct number converted once by Python's ``float``.
    """
    if not text.isascii():
        return None
    raw = text.encode("ascii").rstrip(b"\n")
    if not raw or raw.translate(None, _WHOLE_TEXT_BYTES):
        return None
    chars = np.frombuffer(raw, dtype=np.uint8)
    ends = np.append(np.flatnonzero(chars == ord("\n")), len(raw))  # each line's end (exclusive)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if len(ends) % LZ_LINES:
        return None
    records = len(ends) // LZ_LINES
    line = np.arange(records)[:, None] * LZ_LINES  # each record's first line
    policy = _whole_text_policies(raw, starts[17::LZ_LINES], ends[17::LZ_LINES])
    if policy is None:
        return None
    try:
        size = _size_from_actions(policy.shape[1], name)
    except ValueError:
        return None
    hex_digits, bit_digits = _plane_line_layout(size)
    width = hex_digits + bit_digits
    plane_lines = (line + np.arange(LZ_STORED_PLANES)).ravel()
    if (ends[plane_lines] - starts[plane_lines] != width).any():
        return None
    # so each record's 16 plane lines are one block of 16 * (width + 1) bytes, newlines included
    block = np.lib.stride_tricks.sliding_window_view(chars, LZ_STORED_PLANES * (width + 1) - 1)
    values = _HEX_VALUE[block[starts[line[:, 0]]]]
    values = np.pad(values, ((0, 0), (0, 1))).reshape(-1, width + 1)[:, :width]
    if (values[:, :hex_digits] == 255).any() or (values[:, hex_digits:] > 1).any():
        return None
    planes = np.concatenate([_nibble_bits(values[:, :hex_digits]), values[:, hex_digits:]], axis=1)
    planes = planes.reshape(records, LZ_STORED_PLANES, size, size)
    side, outcome = line[:, 0] + 16, line[:, 0] + 18
    side_char = chars[starts[side]]
    if (ends[side] - starts[side] != 1).any() or ((side_char != ord("0")) & (side_char != ord("1"))).any():
        return None
    outcome_length = ends[outcome] - starts[outcome]
    last = chars[ends[outcome] - 1]
    won = (outcome_length == 1) & (last == ord("1"))
    lost = (outcome_length == 2) & (chars[starts[outcome]] == ord("-")) & (last == ord("1"))
    if not (won | lost).all():
        return None
    to_play = np.where(side_char == ord("0"), BLACK, WHITE).astype(np.int8)
    return _lz_chunk_data(planes, to_play, policy, np.where(won, 1.0, -1.0).astype(np.float32), name)


def _whole_text_policies(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The policy lines ``raw[starts[i]:ends[i]]`` as ``[records, actions]``, or None unless every
    line holds the same number of finite, non-negative numbers. Tokens are found with numpy; the
    zeros (most of a policy) are recognised by their bytes and each other distinct token is
    converted once, by ``float`` as the line-by-line reader does."""
    text = b"\n".join(raw[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)) + b"\n"
    if text.translate(None, _POLICY_BYTES):
        return None
    chars = np.frombuffer(text + bytes(_TOKEN_WIDTH), dtype=np.uint8)
    blank = (chars[:len(text)] == ord(" ")) | (chars[:len(text)] == ord("\n"))
    edges = np.diff(blank.view(np.int8), prepend=np.int8(1))  # -1: a token starts, +1: one ended
    token_starts, token_ends = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
    newlines = np.flatnonzero(chars[:len(text)] == ord("\n"))
    per_line = np.diff(np.searchsorted(token_starts, newlines), prepend=0)  # tokens on each line
    actions = int(per_line[0])
    if actions == 0 or (per_line != actions).any():
        return None
    lengths = token_ends - token_starts
    if lengths.max() > _TOKEN_WIDTH:
        return None
    zero = (lengths == 1) & (chars[token_starts] == ord("0"))
    values = np.zeros(len(token_starts), dtype=np.float32)
    others = np.flatnonzero(~zero)
    if len(others):
        window = chars[token_starts[others, None] + np.arange(_TOKEN_WIDTH)]
        window[np.arange(_TOKEN_WIDTH) >= lengths[others, None]] = 0
        distinct, index = np.unique(window.view(f"S{_TOKEN_WIDTH}").ravel(), return_inverse=True)
        try:
            numbers = np.array([float(token) for token in distinct.tolist()], dtype=np.float32)
        except ValueError:
            return None
        values[others] = numbers[index]
    if not np.isfinite(values).all() or (values < 0).any():
        return None
    return values.reshape(len(starts), actions)


def _nibble_bits(nibbles: np.ndarray) -> np.ndarray:
    """Hex digit values ``[L, D]`` (0-15) -> their bits, most significant first, ``[L, 4 * D]``."""
    if nibbles.shape[1] % 2:
        nibbles = np.concatenate([nibbles, np.zeros((len(nibbles), 1), np.uint8)], axis=1)
        return _nibble_bits(nibbles)[:, :-4]
    return np.unpackbits((nibbles[:, 0::2] << 4) | nibbles[:, 1::2], axis=1)


def _parse_lz_chunk_lines(text: str, name: str) -> ChunkData:
    """The line-by-line reader: the reference for :func:`_parse_lz_chunk_whole`, and the one that
    names what is wrong in a bad chunk."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise ValueError(f"training chunk {name} is empty")
    if len(lines) % LZ_LINES:
        raise ValueError(f"training chunk {name}: {len(lines)} lines is not a multiple of {LZ_LINES}; "
                         f"truncated in the position from line {len(lines) // LZ_LINES * LZ_LINES + 1}")
    records = len(lines) // LZ_LINES
    actions = len(lines[17].split())
    size = _size_from_actions(actions, name)
    planes = _decode_planes(lines, records, size, name)
    to_play = _parse_column(lines, 16, lambda line, lineno: _parse_side(line, name, lineno), np.int8)
    policy = _parse_policies(lines, actions, name)
    value = _parse_column(lines, 18, lambda line, lineno: _parse_outcome(line, name, lineno), np.float32)
    return _lz_chunk_data(planes, to_play, policy, value, name)


def _size_from_actions(actions: int, name: str) -> int:
    size = int(round((actions - 1) ** 0.5)) if actions > 1 else 0
    if size < 2 or size * size + 1 != actions:
        raise ValueError(f"training chunk {name}, line 18: {actions} probabilities is not N*N+1 for a board")
    return size


def _plane_line_layout(size: int) -> tuple[int, int]:
    """(hex digits, single-bit digits) of one plane line."""
    points = size * size
    return points // 4, points % 4


def _decode_planes(lines: list[str], records: int, size: int, name: str) -> np.ndarray:
    hex_digits, bit_digits = _plane_line_layout(size)
    width = hex_digits + bit_digits
    plane_lines = list(itertools.chain.from_iterable(lines[r * LZ_LINES:r * LZ_LINES + LZ_STORED_PLANES]
                                                     for r in range(records)))

    def line_number(k: int) -> int:  # 1-based, in the file, of plane line k
        return k // LZ_STORED_PLANES * LZ_LINES + k % LZ_STORED_PLANES + 1

    if any(len(line) != width for line in set(plane_lines)):
        k = next(k for k, line in enumerate(plane_lines) if len(line) != width)
        raise ValueError(f"training chunk {name}, line {line_number(k)}: plane line has "
                         f"{len(plane_lines[k])} characters, {size}x{size} needs {width}")
    chars = np.frombuffer("".join(plane_lines).encode("ascii"), dtype=np.uint8).reshape(-1, width)
    values = _HEX_VALUE[chars]
    bad = (values[:, :hex_digits] == 255).any(axis=1) | (values[:, hex_digits:] > 1).any(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"training chunk {name}, line {line_number(k)}: bad plane digits {plane_lines[k]!r}")
    bits = ((values[:, :hex_digits, None] >> _NIBBLE_SHIFTS) & 1).reshape(len(plane_lines), -1)
    bits = np.concatenate([bits, values[:, hex_digits:]], axis=1)
    return bits.reshape(records, LZ_STORED_PLANES, size, size)


def _parse_column(lines: list[str], offset: int, parse, dtype) -> np.ndarray:
    """Line ``offset`` of every position parsed by ``parse(line, lineno)``, each distinct text once
    (a chunk's sides and outcomes are a handful of texts repeated)."""
    column = lines[offset::LZ_LINES]
    first: dict[str, int] = {}
    for i, line in enumerate(column):
        first.setdefault(line, i)
    value = {line: parse(line, i * LZ_LINES + offset + 1) for line, i in first.items()}
    return np.array([value[line] for line in column], dtype=dtype)


def _parse_policies(lines: list[str], actions: int, name: str) -> np.ndarray:
    """Every position's probabilities, ``[P, actions]``. Visit shares repeat (most are 0), so each
    distinct number is converted once; a bad line is found and named by :func:`_parse_probs`."""
    rows = [line.split() for line in lines[17::LZ_LINES]]
    tokens = list(itertools.chain.from_iterable(rows))
    distinct = dict.fromkeys(tokens)
    try:
        values = np.array(list(distinct), dtype=np.float32)
    except ValueError:
        values = None
    if values is not None and len(tokens) == len(rows) * actions and all(len(r) == actions for r in rows):
        for i, token in enumerate(distinct):
            distinct[token] = i
        index = np.fromiter(map(distinct.__getitem__, tokens), dtype=np.intp, count=len(tokens))
        policy = values[index].reshape(len(rows), actions)
        if np.isfinite(policy).all() and not (policy < 0).any():
            return policy
    for r, row in enumerate(rows):  # something is wrong: the line-by-line parse names it
        _parse_probs(" ".join(row), actions, name, r * LZ_LINES + 18)
    raise ValueError(f"training chunk {name}: unreadable probabilities")  # not reached: a line fails above


def _parse_side(line: str, name: str, lineno: int) -> int:
    t = line.strip()
    if t not in ("0", "1"):
        raise ValueError(f"training chunk {name}, line {lineno}: side to move {t[:20]!r}, expected 0 or 1")
    return BLACK if t == "0" else WHITE


def _parse_probs(line: str, actions: int, name: str, lineno: int) -> np.ndarray:
    tokens = line.split()
    if len(tokens) != actions:
        raise ValueError(f"training chunk {name}, line {lineno}: {len(tokens)} probabilities, "
                         f"expected {actions}")
    try:
        probs = np.array(tokens, dtype=np.float32)
    except ValueError as e:
        raise ValueError(f"training chunk {name}, line {lineno}: probabilities are not numbers ({e})") from e
    if not np.all(np.isfinite(probs)) or (probs < 0).any():
        raise ValueError(f"training chunk {name}, line {lineno}: probabilities hold NaN, "
                         "infinity or negatives")
    return probs


def _parse_outcome(line: str, name: str, lineno: int) -> float:
    try:
        value = float(line)
    except ValueError:
        value = float("nan")
    if value not in (1.0, -1.0):
        raise ValueError(f"training chunk {name}, line {lineno}: outcome {line.strip()[:20]!r}, "
                         "expected 1 or -1")
    return value


def write_lz_chunk(path: str | os.PathLike, data: ChunkData) -> None:
    """Write Go records as a gzip'd leelaz v1 text chunk, atomically.

    Draws, ownership and Gomoku do not fit the format: use :func:`write_npz_shard`.
    """

    atomic_write_bytes(path, gzip.compress(lz_chunk_text(data).encode("ascii"), compresslevel=6, mtime=0))


def lz_chunk_text(data: ChunkData) -> str:
    """The v1 text of ``data`` (see the module docstring)."""
    planes, size = data.planes, data.size
    if planes.shape[1] != LZ_PLANES or data.policy.shape[1] != size * size + 1:
        raise ValueError(f"Leela Zero chunks hold 18-plane Go records; got planes {planes.shape}, "
                         f"{data.policy.shape[1]} actions (write an npz shard instead)")
    if not np.all(np.isin(data.value, (1.0, -1.0))):
        raise ValueError("Leela Zero chunks hold outcomes +1/-1 only; draws need an npz shard")
    stored = np.asarray(planes[:, :LZ_STORED_PLANES])
    if not np.all((stored == 0) | (stored == 1)):
        raise ValueError("Leela Zero chunks hold 0/1 planes only")
    black = data.to_play == BLACK
    if not (np.all(planes[:, 16] == black[:, None, None]) and np.all(planes[:, 17] == ~black[:, None, None])):
        raise ValueError("planes 16/17 disagree with to_play: the chunk could not rebuild them")
    lines = _encode_planes(stored.astype(np.uint8), size)
    out: list[str] = []
    for r in range(len(data)):
        out.extend(lines[r * LZ_STORED_PLANES:(r + 1) * LZ_STORED_PLANES])
        out.append("0" if black[r] else "1")
        out.append(" ".join(map("{:.9g}".format, data.policy[r].tolist())))  # exact for float32
        out.append("1" if data.value[r] > 0 else "-1")
    return "\n".join(out) + "\n"


def _encode_planes(planes: np.ndarray, size: int) -> list[str]:
    hex_digits, _ = _plane_line_layout(size)
    bits = planes.reshape(-1, size * size)
    nibbles = bits[:, :4 * hex_digits].reshape(len(bits), hex_digits, 4) @ _NIBBLE_WEIGHTS
    single = (bits[:, 4 * hex_digits:] + ord("0")).astype(np.uint8)
    chars = np.concatenate([_HEX_DIGITS[nibbles], single], axis=1)
    width = chars.shape[1]
    blob = np.ascontiguousarray(chars).tobytes().decode("ascii")
    return [blob[i * width:(i + 1) * width] for i in range(len(bits))]


# --- zero9 npz shards ------------------------------------------------------------------


def write_npz_shard(path: str | os.PathLike, data: ChunkData, meta: dict[str, Any] | None = None) -> None:
    """Write ``data`` as a compressed npz shard, atomically. ``meta`` (JSON-able) is stored with it."""

    if not data.game:
        raise ValueError("an npz shard needs data.game (a game.to_dict())")
    info = {**data.meta, **(meta or {}), "format": SHARD_FORMAT, "version": SHARD_VERSION, "game": data.game}
    arrays: dict[str, np.ndarray] = {
        "to_play": np.asarray(data.to_play, dtype=np.int8),
        "policy": np.asarray(data.policy, dtype=np.float32),
        "value": np.asarray(data.value, dtype=np.float32),
        "meta": np.array(json.dumps(info, sort_keys=True)),
    }
    planes = np.asarray(data.planes)
    if np.all((planes == 0) | (planes == 1)):
        flat = planes.astype(np.uint8).reshape(len(planes), int(np.prod(planes.shape[1:])))  # 0 rows too
        arrays["planes_bits"] = np.packbits(flat, axis=1)
        arrays["planes_shape"] = np.array(planes.shape, dtype=np.int64)
    else:
        arrays["planes"] = planes.astype(np.float32)
    if data.ownership is not None:
        arrays["ownership"] = np.asarray(data.ownership, dtype=np.int8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as its allow_pickle
    atomic_write_bytes(path, buf.getvalue())


def read_npz_shard(path: str | os.PathLike) -> ChunkData:
    """Read a zero9 npz shard; ValueError naming the file when it is damaged or inconsistent."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except Exception as e:  # zip/zlib/EOF/format errors all mean a damaged file
        with open(path, "rb") as f:
            is_zip = f.read(4) == b"PK\x03\x04"
        # numpy takes a file that is no zip for a pickle and advises unsafe loading: say what it is instead
        reason = e if is_zip else "not a zip archive (an npz shard is one): empty, truncated or foreign"
        raise ValueError(f"training shard {path} is corrupt: {reason}") from e
    try:
        info = json.loads(str(arrays["meta"]))
        if info.get("format") != SHARD_FORMAT:
            raise ValueError(f"format tag {info.get('format')!r}")
        if "planes_bits" in arrays:
            shape = tuple(int(s) for s in arrays["planes_shape"])
            count = int(np.prod(shape[1:]))
            planes = np.unpackbits(arrays["planes_bits"], axis=1, count=count).reshape(shape)
        else:
            planes = arrays["planes"]
        game = info.pop("game")
        return ChunkData(planes, arrays["to_play"], arrays["policy"], arrays["value"],
                         arrays.get("ownership"), game, info, [str(path)])
    except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"training shard {path} is not a valid zero9 shard: {e}") from e
