"""Many different valid self-play uploads made from one real game, for load tests and the benchmark.

The server counts each game once (the same moves under any seed, by any client, are refused
after the first: :func:`zero9.distributed.validation.game_digest`), so a load of thousands of
uploads needs thousands of different games, and playing them would take longer than the load.

Vocabulary:

- **base game**: a real self-play upload (SGF and Leela Zero chunk) of a game that ended by two
  passes or at its move cap, with no resignation.
- **variant**: the base game's first ``t`` moves, then a few random legal moves, then two passes:
  a different, complete, legal game, scored as the server scores it. Its chunk reuses the base
  chunk's records for the shared moves (only the outcome line may change with the winner) and
  writes the new moves' records with all of the policy on the move played; its SGF is written
  afresh. Every variant passes every check of the server (nothing is faked but the search).
"""

from __future__ import annotations

import gzip
import random
import threading

import numpy as np

from zero9.games import BLACK, Game, Position
from zero9.games.sgf import parse_sgf, write_sgf
from zero9.nn.chunks import LZ_STORED_PLANES, ChunkData, lz_chunk_text
from zero9.nn.planes_fast import game_stone_planes

LINES_PER_RECORD = LZ_STORED_PLANES + 3  # planes, side to move, policy, outcome
TAIL_MOVES = (4, 12)  # random moves after the shared part: at least, at most


class Variants:
    """Different valid uploads from one base game (see the module docstring)."""

    def __init__(self, game: Game, sgf_gz: bytes, chunk_gz: bytes, seed: int = 0):
        self.game, self.rng = game, random.Random(seed)
        self.made: set[tuple] = set()  # the move sequences made so far: each variant is new
        self.lock = threading.Lock()  # one instance serves many threads
        record = parse_sgf(gzip.decompress(sgf_gz))
        self.moves = list(record.moves)
        self.positions: list[Position] = [game.new_position()]
        for _, action in self.moves:
            self.positions.append(self.positions[-1].play(action))
        lines = gzip.decompress(chunk_gz).decode("ascii").splitlines()
        self.records = ["\n".join(lines[i:i + LINES_PER_RECORD - 1])
                        for i in range(0, len(lines), LINES_PER_RECORD)]  # without the outcome line
        # the shared part may end before any move after which the game is already over
        self.cut_points = [t for t in range(max(1, len(self.moves) - 40), len(self.moves) - 2)
                           if not self.positions[t].is_terminal()]
        if len(self.records) != len(self.moves) or not self.cut_points:
            raise ValueError("the base game must be a finished game with one chunk record per move")

    def make(self) -> tuple[bytes, bytes, dict[str, str]]:
        """A new variant: (sgf gzip'd, chunk gzip'd, the form fields ``movescount`` and ``winnercolor``)."""
        with self.lock:
            while True:
                t, moves, positions = self._moves()
                if tuple(moves) not in self.made:
                    self.made.add(tuple(moves))
                    break
        return self._files(t, moves, positions)

    def _moves(self) -> tuple[int, list[tuple[int, int]], list[Position]]:
        game, rng = self.game, self.rng
        t = rng.choice(self.cut_points)
        positions, moves = self.positions[:t + 1], list(self.moves[:t])
        for _ in range(rng.randint(*TAIL_MOVES)):
            position = positions[-1]
            if position.is_terminal():
                break
            legal = [a for a in position.legal_moves() if a != game.pass_action]
            action = rng.choice(legal) if legal else game.pass_action
            moves.append((position.to_play, action))
            positions.append(position.play(action))
        while not positions[-1].is_terminal():  # then two passes (or the move cap) end it
            moves.append((positions[-1].to_play, game.pass_action))
            positions.append(positions[-1].play(game.pass_action))
        return t, moves, positions

    def _files(self, t: int, moves: list[tuple[int, int]], positions: list[Position]
               ) -> tuple[bytes, bytes, dict[str, str]]:
        game = self.game
        final, played = positions[-1], positions[:-1]
        winner = final.winner()
        tail = played[t:]
        planes = game_stone_planes(played)[t:]
        to_play = np.array([p.to_play for p in tail], np.int8)
        black = np.broadcast_to((to_play == BLACK)[:, None, None, None], planes[:, :1].shape)
        full = np.concatenate([planes, black, ~black], axis=1).astype(np.uint8)
        policy = np.zeros((len(tail), game.num_actions), np.float32)
        policy[np.arange(len(tail)), [a for _, a in moves[t:]]] = 1.0
        value = np.where(to_play == winner, 1.0, -1.0).astype(np.float32)
        shared = "".join(f"{record}\n{'1' if p.to_play == winner else '-1'}\n"
                         for record, p in zip(self.records[:t], played[:t], strict=True))
        chunk = shared + lz_chunk_text(ChunkData(full, to_play, policy, value))
        sgf = write_sgf(game, moves, final.result_string())
        fields = {"movescount": str(len(moves)), "winnercolor": "black" if winner == BLACK else "white"}
        return (gzip.compress(sgf.encode(), compresslevel=1, mtime=0),
                gzip.compress(chunk.encode(), compresslevel=1, mtime=0), fields)
