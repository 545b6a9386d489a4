"""Turning pygame events into model calls: clicks on the board and the widgets, keys, dropped files.

Vocabulary:

- **UI state** (:class:`UiState`): what only the window cares about, not the game:
  whether the **setup** panel (the new-game settings) is open and its **draft**
  settings, the text fields, the **chooser** (:mod:`gui.chooser`: the load / save
  file chooser), the **alert** (a whole error message in a box until dismissed) and
  the point under the mouse (**hover**, drawn as a ghost stone).
- **command**: a widget's name (``'undo'``, ``'toggle:policy'``, ``'set:size:+'``...);
  a click on a widget and its keyboard shortcut run the same command.

Keys: W C P V O toggle the overlays, H hint, A AI move, U (or Backspace) undo,
Escape stops the AI, arrow keys / Home / End / the mouse wheel browse the game,
[ and ] (or Page Up / Page Down) switch between variations, Delete deletes the
variation from the move shown, N new game, S save, L load. Text fields take the
keyboard while they have focus; the chooser takes it while it is open.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pygame

from gui.chooser import Chooser, remember
from gui.model import PlayModel
from gui.settings import DEFAULT_KOMI, DEFAULT_SIZES, Settings
from gui.view import View
from gui.widgets import TextField
from zero9.arena.levels import LEVELS, name_for_visits
from zero9.games import BLACK, WHITE
from zero9.nn.checkpoint import default_net_path

SIZE_RANGE = (5, 19)

def games_folder() -> Path:
    """Where Save SGF proposes to write: ~/zero9-games (made when the first game is saved)."""
    return Path.home() / "zero9-games"


KEY_COMMANDS = {
    pygame.K_w: "toggle:winrate",
    pygame.K_c: "toggle:candidates",
    pygame.K_p: "toggle:policy",
    pygame.K_v: "toggle:variation",
    pygame.K_o: "toggle:territory",
    pygame.K_LEFTBRACKET: "branch:prev",
    pygame.K_RIGHTBRACKET: "branch:next",
    pygame.K_PAGEUP: "branch:prev",
    pygame.K_PAGEDOWN: "branch:next",
    pygame.K_DELETE: "branch:delete",
    pygame.K_h: "hint",
    pygame.K_a: "ai_move",
    pygame.K_u: "undo",
    pygame.K_BACKSPACE: "undo",
    pygame.K_ESCAPE: "stop",
    pygame.K_LEFT: "nav:prev",
    pygame.K_RIGHT: "nav:next",
    pygame.K_UP: "nav:prev",
    pygame.K_DOWN: "nav:next",
    pygame.K_HOME: "nav:first",
    pygame.K_END: "nav:last",
    pygame.K_n: "new",
    pygame.K_s: "save",
    pygame.K_l: "load",
    pygame.K_r: "review",
    pygame.K_t: "teaching",
}


@dataclass
class UiState:
    setup_open: bool
    draft: Settings
    visits_field: TextField = field(default_factory=lambda: TextField(numeric=True))
    net_field: TextField = field(default_factory=lambda: TextField(placeholder="(shipped net for the game)"))
    chooser: Chooser | None = None  # the load / save file chooser while it is open
    pointer: tuple[int, int] | None = None  # the mouse in the window, None once it has left
    hover: int | None = None  # the board point under the pointer, on the current layout

    def __post_init__(self) -> None:
        self.sync_fields()

    def sync_fields(self) -> None:
        self.visits_field.value = str(self.draft.visits)
        self.net_field.value = self.draft.net or ""

    def field(self, name: str) -> TextField:
        if name == "field:chooser" and self.chooser is not None:
            return self.chooser.field
        return {"field:visits": self.visits_field, "field:net": self.net_field}[name]

    def focused(self) -> TextField | None:
        for f in (self.visits_field, self.net_field):
            if f.editing:
                return f
        return None

    @property
    def net_note(self) -> str:
        if self.draft.net:
            return Path(self.draft.net).name
        if "zero9.nn.checkpoint" not in sys.modules:  # importing it would pull in torch on this thread
            return "the shipped net for the game, if any"

        path = default_net_path(self.draft.game, self.draft.size)
        return f"shipped {path.name}" if path else "none shipped: uniform prior"


class Controller:
    """Routes events to the model (game commands) or the UI state (setup, chooser, hover)."""

    def __init__(self, model: PlayModel, view: View, ui: UiState):
        self.model, self.view, self.ui = model, view, ui
        self.quit = False

    # ---- events -------------------------------------------------------------------------------

    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.quit = True
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.click(event.pos)
        elif event.type == pygame.MOUSEWHEEL and self.ui.chooser is not None:
            self.ui.chooser.scroll_by(-3 if event.y > 0 else 3, self.view.chooser_rows())
        elif event.type == pygame.MOUSEWHEEL and not self.ui.setup_open:
            self.command("nav:prev" if event.y > 0 else "nav:next")
        elif event.type == pygame.MOUSEMOTION:
            self.ui.pointer = event.pos
            self.locate_pointer()
        elif event.type == pygame.WINDOWLEAVE or (event.type == pygame.ACTIVEEVENT
                                                  and getattr(event, "state", 0) & 1 and not event.gain):
            self.ui.pointer = self.ui.hover = None  # no ghost stone left behind where the mouse went out
        elif event.type == pygame.KEYDOWN:
            self.key(event)
        elif event.type == pygame.DROPFILE:
            self.ui.chooser = None
            self._load(event.file)

    def locate_pointer(self) -> None:
        """The hover point under the pointer on the current layout (another board size has other points)."""
        pointer = self.ui.pointer
        self.ui.hover = None if pointer is None else self.view.layout.point_at(pointer)

    def after_update(self) -> None:
        """Reopen the setup panel when the net of a new game was refused (the message says why)."""
        failed = self.model.failed_settings
        if failed is not None:
            self.model.failed_settings = None
            self.ui.setup_open, self.ui.draft = True, failed
            self.ui.sync_fields()

    def key(self, event: pygame.event.Event) -> None:
        if self.model.alert is not None:
            if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER, pygame.K_ESCAPE, pygame.K_SPACE):
                self.model.alert = None
            return
        if self.ui.chooser is not None:
            self._chooser_key(event)
            return
        focused = self.ui.focused()
        if focused is not None:
            done = focused.key(event)
            if done is not None:
                self._field_done(focused, done)
            return
        if self.ui.setup_open:
            if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
                self.command("start")
            elif event.key == pygame.K_ESCAPE:
                self.command("cancel")
            return
        name = KEY_COMMANDS.get(event.key)
        if name is not None:
            self.command(name)

    def click(self, pos: tuple[int, int]) -> None:
        focused = self.ui.focused()
        widgets, _, _ = self.view.widgets(self.model, self.ui)
        hit = next((w for w in widgets if w.hit(pos)), None)
        if self.model.alert is not None:  # the alert is modal: its OK (or anything) dismisses it
            self.model.alert = None
            return
        if self.ui.chooser is not None:  # the chooser is modal: only its widgets answer
            if hit is not None and hit.name.startswith(("chooser:", "field:chooser")):
                self._chooser_click(hit.name)
            return
        on_itself = hit is not None and hit.kind == "field" and self.ui.field(hit.name) is focused
        if focused is not None and not on_itself:
            self._field_done(focused, "commit")  # clicking elsewhere commits the edit, like a dialog
        if hit is not None:
            self.command(hit.name)
            return
        lay = self.view.layout
        for graph in (self.view.graph_rect, self.view.score_rect):
            if graph is not None and graph.collidepoint(pos) and not self.ui.setup_open:
                self.model.navigate(self.view.graph_index(pos[0], len(self.model.history) - 1, graph))
                return
        if lay.slider_rect.inflate(0, 12).collidepoint(pos) and not self.ui.setup_open:
            self.model.navigate(lay.slider_index(pos[0], len(self.model.history) - 1))
            return
        point = lay.point_at(pos)
        if point is None:
            return
        if self.ui.setup_open:
            self.model.say("choose the settings and press Start (or Cancel) first", "error")
            return
        self.model.click(point)

    # ---- commands -----------------------------------------------------------------------------

    def command(self, name: str) -> None:
        m = self.model
        if name.startswith("set:"):
            self._set(name)
        elif name.startswith("field:"):
            f = self.ui.field(name)
            if not f.editing:
                f.start()
        elif name.startswith("toggle:"):
            m.toggle(name.split(":", 1)[1])
        elif name.startswith("nav:"):
            step = {"nav:first": -(10**9), "nav:prev": -1, "nav:next": 1, "nav:last": 10**9}[name]
            m.navigate(m.cursor + step)
        elif name.startswith("branch:"):
            {"branch:prev": lambda: m.switch_branch(-1), "branch:next": lambda: m.switch_branch(1),
             "branch:delete": m.delete_branch}[name]()
        elif name in ("save", "load"):
            self._open_chooser(name)
        elif name == "new":  # the game's default size and komi, not a loaded file's
            s = m.settings
            self.ui.setup_open = True
            self.ui.draft = replace(s, size=DEFAULT_SIZES.get(s.game, s.size), komi=DEFAULT_KOMI)
            self.ui.sync_fields()
        elif name == "start":
            self._start()
        elif name == "cancel":
            if m.engine is not None or m.loading is not None:
                self.ui.setup_open = False
        else:
            action = {
                "pass": m.pass_move,
                "resign": m.resign,
                "undo": m.undo,
                "stop": m.stop,
                "hint": m.hint,
                "ai_move": m.ai_move,
                "swap": m.swap_sides,
                "review": m.start_review,
                "teaching": m.set_teaching,
            }.get(name)
            if action is None:
                raise ValueError(f"unknown command {name!r}")
            action()

    def _set(self, name: str) -> None:
        _, what, value = name.split(":", 2)
        d = self.ui.draft
        if what == "game":
            d.game, d.size, d.komi = value, DEFAULT_SIZES[value], DEFAULT_KOMI
        elif what == "size" and value in "+-":
            d.size = max(SIZE_RANGE[0], min(SIZE_RANGE[1], d.size + (1 if value == "+" else -1)))
        elif what == "human":
            d.human = BLACK if value == "black" else WHITE
        elif what == "level":
            d.level, d.visits = value, LEVELS[value].visits
        elif what == "komi" and value in "+-":
            d.komi += 0.5 if value == "+" else -0.5
        elif what == "net":
            d.net = None
        self.ui.sync_fields()

    def _field_done(self, f: TextField, how: str) -> None:
        if how == "commit":
            f.commit()
        f.editing = False
        if how != "commit":
            return
        d = self.ui.draft
        if f is self.ui.visits_field:
            try:
                visits = int(f.value)
                if visits < 1:
                    raise ValueError
            except ValueError:
                self.model.say(f"visits must be a whole number of at least 1, not {f.value!r}", "error")
                f.value = str(d.visits)
                return
            d.visits = visits
            d.level = name_for_visits(d.level, visits)
        elif f is self.ui.net_field:
            d.net = f.value or None

    # ---- the file chooser ---------------------------------------------------------------------

    def _open_chooser(self, kind: str) -> None:
        m = self.model
        # not the folder the window was started from (a clone, a system folder): the folder of the
        # game loaded or saved last, else one games folder in the home directory
        folder = m.sgf_path.parent if m.sgf_path is not None else games_folder()
        if not folder.is_dir():
            folder = folder if kind == "save" else Path.home()
        name = ""
        if kind == "save":
            name = m.sgf_path.name if m.sgf_path else \
                f"zero9-{m.game.name}{m.game.size}-{time.strftime('%Y%m%d-%H%M%S')}.sgf"
        self.ui.chooser = Chooser.open_for(kind, folder, name)

    def _chooser_key(self, event: pygame.event.Event) -> None:
        chooser, rows = self.ui.chooser, self.view.chooser_rows()
        steps = {pygame.K_UP: -1, pygame.K_DOWN: 1, pygame.K_PAGEUP: -rows, pygame.K_PAGEDOWN: rows}
        if event.key in steps:
            chooser.move(steps[event.key], rows)
        elif event.key == pygame.K_ESCAPE:
            self.ui.chooser = None
        elif event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            self._decide(chooser.enter())
        elif event.key == pygame.K_BACKSPACE and not chooser.field.draft:
            chooser.up()
        else:
            chooser.field.key(event)
            chooser.field.editing = True  # the name field keeps the keyboard while the chooser is open

    def _chooser_click(self, name: str) -> None:
        chooser = self.ui.chooser
        if name.startswith("chooser:entry:"):
            index = int(name.rsplit(":", 1)[1])
            if index == chooser.selected:
                self._decide(chooser.open(index))
            else:
                chooser.selected = index
        elif name == "chooser:up":
            chooser.up()
        elif name == "chooser:ok":
            self._decide(chooser.enter())
        elif name == "chooser:cancel":
            self.ui.chooser = None

    def _decide(self, path: Path | None) -> None:
        """The chooser picked ``path`` (None: it stays open): load or save it, and remember it."""
        chooser = self.ui.chooser
        if path is None or chooser is None:
            return
        self.ui.chooser = None
        done = self.model.save(path) if chooser.mode == "save" else self._load(path)
        if done:
            remember(path)

    def _load(self, path: str | Path) -> bool:
        return self.model.load(path)

    def _start(self) -> None:
        for f in (self.ui.visits_field, self.ui.net_field):
            if f.editing:
                self._field_done(f, "commit")
        if self.model.new_game(replace(self.ui.draft)):
            self.ui.setup_open = False
