"""The window's frame: where each widget goes for the state shown, and the order things are painted.

Vocabulary:

- **view**: reads the model (``gui/model.py``) and the controller's UI state and
  paints a frame; it changes neither. :meth:`View.widgets` lays out the panel's
  buttons for the current state, and the controller hit-tests those same widgets,
  so what is drawn is what can be clicked. The board is painted by
  :class:`gui.board_view.BoardPainter`, the panel and the boxes over the board by
  :class:`gui.panel_view.PanelPainter`.
- **modal box**: the chooser or the alert, drawn over the board; while one is open
  only its widgets answer (names ``chooser:...``, ``field:chooser``, ``alert:ok``).
"""

from __future__ import annotations

from typing import Any

import pygame

from gui.board_view import BoardPainter
from gui.paint import BACKGROUND, wrap
from gui.panel_view import PanelPainter
from gui.widgets import BUTTON_H, Column, Widget
from zero9.arena.levels import LEVELS as AI_LEVELS
from zero9.games import BLACK, WHITE

CHOOSER_ROW = 24
GRAPH_MIN, GRAPH_MAX = 70, 130
MESSAGE_BAND = 50


class View(BoardPainter, PanelPainter):
    """Paints frames for one layout; fonts are sized from the board's cell."""

    score_rect: pygame.Rect | None = None  # the score graph beside the win-rate graph (Go)

    # ---- widgets ------------------------------------------------------------------------------

    def widgets(self, model: Any, ui: Any) -> tuple[list[Widget], dict[str, pygame.Rect], list]:
        """The panel's widgets, the named drawing bands (status, graph...) and the row captions."""
        col = Column(self.layout.panel, self.layout.panel.top)
        if ui.setup_open:
            widgets, bands, labels = self._setup_widgets(col, model, ui)
        else:
            widgets, bands, labels = self._game_widgets(col, model)
        if model.alert is not None:
            widgets = widgets + self._alert_widgets(model.alert)
        elif ui.chooser is not None:
            widgets = widgets + self._chooser_widgets(ui.chooser)
        return widgets, bands, labels

    def _game_widgets(self, col: Column, model: Any) -> tuple[list[Widget], dict, list]:
        bands = {"title": col.space(58), "status": col.space(44), "winbar": col.space(24)}
        bands["graph"] = col.space(max(GRAPH_MIN, min(GRAPH_MAX, self.layout.height - 600)))
        self.graph_rect = bands["graph"]
        bands["message"] = col.space(MESSAGE_BAND)
        idle = not model.thinking and model.loading is None
        playing = idle and not model.over
        col.row(
            ("pass", "Pass"),
            ("resign", "Resign"),
            flags={"pass": {"enabled": model.game.name == "go" and playing}, "resign": {"enabled": playing}},
        )
        col.row(
            ("undo", "Undo"),
            ("stop", "Stop"),
            flags={"stop": {"enabled": model.worker.running is not None, "active": model.thinking}},
        )
        col.row(
            ("hint", "Hint"),
            ("ai_move", "AI move"),
            flags={"hint": {"enabled": playing, "hint": "H"}, "ai_move": {"enabled": playing, "hint": "A"}},
        )
        col.row(
            ("swap", "Swap sides"),
            ("new", "New game"),
            ("teaching", "Teach"),
            flags={"new": {"hint": "N"}, "teaching": {"active": model.teaching, "hint": "T"}},
        )
        col.row(
            ("save", "Save SGF"), ("load", "Load SGF"), flags={"save": {"hint": "S"}, "load": {"hint": "L"}}
        )
        self._overlay_rows(col, model, idle)
        nav = idle and len(model.history) > 1
        branches = idle and model.tree.siblings()[1] > 1
        col.row(
            ("nav:first", "|<"),
            ("nav:prev", "<"),
            ("nav:next", ">"),
            ("nav:last", ">|"),
            ("branch:next", "Var"),
            ("branch:delete", "Del"),
            flags={
                **{n: {"enabled": nav} for n in ("nav:first", "nav:prev", "nav:next", "nav:last")},
                "branch:next": {"enabled": branches},
                "branch:delete": {"enabled": idle and model.cursor > 0},
            },
        )
        return col.widgets, bands, col.labels

    def _overlay_rows(self, col: Column, model: Any, idle: bool) -> None:
        names = {
            "winrate": ("Win rate", "W"),
            "candidates": ("Candidates", "C"),
            "policy": ("Policy", "P"),
            "variation": ("Variation", "V"),
            "territory": ("Territory", "O"),
        }
        first = ("winrate", "candidates", "policy")
        col.row(
            *[(f"toggle:{n}", names[n][0]) for n in first],
            flags={f"toggle:{n}": {"active": model.overlays[n], "hint": names[n][1]} for n in first},
        )
        reviewing = model.worker.running is not None and model.worker.running[0] == "review"
        col.row(
            ("toggle:variation", "Variation"),
            ("toggle:territory", "Territory"),
            ("review", "Review"),
            flags={
                "toggle:variation": {"active": model.overlays["variation"], "hint": "V"},
                "toggle:territory": {
                    "active": model.overlays["territory"],
                    "hint": "O",
                    "enabled": model.game.name == "go",
                },
                "review": {"enabled": idle and len(model.history) > 1, "hint": "R", "active": reviewing},
            },
        )

    def _setup_widgets(self, col: Column, model: Any, ui: Any) -> tuple[list[Widget], dict, list]:
        d = ui.draft
        bands = {"setup_title": col.space(34)}
        col.row(
            ("set:game:go", "Go"),
            ("set:game:gomoku", "Gomoku"),
            label="Game",
            flags={
                "set:game:go": {"active": d.game == "go"},
                "set:game:gomoku": {"active": d.game == "gomoku"},
            },
        )
        col.row(
            ("set:size:-", "-"),
            ("set:size:show", f"{d.size} x {d.size}"),
            ("set:size:+", "+"),
            label="Size",
            flags={"set:size:show": {"enabled": False}},
        )
        col.row(
            ("set:human:black", "Black"),
            ("set:human:white", "White"),
            label="You play",
            flags={
                "set:human:black": {"active": d.human == BLACK},
                "set:human:white": {"active": d.human == WHITE},
            },
        )
        levels = list(AI_LEVELS)
        for group, caption in ((levels[:3], "Level"), (levels[3:], " ")):
            col.row(
                *[(f"set:level:{n}", AI_LEVELS[n].name) for n in group],
                label=caption,
                flags={f"set:level:{n}": {"active": d.level_name() == n} for n in group},
            )
        col.row(("field:visits", ""), label="Visits", flags={"field:visits": {"kind": "field"}})
        go = d.game == "go"
        col.row(
            ("set:komi:-", "-"),
            ("set:komi:show", f"{d.komi:g}" if go else "—"),
            ("set:komi:+", "+"),
            label="Komi",
            flags={
                "set:komi:-": {"enabled": go},
                "set:komi:+": {"enabled": go},
                "set:komi:show": {"enabled": False},
            },
        )
        col.row(("field:net", ""), label="Net file", flags={"field:net": {"kind": "field"}})
        col.row(
            ("set:net:default", "Shipped net"),
            label=" ",
            flags={"set:net:default": {"active": not ui.net_field.value}},
        )
        bands["setup_note"] = col.space(56)
        col.row(
            ("start", "Start"),
            ("cancel", "Cancel"),
            height=BUTTON_H + 6,
            flags={"start": {"active": True}, "cancel": {"enabled": model.engine is not None}},
        )
        bands["message"] = col.space(MESSAGE_BAND)
        return col.widgets, bands, col.labels

    # ---- the boxes over the board ---------------------------------------------------------------

    def box_rect(self, height: int | None = None) -> pygame.Rect:
        """A box over the board, as wide as it allows (to 600 px); full height unless ``height``."""
        b = self.layout.board_rect
        w = min(b.width - 24, 600)
        h = b.height - 24 if height is None else min(b.height - 24, height)
        return pygame.Rect(b.centerx - w // 2, b.centery - h // 2, w, h)

    def chooser_list_rect(self) -> pygame.Rect:
        r = self.box_rect()
        return pygame.Rect(r.left + 10, r.top + 58, r.width - 20, r.height - 58 - 2 * (BUTTON_H + 10) - 4)

    def chooser_rows(self) -> int:
        return max(1, self.chooser_list_rect().height // CHOOSER_ROW)

    def _chooser_widgets(self, chooser: Any) -> list[Widget]:
        r, lst = self.box_rect(), self.chooser_list_rect()
        rows = self.chooser_rows()
        chooser.keep_visible(rows)
        out = [Widget("chooser:up", pygame.Rect(r.right - 70, r.top + 34, 60, 22), "Up")]
        for k, index in enumerate(range(chooser.scroll, min(len(chooser.entries), chooser.scroll + rows))):
            out.append(
                Widget(
                    f"chooser:entry:{index}",
                    pygame.Rect(lst.left, lst.top + k * CHOOSER_ROW, lst.width, CHOOSER_ROW - 2),
                )
            )
        field_y = lst.bottom + 6
        out.append(
            Widget("field:chooser", pygame.Rect(r.left + 10, field_y, r.width - 20, BUTTON_H), kind="field")
        )
        w = (r.width - 30) // 2
        ok = "Save" if chooser.mode == "save" else "Open"
        y = field_y + BUTTON_H + 8
        out.append(Widget("chooser:ok", pygame.Rect(r.left + 10, y, w, BUTTON_H), ok, active=True))
        out.append(Widget("chooser:cancel", pygame.Rect(r.left + 20 + w, y, w, BUTTON_H), "Cancel"))
        return out

    def alert_rect(self, text: str) -> pygame.Rect:
        width = self.box_rect().width - 24
        lines = len(wrap(self.font(19), text, width))
        return self.box_rect(28 + 24 + lines * 19 + 20 + BUTTON_H + 16)

    def _alert_widgets(self, text: str) -> list[Widget]:
        r = self.alert_rect(text)
        return [
            Widget(
                "alert:ok",
                pygame.Rect(r.centerx - 60, r.bottom - BUTTON_H - 12, 120, BUTTON_H),
                "OK",
                active=True,
            )
        ]

    # ---- the frame ----------------------------------------------------------------------------

    def draw(self, surface: pygame.Surface, model: Any, ui: Any) -> list[Widget]:
        """Paint one frame; returns the widgets drawn (what the controller hit-tests)."""
        self.texts = []
        surface.fill(BACKGROUND)
        self.draw_board(surface, model, ui)
        self.draw_slider(surface, model)
        widgets, bands, labels = self.widgets(model, ui)
        if ui.setup_open:
            self.draw_setup(surface, model, ui, bands, labels)
        else:
            self.draw_panel(surface, model, bands)
        boxed = ("chooser:", "field:chooser", "alert:")
        for w in widgets:
            if not w.name.startswith(boxed):
                self.draw_widget(surface, w, ui)
        in_box = [w for w in widgets if w.name.startswith(boxed)]
        if model.alert is not None:
            self.draw_alert(surface, model.alert, self.alert_rect(model.alert), in_box, ui)
        elif ui.chooser is not None:
            self.draw_chooser(surface, ui.chooser, self.box_rect(), in_box, ui)
        return widgets
