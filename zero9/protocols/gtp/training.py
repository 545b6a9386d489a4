"""Training data from ``zero9 gtp``: Leela Zero's ``dump_training``, ``dump_supervised`` and ``autotrain``.

Each command is a thin call into the learn layer: the protocol checks the arguments and
names the files, :mod:`zero9.learn` writes the chunks and plays the games.

- ``dump_training WINNER FILE``: the positions this engine searched in this game (each
  ``genmove``'s visit shares) as Leela Zero chunk ``FILE.0.gz``.
- ``dump_supervised SGF FILE``: the games of an SGF collection (a regular file of at most
  :data:`zero9.learn.training.supervised.MAX_COLLECTION_BYTES`) as one-hot training chunk ``FILE.0.gz``.
- ``autotrain BASENAME GAMES`` (leelaz-ninenine's): GAMES self-play games with this
  engine's net and visits, chunks and SGFs under BASENAME/.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zero9.games import BLACK, WHITE
from zero9.games.sgf import split_collection
from zero9.learn.selfplay.pool import play_selfplay
from zero9.learn.training.supervised import MAX_COLLECTION_BYTES, game_chunk, game_positions
from zero9.nn import planes_fast
from zero9.nn.chunks import ChunkData, write_lz_chunk
from zero9.protocols.gtp.commands import CommandTable
from zero9.protocols.gtp.options import GTPFailure, int_value, nargs
from zero9.protocols.gtp.state import EngineState
from zero9.settings import SelfPlayConfig
from zero9.util.files import read_regular_file


class TrainingCommands:
    """``dump_training``, ``dump_supervised``, ``autotrain``."""

    def __init__(self, state: EngineState):
        self.state = state

    def commands(self) -> CommandTable:
        return {"dump_training": self.cmd_dump_training, "dump_supervised": self.cmd_dump_supervised,
                "autotrain": self.cmd_autotrain}

    def cmd_dump_training(self, args: list[str]) -> str:
        """Leela Zero's ``dump_training WINNER FILE``: this game's searched positions as ``FILE.0.gz``."""
        self.state.require_go("dump_training")
        nargs(args, 2, usage="dump_training b|w FILE")
        winner = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}.get(args[0].lower())
        if winner is None:
            raise GTPFailure(f"bad winner {args[0]!r}: expected b or w")
        if not self.state.training:
            raise GTPFailure("no training data: no genmove since the game started")
        positions = [p for p, _ in self.state.training]
        to_play = np.array([p.to_play for p in positions], dtype=np.int8)
        data = ChunkData(planes_fast.encode_batch(positions).astype(np.uint8), to_play,
                         np.stack([shares for _, shares in self.state.training]),
                         np.where(to_play == winner, 1.0, -1.0).astype(np.float32), None,
                         self.state.game.to_dict())
        return self._write_chunk(args[1], data)

    def cmd_dump_supervised(self, args: list[str]) -> str:
        """Leela Zero's ``dump_supervised SGF FILE``: the SGF's games as ``FILE.0.gz`` (one-hot policies)."""
        self.state.require_go("dump_supervised")
        nargs(args, 2, usage="dump_supervised SGF FILE")
        try:
            trees = split_collection(read_regular_file(args[0], MAX_COLLECTION_BYTES, "SGF file"))
        except ValueError as e:  # not a regular file, too large, unreadable: the message names it
            raise GTPFailure(str(e)) from None
        parts = []
        for tree in trees:
            parsed = game_positions(tree, self.state.game)
            if isinstance(parsed, str) or parsed[2] not in (BLACK, WHITE):
                continue  # Leela Zero also skips games it cannot use (wrong size, no winner)
            parts.append(game_chunk(*parsed, self.state.game))
        if not parts:
            n = self.state.game.size
            raise GTPFailure(f"no usable {n}x{n} game with a winner in {args[0]}")
        reply = self._write_chunk(args[1], ChunkData.concatenate(parts))
        self.state.say(f"Dumped {sum(len(p) for p in parts)} training positions.")
        return reply

    def _write_chunk(self, name: str, data: ChunkData) -> str:
        path = f"{name}.0.gz"  # Leela Zero's OutputChunker: BASENAME.<chunk number>.gz
        try:
            write_lz_chunk(path, data)
        except OSError as e:
            raise GTPFailure(f"cannot write {path}: {e.strerror}") from None
        return ""

    def cmd_autotrain(self, args: list[str]) -> str:
        """leelaz-ninenine's ``autotrain BASENAME N``: N self-play games, training data under BASENAME/."""
        nargs(args, 2, usage="autotrain BASENAME GAMES")
        games = int_value(args[1], "games", 1)
        if self.state.source.path is None:
            raise GTPFailure("autotrain needs a net file (-w FILE): self-play workers load the net from it")
        config = SelfPlayConfig(seed=self.state.options.seed)
        if self.state.options.visits:
            config.visits = self.state.options.visits
        out = Path(args[0])
        device = self.state.options.device if self.state.options.device != "auto" else "cpu"
        try:
            stats = play_selfplay(self.state.source.path, games, config, out, out / "sgf", workers=1,
                                  device=device, progress=False)
        except (OSError, ValueError) as e:
            raise GTPFailure(f"autotrain failed: {e}") from None
        return f"{stats.games} games, {stats.positions} positions written to {out}"
