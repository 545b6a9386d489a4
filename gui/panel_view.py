"""Drawing the side panel and the boxes over the board: status, graphs, widgets, the chooser, the alert.

Vocabulary:

- **title**: the game, then who plays: ``you`` and ``the AI`` at its level in your own
  games, the SGF's players (``PB``/``PW``) in a loaded one, then the net.
- **status**: whose turn it is or the result, then the move number, captures, the
  AI's last reply time and (Go, with an analysis) the score lead.
- **win-rate graph** and **score graph**: Black's win rate and Black's score lead after
  each move over the whole line; the vertical line is the move on the board. After a
  review, the moves it flags are dots in their class's colour (:data:`CLASS_COLOURS`) and
  a click on either graph jumps to a move. A loaded game's win rate is drawn at once from
  the net's quick pass (dimmer), and searches and Review refine it.
- **alert**: a whole error message (a file that cannot be loaded) in a box over the
  board, wrapped to its width, until a key or click dismisses it.
- **chooser**: the file chooser (:mod:`gui.chooser`) in a box over the board.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pygame
import pygame.gfxdraw

from gui.paint import (
    BEST,
    BUTTON,
    BUTTON_ACTIVE,
    BUTTON_DISABLED,
    CLASS_COLOURS,
    DIM_TEXT,
    ERROR,
    PANEL_TEXT,
    WARN,
    Painter,
    fit,
    wrap,
)
from gui.scoring import count_text_of
from gui.widgets import Widget
from zero9.games import BLACK, COLOUR_NAMES, WHITE

MESSAGE_LINES = 3
LEVEL_NOTES = {
    "beginner": "the net's policy; one of its 40 likeliest moves",
    "casual": "the net's policy; one of its 8 likeliest moves",
    "club": "16 visits; one of the search's best 3",
    "strong": "200 visits; always the best move",
    "max": "800 visits; always the best move",
    "custom": "the search's best move at these visits",
}


def plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


class PanelPainter(Painter):
    """Paints the panel, the setup panel, the chooser and the alert."""

    def draw_panel(self, surface: pygame.Surface, model: Any, bands: dict[str, pygame.Rect]) -> None:
        s = model.settings
        engine = model.engine.label if model.engine is not None else "loading the net…"
        uniform = model.engine is not None and model.engine.uniform
        rect = bands["title"]
        y = self._lines(surface, rect, [(f"zero9 · {model.describe().split(';')[0]}", 24, True, PANEL_TEXT)])
        if model.own_game:
            level = s.level_name()
            who = f"you: {COLOUR_NAMES[s.human]} · AI: {level} ({plural(s.visits, 'visit')})"
            y = self._lines(surface, pygame.Rect(rect.left, y, rect.width, 20), [(who, 18, False, DIM_TEXT)])
        else:  # a loaded game: the players' names from the file (long names are elided)
            names = f"{model.player_name(BLACK)} vs {model.player_name(WHITE)}"
            y = self._lines(
                surface,
                pygame.Rect(rect.left, y, rect.width, 20),
                [(names, 18, True, PANEL_TEXT)],
                elided=True,
            )
        self._lines(
            surface,
            pygame.Rect(rect.left, y, rect.width, 20),
            [(engine, 18, uniform, WARN if uniform else DIM_TEXT)],
            elided=True,
        )
        self._draw_status(surface, model, bands["status"])
        self._draw_winbar(surface, model, bands["winbar"])
        self._draw_graphs(surface, model, bands["graph"])
        self._draw_message(surface, model, bands["message"])

    def _status_head(self, model: Any) -> tuple[str, tuple]:
        pos = model.position
        if pos.is_terminal():
            return model.result_text(names=False), WARN
        if model.thinking or model.loading is not None:
            return model.busy_text, BEST
        if model.at_end and model.whose.file_result and not model.own_game:
            return f"result in the file: {model.whose.file_result}", WARN
        if not model.own_game:
            return f"{COLOUR_NAMES[pos.to_play].capitalize()} to play", PANEL_TEXT
        who = "you" if pos.to_play == model.settings.human else "AI"
        return f"{COLOUR_NAMES[pos.to_play].capitalize()} to play ({who})", PANEL_TEXT

    def _status_parts(self, model: Any) -> list[str]:
        """The status line's parts, most wanted first (the line keeps as many as fit)."""
        pos = model.position
        if model.show_count():
            return [count_text_of(model)]
        parts = [f"move {model.cursor}"]  # from the start of the tree (after any setup stones)
        if model.clock is not None:
            parts.append(f"B {model.clock.text(BLACK)} W {model.clock.text(WHITE)}")
        lead = model.analysis_at().score_lead
        if lead is not None and not pos.is_terminal():
            black = lead if pos.to_play == BLACK else -lead
            parts.append(f"lead {'B' if black >= 0 else 'W'}+{abs(black):.1f}")
        busy = model.busy_text
        if busy.startswith("reviewing"):
            parts.insert(1, busy)
        if model.last_reply_s is not None and model.own_game:
            parts.append(f"AI took {model.last_reply_s:.1f} s")
        c = getattr(pos, "captures", None)
        if c and (c.get(BLACK, 0) or c.get(WHITE, 0)):
            parts.append(f"captured B {c.get(BLACK, 0)} W {c.get(WHITE, 0)}")
        return parts

    def _status_line(self, model: Any, width: int) -> str:
        font, parts = self.font(17), self._status_parts(model)
        line = parts[0]
        for part in parts[1:]:
            if font.size(f"{line} · {part}")[0] <= width:
                line = f"{line} · {part}"
        return line

    def _draw_status(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        head, colour = self._status_head(model)
        x = rect.left
        if model.thinking or model.loading is not None:
            self._spinner(surface, (rect.left + 10, rect.top + 10))
            x += 26
        self._lines(
            surface,
            pygame.Rect(x, rect.top, rect.width - (x - rect.left), rect.height),
            [(head, 22, True, colour)],
        )
        self._lines(
            surface,
            pygame.Rect(rect.left, rect.top + 24, rect.width, 20),
            [(self._status_line(model, rect.width), 17, False, DIM_TEXT)],
        )

    def _spinner(self, surface: pygame.Surface, centre: tuple[int, int]) -> None:
        t = time.monotonic() * 6
        for k in range(8):
            angle = t + k * math.pi / 4
            shade = 60 + 24 * k
            x = centre[0] + 8 * math.cos(angle)
            y = centre[1] + 8 * math.sin(angle)
            pygame.gfxdraw.filled_circle(surface, round(x), round(y), 2, (shade, shade, min(255, shade + 30)))

    def _draw_winbar(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        if not model.overlays["winrate"]:
            self._lines(surface, rect, [("win rate hidden (W shows it)", 16, False, DIM_TEXT)])
            return
        wr = model.analysis_at().winrate
        pos = model.position
        pygame.draw.rect(surface, (245, 245, 240), rect, border_radius=4)
        if wr is None or not math.isfinite(wr) or pos.is_terminal():
            text = "win rate: —" if not pos.is_terminal() else "game over"
            self._text_centered(surface, text, rect.center, 18, (60, 60, 60), owner="panel", width=rect.width)
            return
        black = wr if pos.to_play == BLACK else 1 - wr
        left = pygame.Rect(rect.left, rect.top, round(rect.width * black), rect.height)
        pygame.draw.rect(surface, (25, 25, 28), left, border_radius=4)
        # the label sits inside the wider part, so it never crosses the split between black and white
        right = pygame.Rect(left.right, rect.top, rect.width - left.width, rect.height)
        part = left if left.width >= right.width else right
        ink = (235, 235, 235) if part is left else (25, 25, 28)
        font = self.font(17, True)
        colour = COLOUR_NAMES[pos.to_play].capitalize()
        mover = "you" if pos.to_play == model.settings.human and model.own_game else ""
        who = f"{colour} ({mover})" if mover else colour
        for text in (
            f"{who} to move wins {100 * wr:.1f}%",
            f"{colour} wins {100 * wr:.1f}%",
            f"{colour[0]} {100 * wr:.0f}%",
        ):  # the longest that fits
            if font.size(text)[0] <= part.width - 8:
                break
        img = font.render(text, True, ink)
        self.blit_text(
            surface,
            img,
            img.get_rect(center=part.center),
            text,
            "panel",
            clipped=font.size(text)[0] > part.width - 8,
        )

    def _draw_graphs(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        """The win-rate graph, and beside it the score graph when the line has score leads (Go)."""
        leads = model.black_score_leads()
        if model.overlays["winrate"] and any(v is not None for v in leads):
            half = (rect.width - 6) // 2
            self.graph_rect = pygame.Rect(rect.left, rect.top, half, rect.height)
            score_rect = pygame.Rect(rect.left + half + 6, rect.top, rect.width - half - 6, rect.height)
            self._draw_graph(surface, model, self.graph_rect, model.black_winrates(), "Black's win rate")
            top = max([5.0] + [abs(v) for v in leads if v is not None])
            scaled = [None if v is None else 0.5 + 0.5 * v / top for v in leads]
            self._draw_graph(surface, model, score_rect, scaled, f"Black's lead (±{top:.0f} pts)")
            self.score_rect = score_rect
            return
        self.graph_rect, self.score_rect = rect, None
        self._draw_graph(surface, model, rect, model.black_winrates(), "Black's win rate by move")

    def _draw_graph(
        self, surface: pygame.Surface, model: Any, rect: pygame.Rect, rates: list, title: str
    ) -> None:
        pygame.draw.rect(surface, (30, 32, 38), rect, border_radius=4)
        if not model.overlays["winrate"]:
            return
        pygame.draw.line(surface, (80, 84, 94), (rect.left, rect.centery), (rect.right, rect.centery))
        n = max(1, len(rates) - 1)

        def xy(i: int, wr: float) -> tuple[int, int]:
            return (
                round(rect.left + 4 + (rect.width - 8) * i / n),
                round(rect.bottom - 4 - (rect.height - 8) * wr),
            )

        points = [xy(i, wr) for i, wr in enumerate(rates) if wr is not None]
        quick = all(model.analysis_at(i).quick for i, wr in enumerate(rates) if wr is not None) and points
        if len(points) >= 2:
            poly = [(points[0][0], rect.centery), *points, (points[-1][0], rect.centery)]
            shade = pygame.Surface(rect.size, pygame.SRCALPHA)
            fill = (90, 160, 230, 40 if quick else 70)
            pygame.draw.polygon(shade, fill, [(x - rect.left, y - rect.top) for x, y in poly])
            surface.blit(shade, rect)
            pygame.draw.aalines(surface, (100, 150, 200) if quick else (120, 190, 255), False, points)
        for p in points:
            pygame.gfxdraw.filled_circle(surface, p[0], p[1], 2, (160, 210, 255))
        for m in model.reviewed() or []:
            i = m["move_number"]
            if m["class"] in CLASS_COLOURS and i < len(rates) and rates[i] is not None:
                x, y = xy(i, rates[i])
                pygame.gfxdraw.filled_circle(surface, x, y, 4, CLASS_COLOURS[m["class"]])
                pygame.gfxdraw.aacircle(surface, x, y, 4, (20, 20, 20))
        cx = xy(model.cursor, 0.5)[0]
        pygame.draw.line(surface, (230, 200, 90), (cx, rect.top + 2), (cx, rect.bottom - 2))
        self._lines(
            surface,
            pygame.Rect(rect.left + 6, rect.top + 3, rect.width - 8, 16),
            [(title, 15, False, DIM_TEXT)],
        )

    def _draw_message(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        """The message, wrapped; a longer one ends in '… (whole message: M)' - the alert shows it whole."""
        if not model.message:
            return
        colour = ERROR if model.message_level == "error" else PANEL_TEXT
        bold = model.message_level == "error"
        lines = wrap(self.font(18, bold), model.message, rect.width)
        if len(lines) > MESSAGE_LINES:
            lines = lines[:MESSAGE_LINES]
            lines[-1] = fit(self.font(18, bold), lines[-1] + " …", rect.width)
        self._lines(surface, rect, [(line, 18, bold, colour) for line in lines], elided=True)

    def draw_widget(self, surface: pygame.Surface, w: Widget, ui: Any) -> None:
        if w.kind == "field":
            self._draw_field(surface, w, ui.field(w.name))
            return
        fill = BUTTON_ACTIVE if w.active else BUTTON if w.enabled else BUTTON_DISABLED
        if w.name.endswith(":show"):
            fill = (52, 56, 64)
        pygame.draw.rect(surface, fill, w.rect, border_radius=5)
        colour = PANEL_TEXT if w.enabled or w.name.endswith(":show") else (110, 112, 118)
        hint_w = 0
        if w.hint:
            img = self.font(13).render(w.hint, True, (170, 176, 190))
            hint_w = img.get_width() + 4
            self.blit_text(
                surface,
                img,
                img.get_rect(topright=(w.rect.right - 4, w.rect.top + 3)),
                w.hint,
                w.name + ":key",
            )
        # the label keeps clear of the key letter in the corner
        self._text_centered(
            surface,
            w.label,
            w.rect.center,
            19,
            colour,
            bold=w.active,
            owner=w.name,
            width=w.rect.width - 2 * hint_w - 6,
        )

    def _draw_field(self, surface: pygame.Surface, w: Widget, field: Any) -> None:
        focused = field.editing
        pygame.draw.rect(surface, (250, 250, 246) if focused else (220, 220, 214), w.rect, border_radius=4)
        pygame.draw.rect(surface, BUTTON_ACTIVE if focused else (120, 120, 120), w.rect, 2, border_radius=4)
        text = field.shown
        font = self.font(19)
        shown = (
            fit(font, text, w.rect.width - 14, left=True)
            if text
            else (field.placeholder if not focused else "")
        )
        colour = (20, 20, 20) if text else (120, 120, 120)
        img = font.render(shown, True, colour)
        rect = img.get_rect(midleft=(w.rect.left + 6, w.rect.centery))
        if focused and field.all_selected and text:
            pygame.draw.rect(surface, (150, 190, 240), rect.inflate(2, 2))
        self.blit_text(surface, img, rect, text, w.name, elided=shown != text and bool(text))
        if focused and int(time.monotonic() * 2) % 2 == 0 and not field.all_selected:
            before = field.draft[: field.caret]
            shift = font.size(fit(font, before, w.rect.width - 14, left=True))[0] if before else 0
            x = min(w.rect.right - 6, rect.left + shift)
            pygame.draw.line(surface, (20, 20, 20), (x, w.rect.top + 6), (x, w.rect.bottom - 6), 2)

    def draw_setup(self, surface: pygame.Surface, model: Any, ui: Any, bands: dict, labels: list) -> None:
        self._lines(surface, bands["setup_title"], [("New game", 28, True, PANEL_TEXT)])
        for text, rect in labels:
            if text.strip():
                self._text_left(surface, text, rect, 19, DIM_TEXT)
        d = ui.draft
        level = d.level_name()
        note = [
            f"Net: {ui.net_note}",
            f"{level.capitalize()}: {LEVEL_NOTES.get(level, '')}",
            "More visits is stronger. Enter starts.",
        ]
        self._lines(surface, bands["setup_note"], [(line, 16, False, DIM_TEXT) for line in note])
        self._draw_message(surface, model, bands["message"])

    def _text_left(
        self, surface: pygame.Surface, text: str, rect: pygame.Rect, size: int, colour: tuple
    ) -> None:
        font = self.font(size, True)
        shown = fit(font, text, rect.width - 4)
        img = font.render(shown, True, colour)
        self.blit_text(
            surface,
            img,
            img.get_rect(midleft=(rect.left, rect.centery)),
            text,
            "panel",
            clipped=shown != text,
        )

    def draw_box(self, surface: pygame.Surface, rect: pygame.Rect) -> None:
        shade = pygame.Surface(rect.size, pygame.SRCALPHA)
        shade.fill((30, 32, 40, 240))
        surface.blit(shade, rect)
        pygame.draw.rect(surface, BUTTON_ACTIVE, rect, 2, border_radius=6)

    def draw_alert(
        self, surface: pygame.Surface, text: str, rect: pygame.Rect, widgets: list[Widget], ui: Any
    ) -> None:
        self.draw_box(surface, rect)
        inner = rect.inflate(-24, -20)
        y = self._lines(surface, inner, [("Cannot do that:", 22, True, ERROR)], owner="alert")
        lines = wrap(self.font(19), text, inner.width)
        self._lines(
            surface,
            pygame.Rect(inner.left, y + 4, inner.width, inner.height),
            [(line, 19, False, PANEL_TEXT) for line in lines],
            owner="alert",
        )
        for w in widgets:
            self.draw_widget(surface, w, ui)

    def draw_chooser(
        self, surface: pygame.Surface, chooser: Any, rect: pygame.Rect, widgets: list[Widget], ui: Any
    ) -> None:
        self.draw_box(surface, rect)
        title = "Save the game as SGF" if chooser.mode == "save" else "Load an SGF file (or drop one here)"
        inner = rect.inflate(-20, -16)
        y = self._lines(surface, inner, [(title, 22, True, PANEL_TEXT)], owner="chooser")
        where = chooser.problem or f"Folder: {chooser.folder}"
        self._lines(
            surface,
            pygame.Rect(inner.left, y, inner.width - 70, 20),
            [(where, 17, bool(chooser.problem), ERROR if chooser.problem else DIM_TEXT)],
            owner="chooser",
            elided=True,
        )
        for w in widgets:
            if w.name.startswith("chooser:entry:"):
                self._draw_entry(surface, chooser, w)
            else:
                self.draw_widget(surface, w, ui)
        if not chooser.entries:
            self._lines(
                surface,
                self.chooser_list_rect(),
                [("(no SGF files or folders here)", 17, False, DIM_TEXT)],
                owner="chooser",
            )

    def _draw_entry(self, surface: pygame.Surface, chooser: Any, w: Widget) -> None:
        index = int(w.name.rsplit(":", 1)[1])
        entry = chooser.entries[index]
        if index == chooser.selected:
            pygame.draw.rect(surface, BUTTON_ACTIVE, w.rect, border_radius=3)
        colour = {"recent": WARN, "parent": DIM_TEXT, "folder": (150, 200, 255)}.get(entry.kind, PANEL_TEXT)
        label = ("recent: " if entry.kind == "recent" else "") + entry.label
        font = self.font(18, entry.kind == "folder")
        shown = fit(font, label, w.rect.width - 10)
        img = font.render(shown, True, colour)
        self.blit_text(
            surface,
            img,
            img.get_rect(midleft=(w.rect.left + 6, w.rect.centery)),
            label,
            w.name,
            elided=shown != label,
        )
