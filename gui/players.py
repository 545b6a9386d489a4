"""Whose game it is: the players as the window names them, in your games and in loaded ones.

Vocabulary:

- **own game**: a game you play against the AI (a new game, or a loaded one once you
  play a move in it or ask the AI to). Its players are ``you`` and ``the AI`` and its
  result says ``you win`` / ``the AI wins``.
- **loaded game**: a game from an SGF file that you have not played in: its players are
  the file's ``PB``/``PW`` and its result names the winner (``Black (level:strong)
  wins``), never "you" or "the AI". The file's names and result (``RE``) are kept, and a
  game saved from it keeps the names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zero9.games import BLACK, COLOUR_NAMES, EMPTY, WHITE, Position, opponent


def _nobody() -> dict[int, str]:
    return {BLACK: "", WHITE: ""}


@dataclass
class Players:
    own_game: bool = True
    names: dict[int, str] = field(default_factory=_nobody)  # as the window shows them
    file_names: dict[int, str] = field(default_factory=_nobody)  # PB/PW of the loaded file
    file_result: str = ""  # RE of the loaded file

    def start_own(self, human: int, keep_file: bool = False) -> None:
        """Your game against the AI (``keep_file``: a loaded game you took over keeps its file's names)."""
        self.own_game = True
        self.names = {human: "you", opponent(human): "the AI"}
        if not keep_file:
            self.file_names, self.file_result = _nobody(), ""

    def start_loaded(self, black: str, white: str, result: str) -> None:
        self.own_game = False
        self.names = {BLACK: black, WHITE: white}
        self.file_names, self.file_result = dict(self.names), result

    def take_over(self, human: int) -> None:
        """You play on in a loaded game: from here on it is your game against the AI."""
        if not self.own_game:
            self.start_own(human, keep_file=True)

    def name(self, colour: int) -> str:
        """'Black (level:strong)', or 'Black' when the file names nobody."""
        who = self.names.get(colour, "")
        return COLOUR_NAMES[colour].capitalize() + (f" ({who})" if who else "")

    def result_text(self, pos: Position, human: int, names: bool = True, counted: str | None = None) -> str:
        """'Game over: B+3.5 — Black (GNU Go) wins' in a loaded game; 'you win' / 'the AI wins' in yours.

        ``names=False`` leaves the players' names out ('Black wins'), for narrow places.
        ``counted``: the count with the dead stones off ('B+1.5', :func:`gui.scoring.counted_result_of`),
        which replaces the rules' Tromp-Taylor result once it is known.
        """
        if not pos.is_terminal():
            return ""
        text, winner = pos.result_string(), pos.winner()
        if counted is not None:
            text, winner = counted, {"B": BLACK, "W": WHITE}.get(counted[0], EMPTY)
        if winner == EMPTY:
            return f"Game over: draw ({text})"
        if self.own_game:
            return f"Game over: {text} — {'you win' if winner == human else 'the AI wins'}"
        who = self.name(winner) if names else COLOUR_NAMES[winner].capitalize()
        return f"Game over: {text} — {who} wins"

    def for_saving(self, human: int, ai_label: str) -> tuple[str, str]:
        """(PB, PW) to write: the file's names if the game came from one, else Human and the AI."""
        if any(self.file_names.values()):
            return self.file_names[BLACK], self.file_names[WHITE]
        names = {human: "Human", opponent(human): ai_label}
        return names[BLACK], names[WHITE]


def loaded_text(moves: int, variations: int, result: str) -> str:
    """What the message line says when a game is loaded."""
    extra = f" and {variations} variation{'s' if variations != 1 else ''}" if variations else ""
    told = f" (result {result})" if result else ""
    return (f"loaded {moves} move{'s' if moves != 1 else ''}{extra}{told}. Browse with the arrows or the "
            "slider; click to play on, or AI move")
