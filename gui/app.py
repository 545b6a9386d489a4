"""``zero9 play``: the pygame window to play against the AI and watch it think.

Vocabulary:

- **app**: the window plus its model (``gui/model.py``: game, history, AI jobs),
  view (``gui/view.py``: drawing) and controller (``gui/controller.py``: events).
- **frame**: one turn of the event loop (:meth:`App.step`): handle the pending
  events, take the AI worker's results, draw, flip. The AI searches on a worker
  thread, so a frame never waits for it; the tests drive the app frame by frame
  with synthetic events under ``SDL_VIDEODRIVER=dummy``.

The command line (``zero9 play``) is :mod:`zero9.cli.play`'s.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pygame

from gui.controller import Controller, UiState
from gui.engine import DEFAULT_LEVEL, Engine
from gui.layout import MIN_HEIGHT, MIN_WIDTH, Layout
from gui.model import PlayModel
from gui.settings import Settings
from gui.view import View

FPS_IDLE, FPS_BUSY = 30, 15  # fewer frames while the AI thinks: the search shares the GIL with drawing


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


__all__ = ["App", "DEFAULT_LEVEL"]
