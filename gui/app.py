"""``zero9 play``: the pygame window to play against the AI and watch it think.

Vocabulary:

- **app**: the window plus its model (``gui/model.py``: game, history, AI jobs),
  view (``gui/view.py``: drawing) and controller (``gui/controller.py``: events).
- **frame**: one turn of the event loop (:meth:`App.step`): handle the pending
  events, take the AI worker's results, draw, flip. The AI searches on a worker
  thread, so a frame never waits for it; the tests drive the app frame by frame
  with synthetic events under ``SDL_VIDEODRIVER=dummy``.

Command line: ``zero9 play [--game go|gomoku] [--size N] [--color black|white]
[--level NAME | --visits N] [--komi K] [--net PATH] [--sgf FILE [--move N]]``.
Without game options the window opens on the new-game settings; with any of them
(or ``--no-setup``) it starts the game at once. A net that does not fit the game
is refused here, on the command line, before the window opens.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

import pygame

from gui.controller import Controller, UiState
from gui.engine import DEFAULT_LEVEL, LEVELS, Engine, build_engine
from gui.layout import MIN_HEIGHT, MIN_WIDTH, Layout
from gui.model import PlayModel, Settings
from gui.view import View
from zero9.games import parse_colour

FPS_IDLE, FPS_BUSY = 30, 15  # fewer frames while the AI thinks: the search shares the GIL with drawing
GAME_OPTIONS = ("game", "size", "color", "level", "visits", "komi", "net", "sgf")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=["go", "gomoku"], help="the game (default go)")
    parser.add_argument("--size", type=int, help="board size (default 9)")
    parser.add_argument(
        "--color", "--colour", dest="color", help="your colour: black or white (default black)"
    )
    parser.add_argument(
        "--level",
        choices=list(LEVELS),
        help="AI strength: " + ", ".join(f"{k} = {v} visits" for k, v in LEVELS.items()),
    )
    parser.add_argument("--visits", type=int, help="AI visits per move (overrides --level)")
    parser.add_argument("--komi", type=float, help="komi for Go (default 7.5)")
    parser.add_argument(
        "--net", help="net file (.pt or Leela Zero .txt[.gz]); default: the shipped net, if any"
    )
    parser.add_argument("--sgf", help="open this SGF game to continue it")
    parser.add_argument("--move", type=int, help="with --sgf: show this move number (default: the last)")
    parser.add_argument(
        "--no-setup", action="store_true", help="start playing at once, without the settings panel"
    )
    parser.add_argument("--width", type=int, default=1060, help="window width in pixels")
    parser.add_argument("--height", type=int, default=720, help="window height in pixels")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the command line; ValueError with a clear message for bad values."""
    s = Settings()
    if args.game:
        s.game = args.game
        s.size = 15 if args.game == "gomoku" and not args.size else s.size
    if args.size is not None:
        s.size = args.size
    if args.color:
        s.human = parse_colour(args.color)
    if args.level:
        s.level, s.visits = args.level, LEVELS[args.level]
    if args.visits is not None:
        if args.visits < 1:
            raise ValueError(f"--visits must be at least 1, not {args.visits}")
        s.visits = args.visits
        s.level = next((n for n, v in LEVELS.items() if v == args.visits), "custom")
    if args.komi is not None:
        s.komi = args.komi
    s.net = args.net
    s.make_game()  # refuse a bad size here, on the command line
    return s


class App:
    """The window and its loop. ``step()`` runs one frame; ``loop()`` runs until the window closes."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine | None = None,
        show_setup: bool = False,
        size: tuple[int, int] = (1060, 720),
        sgf: str | None = None,
        move: int | None = None,
    ):
        pygame.display.init()  # not pygame.init(): no sound needed, and no mixer means no ALSA noise
        pygame.font.init()
        pygame.display.set_caption("zero9 — play against the AI")
        self.size = (max(MIN_WIDTH, size[0]), max(MIN_HEIGHT, size[1]))
        self.screen = pygame.display.set_mode(self.size, pygame.RESIZABLE)
        self.model = PlayModel(settings, engine)
        self.view = View(Layout(settings.size, *self.size))
        self.ui = UiState(show_setup, replace(settings))
        self.controller = Controller(self.model, self.view, self.ui)
        self.clock = pygame.time.Clock()
        if sgf:
            self.model.load(sgf)
            self._pending_move = move
        else:
            self._pending_move = None

    def step(self) -> bool:
        """One frame. Returns False once the window was closed."""
        for event in pygame.event.get():
            if event.type in (pygame.VIDEORESIZE, pygame.WINDOWSIZECHANGED) and hasattr(event, "w"):
                self.size = (max(MIN_WIDTH, event.w), max(MIN_HEIGHT, event.h))
                if self.size != (event.w, event.h):  # smaller than the panel needs: back to the minimum
                    self.screen = pygame.display.set_mode(self.size, pygame.RESIZABLE)
                self._relayout()
                continue
            self.controller.handle(event)
        self.model.update()
        self.controller.after_update()
        if self._pending_move is not None and self.model.loading is None:
            self.model.navigate(self._pending_move)
            self._pending_move = None
        if self.view.layout.size != self.model.game.size:
            self._relayout()
        self.view.draw(self.screen, self.model, self.ui)
        pygame.display.flip()
        return not self.controller.quit

    def _relayout(self) -> None:
        """A layout for the current board and window size; the hover point is found again on it."""
        self.view.layout = Layout(self.model.game.size, *self.size)
        self.controller.locate_pointer()

    def loop(self) -> int:
        try:
            while self.step():
                busy = self.model.worker.busy
                self.clock.tick(FPS_BUSY if busy else FPS_IDLE)
        finally:
            self.close()
        return 0

    def close(self) -> None:
        self.model.worker.drop_pending()
        self.model.worker.cancel_running()
        self.model.worker.wait_idle(10)
        pygame.quit()

    def screenshot(self, path: str | Path) -> Path:
        """Save the current frame as PNG (folders created)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        pygame.image.save(self.screen, str(path))
        return path


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except ValueError as e:
        print(f"zero9 play: {e}", file=sys.stderr)
        return 2
    if args.move is not None and not args.sgf:
        print("zero9 play: --move needs --sgf", file=sys.stderr)
        return 2
    engine = None
    if args.net:  # refuse a net that does not fit on the command line, before the window opens
        try:
            engine = build_engine(settings.make_game(), settings.net, settings.visits)
        except (ValueError, OSError) as e:
            print(f"zero9 play: {e}", file=sys.stderr)
            return 2
    if args.sgf and not Path(args.sgf).is_file():
        print(f"zero9 play: no SGF file {args.sgf}", file=sys.stderr)
        return 2
    show_setup = not args.no_setup and not any(getattr(args, k) is not None for k in GAME_OPTIONS)
    if (
        os.environ.get("SDL_VIDEODRIVER") != "dummy"
        and not os.environ.get("DISPLAY")
        and sys.platform.startswith("linux")
        and not os.environ.get("WAYLAND_DISPLAY")
    ):
        print(
            "zero9 play: no display (DISPLAY is not set); run it on a desktop, or under xvfb-run",
            file=sys.stderr,
        )
        return 2
    app = App(
        settings, engine, show_setup=show_setup, size=(args.width, args.height), sgf=args.sgf, move=args.move
    )
    return app.loop()


__all__ = ["App", "DEFAULT_LEVEL", "add_arguments", "run", "settings_from_args"]
