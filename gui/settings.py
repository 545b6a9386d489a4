"""What the player chooses before a game: game, size, colour, level, komi, net and clock.

:class:`Settings` is read by the setup dialog (:mod:`gui.chooser`), the command line
(``zero9 play``) and the window's model (:class:`gui.model.PlayModel`); from it come the game's
rules (:meth:`Settings.make_game`) and which net serves them (:meth:`Settings.engine_key`: a
change of these loads another net, a change of level or colour does not).
"""

from __future__ import annotations

from dataclasses import dataclass

from gui.engine import DEFAULT_LEVEL
from zero9.arena.levels import LEVELS, level_playing
from zero9.games import BLACK, Game, make_game

DEFAULT_KOMI = 7.5
DEFAULT_SIZES = {"go": 9, "gomoku": 15}


@dataclass
class Settings:
    game: str = "go"
    size: int = 9
    human: int = BLACK
    level: str = DEFAULT_LEVEL
    visits: int = LEVELS[DEFAULT_LEVEL].visits
    komi: float = DEFAULT_KOMI
    net: str | None = None  # None: the shipped net for the game and size
    clock: tuple[float, float, int] | None = None  # (main seconds, byo-yomi seconds, periods); None: no clock

    def make_game(self) -> Game:
        """The game these settings describe; ValueError if the rules module refuses them."""
        if self.game == "go":
            return make_game("go", self.size, komi=self.komi)
        return make_game(self.game, self.size)

    def engine_key(self) -> tuple:
        """What decides the net: the game, its size, Go's komi and the net file."""
        return (self.game, self.size, self.komi if self.game == "go" else None, self.net or "")

    def level_name(self) -> str:
        """The named level these visits belong to ('custom' when the visits were changed)."""
        return self.level if level_playing(self.level, self.visits) is not None else "custom"
