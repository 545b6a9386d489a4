"""Drawing the window: the board with its overlays, and the side panel with its widgets.

Vocabulary:

- **view**: reads the model (``gui/model.py``) and the controller's UI state and
  paints a frame; it changes neither. :meth:`View.widgets` lays out the panel's
  buttons for the current state, and the controller hit-tests those same widgets,
  so what is drawn is what can be clicked.
- **overlay**: a teaching layer drawn over the stones: the **candidates** (Lizzie's
  coloured circles with win rate and visits; the best is cyan), the **policy
  heatmap** (the net's prior per point, red, stronger = likelier), the
  **variation** (the principal variation as translucent numbered **ghost stones**),
  the **hint** (a green ring on the AI's move for you), and at the end of a Go game
  the **count** (small squares on each empty point of Tromp-Taylor territory).
- **win-rate graph**: Black's win rate after each move, over the whole game; the
  vertical line is the move shown on the board. After a review, the moves it flags are
  dots in their class's colour (:data:`CLASS_COLOURS`) and a click jumps to a move.
- **review marks**: on the board, a ring in the class's colour around each flagged
  stone; when the next move from the position shown was flagged, the better move and
  its line as numbered ghost stones (the same for a teaching game's last move).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import pygame
import pygame.gfxdraw

from gui.engine import LEVELS
from gui.layout import Layout
from gui.widgets import BUTTON_H, Column, Widget
from zero9.games import BLACK, COLOUR_NAMES, COLUMN_LETTERS, EMPTY, WHITE

# The palette (RGB), one line per part of the window.
WOOD, WOOD_DARK, LINE = (222, 184, 107), (196, 152, 78), (40, 30, 20)  # the board
BACKGROUND, PANEL_TEXT, DIM_TEXT = (44, 47, 54), (232, 232, 228), (160, 164, 172)  # the side panel
ERROR, WARN = (255, 120, 100), (255, 190, 90)  # message levels
BUTTON, BUTTON_ACTIVE, BUTTON_DISABLED = (72, 78, 90), (64, 140, 200), (58, 60, 66)
BEST, HINT = (80, 210, 255), (40, 200, 90)  # the search's best move, the hint's move
CLASS_COLOURS = {"inaccuracy": (240, 200, 60), "mistake": (245, 140, 40), "blunder": (235, 45, 45)}
MAX_CANDIDATES = 10
MAX_PV = 12


def star_points(size: int) -> list[tuple[int, int]]:
    """(x, y) of the hoshi: 3 lines from the edge on 13x13 and up, 2 below; the centre on odd sizes."""
    if size < 7:
        return [(size // 2, size // 2)] if size % 2 else []
    edge = 3 if size >= 13 else 2
    far = size - 1 - edge
    stars = [(edge, edge), (edge, far), (far, edge), (far, far)]
    if size % 2:
        stars.append((size // 2, size // 2))
        if size >= 15:
            mid = size // 2
            stars += [(edge, mid), (far, mid), (mid, edge), (mid, far)]
    return stars


def candidate_colour(rank: int, share: float) -> tuple[int, int, int]:
    """Lizzie's scheme: the best move cyan, the others from green (many visits) to red (few)."""
    if rank == 0:
        return BEST
    share = max(0.0, min(1.0, share))
    return round(235 - 150 * share), round(90 + 130 * share), 70


class View:
    """Paints frames for one layout; fonts are sized from the board's cell."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._wood: pygame.Surface | None = None
        self.graph_rect: pygame.Rect | None = None  # the win-rate graph: a click there jumps to a move

    def graph_index(self, x: int, length: int) -> int:
        """The move index under ``x`` on the win-rate graph of a game of ``length`` moves."""
        r = self.graph_rect
        return max(0, min(length, round((x - r.left - 4) / max(1, r.width - 8) * max(1, length))))

    def font(self, size: int, bold: bool = False) -> pygame.font.Font:
        key = (max(8, size), bold)
        if key not in self._fonts:
            f = pygame.font.Font(None, key[0])
            f.set_bold(bold)
            self._fonts[key] = f
        return self._fonts[key]

    # ---- widgets ------------------------------------------------------------------------------

    def widgets(self, model: Any, ui: Any) -> tuple[list[Widget], dict[str, pygame.Rect], list]:
        """The panel's widgets, the named drawing bands (status, graph...) and the row captions."""
        col = Column(self.layout.panel, self.layout.panel.top)
        self.graph_rect = None
        if ui.setup_open:
            return self._setup_widgets(col, model, ui)
        bands = {"title": col.space(58), "status": col.space(44)}
        bands["winbar"] = col.space(24)
        bands["graph"] = self.graph_rect = col.space(max(70, min(130, self.layout.height - 600)))
        bands["message"] = col.space(40)
        idle = not model.thinking and model.loading is None
        go = model.game.name == "go"
        playing = idle and not model.over
        col.row(
            ("pass", "Pass"),
            ("resign", "Resign"),
            flags={"pass": {"enabled": go and playing}, "resign": {"enabled": playing}},
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
        col.row(("swap", "Swap sides"), ("new", "New game"), flags={"new": {"hint": "N"}})
        col.row(
            ("save", "Save SGF"), ("load", "Load SGF"), flags={"save": {"hint": "S"}, "load": {"hint": "L"}}
        )
        names = {
            "winrate": ("Win rate", "W"),
            "candidates": ("Candidates", "C"),
            "policy": ("Policy", "P"),
            "variation": ("Variation", "V"),
        }
        toggles = list(names)
        reviewing = model.worker.running is not None and model.worker.running[0] == "review"
        col.row(
            *[(f"toggle:{n}", names[n][0]) for n in toggles[:3]],
            flags={f"toggle:{n}": {"active": model.overlays[n], "hint": names[n][1]} for n in toggles[:3]},
        )
        col.row(
            ("toggle:variation", names["variation"][0]),
            ("teaching", "Teach"),
            ("review", "Review"),
            flags={
                "toggle:variation": {"active": model.overlays["variation"], "hint": "V"},
                "teaching": {"active": model.teaching, "hint": "T"},
                "review": {"enabled": idle and len(model.history) > 1, "hint": "R", "active": reviewing},
            },
        )
        nav = idle and len(model.history) > 1
        col.row(
            ("nav:first", "|<"),
            ("nav:prev", "<"),
            ("nav:next", ">"),
            ("nav:last", ">|"),
            flags={n: {"enabled": nav} for n in ("nav:first", "nav:prev", "nav:next", "nav:last")},
        )
        if ui.prompt:
            self._prompt_widgets(col, ui)
        return col.widgets, bands, col.labels

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
        levels = list(LEVELS)
        for pair, caption in ((levels[:3], "Level"), (levels[3:], "")):
            col.row(
                *[(f"set:level:{n}", f"{n} {LEVELS[n]}") for n in pair],
                label=caption or " ",
                flags={f"set:level:{n}": {"active": d.level == n and d.visits == LEVELS[n]} for n in pair},
            )
        col.row(("field:visits", ""), label="Visits", flags={"field:visits": {"kind": "field"}})
        go = d.game == "go"
        col.row(
            ("set:komi:-", "-"),
            ("set:komi:show", f"{d.komi:g}"),
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
        bands["setup_note"] = col.space(64)
        col.row(
            ("start", "Start"),
            ("cancel", "Cancel"),
            height=BUTTON_H + 6,
            flags={"start": {"active": True}, "cancel": {"enabled": model.engine is not None}},
        )
        bands["message"] = col.space(44)
        return col.widgets, bands, col.labels

    def _prompt_widgets(self, col: Column, ui: Any) -> None:
        r = self.prompt_rect()
        w = (r.width - 30) // 2
        col.widgets.append(Widget("prompt:ok", pygame.Rect(r.left + 10, r.bottom - 40, w, BUTTON_H), "OK"))
        col.widgets.append(
            Widget("prompt:cancel", pygame.Rect(r.left + 20 + w, r.bottom - 40, w, BUTTON_H), "Cancel")
        )
        col.widgets.append(
            Widget("field:prompt", pygame.Rect(r.left + 10, r.top + 38, r.width - 20, BUTTON_H), kind="field")
        )

    def prompt_rect(self) -> pygame.Rect:
        b = self.layout.board_rect
        w, h = min(b.width - 40, 560), 124
        return pygame.Rect(b.centerx - w // 2, b.centery - h // 2, w, h)

    # ---- the frame ----------------------------------------------------------------------------

    def draw(self, surface: pygame.Surface, model: Any, ui: Any) -> list[Widget]:
        """Paint one frame; returns the widgets drawn (what the controller hit-tests)."""
        surface.fill(BACKGROUND)
        self.draw_board(surface, model, ui)
        self.draw_slider(surface, model)
        widgets, bands, labels = self.widgets(model, ui)
        if ui.setup_open:
            self.draw_setup(surface, model, ui, bands, labels)
        else:
            self.draw_panel(surface, model, bands)
        for w in widgets:
            if not w.name.startswith(("prompt:", "field:prompt")):
                self.draw_widget(surface, w, ui)
        if not ui.setup_open and ui.prompt:
            self.draw_prompt(
                surface, ui, [w for w in widgets if w.name.startswith(("prompt:", "field:prompt"))]
            )
        return widgets

    # ---- board --------------------------------------------------------------------------------

    def _wood_surface(self) -> pygame.Surface:
        side = self.layout.board_side
        if self._wood is None or self._wood.get_width() != side:
            wood = pygame.Surface((side, side))
            wood.fill(WOOD)
            rng = random.Random(9)  # the same grain every frame and every run
            for _ in range(side // 3):
                y = rng.randrange(side)
                shade = rng.randint(-14, 8)
                colour = tuple(max(0, min(255, c + shade)) for c in WOOD)
                pygame.draw.line(wood, colour, (0, y), (side, y + rng.randint(-6, 6)), rng.randint(1, 2))
            pygame.draw.rect(wood, WOOD_DARK, wood.get_rect(), 3)
            self._wood = wood
        return self._wood

    def draw_board(self, surface: pygame.Surface, model: Any, ui: Any) -> None:
        lay = self.layout
        surface.blit(self._wood_surface(), (0, 0))
        n, cell = lay.size, lay.cell
        for i in range(n):
            width = 2 if i in (0, n - 1) else 1
            pygame.draw.line(surface, LINE, lay.center(i), lay.center((n - 1) * n + i), width)
            pygame.draw.line(surface, LINE, lay.center(i * n), lay.center(i * n + n - 1), width)
        for x, y in star_points(n):
            cx, cy = lay.center(y * n + x)
            pygame.gfxdraw.aacircle(surface, cx, cy, max(2, round(cell * 0.09)), LINE)
            pygame.gfxdraw.filled_circle(surface, cx, cy, max(2, round(cell * 0.09)), LINE)
        self._draw_coordinates(surface)
        pos = model.position
        board = pos.board_array()
        a = model.analysis_at()
        if model.show_count():
            self._draw_count(surface, pos.ownership(), board)
        if model.overlays["policy"] and a.policy is not None and not pos.is_terminal():
            self._draw_policy(surface, a.policy, board)
        for p in range(n * n):
            if board[p] != EMPTY:
                self.draw_stone(surface, lay.center(p), int(board[p]))
        if pos.last_move is not None and pos.last_move < n * n and board[pos.last_move] != EMPTY:
            cx, cy = lay.center(pos.last_move)
            mark = (230, 60, 50) if board[pos.last_move] == WHITE else (255, 90, 70)
            pygame.gfxdraw.filled_circle(surface, cx, cy, max(3, round(cell * 0.13)), mark)
            pygame.gfxdraw.aacircle(surface, cx, cy, max(3, round(cell * 0.13)), mark)
        self._draw_review_marks(surface, model, board)
        if not pos.is_terminal():
            if model.overlays["candidates"] and a.candidates:
                # with the variation on, its stone 1 stands for the best candidate
                skip_best = model.overlays["variation"]
                self._draw_candidates(
                    surface, a.candidates[1:] if skip_best else a.candidates, 1 if skip_best else 0
                )
            if model.overlays["variation"] and a.candidates:
                # the line's later stones leave the candidates' circles readable (their win rates)
                circled = {c.action for c in a.candidates[1:]} if model.overlays["candidates"] else set()
                pv = getattr(a.candidates[0], "pv", None) or []
                self._draw_variation(surface, pv, pos.to_play, board, skip=circled)
            if a.hint is not None and a.hint < n * n:
                self._draw_hint(surface, a.hint)
            self._draw_hover(surface, model, ui, board)
        if model.over:
            self._draw_banner(surface, model.result_text())

    def _draw_coordinates(self, surface: pygame.Surface) -> None:
        lay, n = self.layout, self.layout.size
        f = self.font(round(lay.cell * 0.42), bold=True)
        ox, oy = lay.origin
        top, bottom = oy - (n - 1) * lay.cell, oy
        off = lay.cell * 0.78
        for i in range(n):
            letter = f.render(COLUMN_LETTERS[i], True, LINE)
            x = ox + i * lay.cell
            for y in (top - off, bottom + off):
                surface.blit(letter, letter.get_rect(center=(round(x), round(y))))
            number = f.render(str(i + 1), True, LINE)
            y = oy - i * lay.cell
            for x in (ox - off, ox + (n - 1) * lay.cell + off):
                surface.blit(number, number.get_rect(center=(round(x), round(y))))

    def draw_stone(
        self, surface: pygame.Surface, centre: tuple[int, int], colour: int, alpha: int = 255
    ) -> None:
        """A stone with a soft shadow and a highlight; ``alpha`` < 255 draws a ghost stone."""
        r = round(self.layout.stone_radius)
        size = 2 * r + 6
        stone = pygame.Surface((size, size), pygame.SRCALPHA)
        c = r + 2
        if alpha == 255:
            pygame.gfxdraw.filled_circle(stone, c + 2, c + 3, r, (0, 0, 0, 70))
        if colour == BLACK:
            base, edge, shine = (22, 22, 24), (0, 0, 0), (92, 92, 98)
        else:
            base, edge, shine = (236, 234, 226), (120, 118, 110), (255, 255, 255)
        pygame.gfxdraw.filled_circle(stone, c, c, r, base)
        pygame.gfxdraw.aacircle(stone, c, c, r, edge)
        hr = max(2, round(r * (0.35 if colour == BLACK else 0.5)))
        hx, hy = c - round(r * 0.32), c - round(r * 0.32)
        for k in range(hr, 0, -1):  # a small radial gradient for the shine
            t = k / hr
            col = tuple(round(b + (s - b) * (1 - t) ** 1.5) for b, s in zip(base, shine, strict=True))
            pygame.gfxdraw.filled_circle(stone, hx, hy, k, col)
        if alpha != 255:
            stone.set_alpha(alpha)
        surface.blit(stone, (centre[0] - c, centre[1] - c))

    def _translucent_disc(
        self, surface: pygame.Surface, centre: tuple[int, int], radius: int, colour: tuple, alpha: int
    ) -> None:
        s = pygame.Surface((2 * radius + 2, 2 * radius + 2), pygame.SRCALPHA)
        pygame.gfxdraw.filled_circle(s, radius + 1, radius + 1, radius, (*colour, alpha))
        pygame.gfxdraw.aacircle(s, radius + 1, radius + 1, radius, (*colour, min(255, alpha + 40)))
        surface.blit(s, (centre[0] - radius - 1, centre[1] - radius - 1))

    def _text_centered(
        self,
        surface: pygame.Surface,
        text: str,
        centre: tuple[int, int],
        size: int,
        colour: tuple = (0, 0, 0),
        bold: bool = True,
    ) -> None:
        img = self.font(size, bold).render(text, True, colour)
        surface.blit(img, img.get_rect(center=centre))

    def _draw_candidates(self, surface: pygame.Surface, candidates: list, first_rank: int = 0) -> None:
        if not candidates:
            return
        lay = self.layout
        total = max(1, sum(s.visits for s in candidates))
        top = max(s.visits for s in candidates)
        shown = [s for s in candidates if s.action < lay.size**2 and s.visits > 0][:MAX_CANDIDATES]
        for rank, s in reversed(list(enumerate(shown, start=first_rank))):
            if rank and s.visits < 0.02 * total:
                continue
            cx, cy = lay.center(s.action)
            colour = candidate_colour(rank, s.visits / top)
            self._translucent_disc(surface, (cx, cy), round(lay.stone_radius), colour, 235)
            fs = round(lay.cell * 0.34)
            self._text_centered(surface, f"{100 * s.winrate:.0f}", (cx, cy - round(fs * 0.38)), fs)
            self._text_centered(
                surface, _short(s.visits), (cx, cy + round(fs * 0.5)), round(fs * 0.8), bold=False
            )

    def _draw_policy(self, surface: pygame.Surface, policy: Any, board: Any) -> None:
        lay = self.layout
        n = lay.size
        side = round(lay.cell * 0.8)
        probs = [float(policy[p]) if board[p] == EMPTY else 0.0 for p in range(n * n)]
        top = max(1e-6, max(probs))
        empty = max(1, sum(1 for p in range(n * n) if board[p] == EMPTY))
        # a flat policy (an untrained net) stays faint; a sharp one is bold
        sharpness = min(1.0, top * empty / 6)
        labelled = set(sorted(range(n * n), key=lambda p: -probs[p])[:8])  # only the likeliest get numbers
        for p, prob in enumerate(probs):
            if prob < 0.002:
                continue
            alpha = round(20 + 190 * sharpness * (prob / top) ** 0.7)
            square = pygame.Surface((side, side), pygame.SRCALPHA)
            pygame.draw.rect(square, (225, 40, 30, alpha), square.get_rect(), border_radius=side // 5)
            cx, cy = lay.center(p)
            surface.blit(square, (cx - side // 2, cy - side // 2))
            if p in labelled and prob >= 0.01:
                self._text_centered(
                    surface, f"{100 * prob:.0f}", (cx, cy), round(lay.cell * 0.32), (255, 255, 255)
                )

    def _draw_variation(self, surface: pygame.Surface, pv: list[int], to_play: int, board: Any,
                        skip: set[int] = frozenset()) -> None:
        """The line as numbered ghost stones; after the first, none on the ``skip`` points."""
        pv = list(pv)[:MAX_PV]
        lay = self.layout
        seen: set[int] = set()
        colour = to_play
        for number, action in enumerate(pv, start=1):
            hidden = number > 1 and action in skip
            if action < lay.size**2 and action not in seen and board[action] == EMPTY and not hidden:
                seen.add(action)
                self.draw_stone(surface, lay.center(action), colour, alpha=150)
                text = (240, 240, 240) if colour == BLACK else (20, 20, 20)
                self._text_centered(surface, str(number), lay.center(action), round(lay.cell * 0.42), text)
            colour = 3 - colour

    def _draw_review_marks(self, surface: pygame.Surface, model: Any, board: Any) -> None:
        """Rings on the flagged stones; the better move and its line where the next move was flagged."""
        n = self.layout.size
        for index, line in ((i, model.review_at(i)) for i in range(1, model.cursor + 1)):
            if line is None or line["class"] == "good":
                continue
            point = model.history[index].last_move
            if point is not None and point < n * n and board[point] != EMPTY:
                self._ring(surface, point, CLASS_COLOURS[line["class"]])
        following = model.review_at(model.cursor + 1)
        note = model.teach_note
        if following is not None and following["class"] != "good" and following["best_move"]:
            pv = [model.game.vertex_to_action(v) for v in following["pv"]]
            self._draw_line_of_play(surface, pv, model.position.to_play, board)
        elif note is not None and note.index == model.cursor and note.best is not None:
            self._ring(surface, note.move, CLASS_COLOURS[note.kind])
            before = model.history[note.index - 1]
            self._draw_line_of_play(surface, note.pv, before.to_play, before.board_array())

    def _draw_line_of_play(self, surface: pygame.Surface, pv: list[int], to_play: int, board: Any) -> None:
        """The better move (a green ring) and the line after it as numbered ghost stones."""
        if not pv:
            return
        self._draw_variation(surface, pv, to_play, board)
        if pv[0] < self.layout.size**2:
            self._ring(surface, pv[0], HINT, outside=2)

    def _ring(self, surface: pygame.Surface, point: int, colour: tuple, outside: int = 1) -> None:
        """A ring 3 pixels wide around the stone on ``point``, ``outside`` pixels beyond its edge."""
        cx, cy = self.layout.center(point)
        for k in range(3):
            pygame.gfxdraw.aacircle(surface, cx, cy, round(self.layout.stone_radius) + outside - k, colour)

    def _draw_hint(self, surface: pygame.Surface, point: int) -> None:
        cx, cy = self.layout.center(point)
        r = round(self.layout.stone_radius)
        pulse = 0.5 + 0.5 * math.sin(time.monotonic() * 5)
        for k in range(3):
            pygame.gfxdraw.aacircle(surface, cx, cy, r - k, HINT)
        self._translucent_disc(surface, (cx, cy), round(r * (0.35 + 0.15 * pulse)), HINT, 200)

    def _draw_hover(self, surface: pygame.Surface, model: Any, ui: Any, board: Any) -> None:
        p = ui.hover
        if p is None or board[p] != EMPTY or model.position.to_play != model.settings.human or model.thinking:
            return
        self.draw_stone(surface, self.layout.center(p), model.settings.human, alpha=90)

    def _draw_count(self, surface: pygame.Surface, ownership: Any, board: Any) -> None:
        lay = self.layout
        side = max(4, round(lay.cell * 0.3))
        for p, owner in enumerate(ownership):
            if owner == EMPTY or board[p] != EMPTY:
                continue
            cx, cy = lay.center(p)
            colour = (20, 20, 20) if owner == BLACK else (245, 245, 245)
            rect = pygame.Rect(cx - side // 2, cy - side // 2, side, side)
            pygame.draw.rect(surface, colour, rect)
            pygame.draw.rect(surface, (90, 90, 90), rect, 1)

    def _draw_banner(self, surface: pygame.Surface, text: str) -> None:
        b = self.layout.board_rect
        img = self.font(round(self.layout.cell * 0.5), bold=True).render(text, True, (255, 255, 255))
        box = img.get_rect(center=b.center)
        box.inflate_ip(32, 14)
        s = pygame.Surface(box.size, pygame.SRCALPHA)
        pygame.draw.rect(s, (20, 20, 28, 185), s.get_rect(), border_radius=10)
        surface.blit(s, box)
        surface.blit(img, img.get_rect(center=box.center))

    def draw_slider(self, surface: pygame.Surface, model: Any) -> None:
        r = self.layout.slider_rect
        length = len(model.history) - 1
        pygame.draw.rect(surface, (70, 74, 84), r, border_radius=r.height // 2)
        if length:
            filled = pygame.Rect(r.left, r.top, self.layout.slider_x(model.cursor, length) - r.left, r.height)
            pygame.draw.rect(surface, (120, 150, 190), filled, border_radius=r.height // 2)
        x = self.layout.slider_x(model.cursor, length)
        pygame.gfxdraw.filled_circle(surface, x, r.centery, r.height // 2 + 3, (230, 230, 230))
        label = self.font(18, True).render(f"move {model.cursor} / {length}", True, DIM_TEXT)
        surface.blit(label, label.get_rect(midleft=(r.right + 14, r.centery)))

    # ---- panel --------------------------------------------------------------------------------

    def _lines(
        self, surface: pygame.Surface, rect: pygame.Rect, lines: list[tuple[str, int, bool, tuple]]
    ) -> None:
        y = rect.top
        for text, size, bold, colour in lines:
            img = self.font(size, bold).render(_fit(self.font(size, bold), text, rect.width), True, colour)
            surface.blit(img, (rect.left, y))
            y += img.get_height() + 2

    def draw_panel(self, surface: pygame.Surface, model: Any, bands: dict[str, pygame.Rect]) -> None:
        s = model.settings
        ai_level = next((name for name, v in LEVELS.items() if v == s.visits), "custom")
        engine = model.engine.label if model.engine is not None else "loading the net…"
        uniform = model.engine is not None and model.engine.uniform
        self._lines(
            surface,
            bands["title"],
            [
                (f"zero9 · {model.describe().split(';')[0]}", 24, True, PANEL_TEXT),
                (f"you: {COLOUR_NAMES[s.human]} · AI: {ai_level} ({s.visits} visits)", 18, False, DIM_TEXT),
                (engine, 18, uniform, WARN if uniform else DIM_TEXT),
            ],
        )
        self._draw_status(surface, model, bands["status"])
        self._draw_winbar(surface, model, bands["winbar"])
        self._draw_graph(surface, model, bands["graph"])
        self._draw_message(surface, model, bands["message"])

    def _draw_status(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        pos = model.position
        busy = model.busy_text
        if pos.is_terminal():
            head, colour = model.result_text(), WARN
        elif model.thinking or model.loading is not None:
            head, colour = busy, BEST
        else:
            who = "you" if pos.to_play == model.settings.human else "AI"
            head, colour = f"{COLOUR_NAMES[pos.to_play].capitalize()} to play ({who})", PANEL_TEXT
        x = rect.left
        if model.thinking or model.loading is not None:
            self._spinner(surface, (rect.left + 10, rect.top + 10))
            x += 26
        self._lines(
            surface,
            pygame.Rect(x, rect.top, rect.width - (x - rect.left), rect.height),
            [(head, 22, True, colour)],
        )
        caps = ""
        if hasattr(pos, "captures"):
            c = pos.captures
            caps = f" · captures: black {c.get(BLACK, 0)}, white {c.get(WHITE, 0)}"
        line = f"move {pos.move_number}{caps}" + ("" if model.thinking or not busy else f" · {busy}")
        if model.show_count():
            own = pos.ownership()
            black, white = int((own == BLACK).sum()), int((own == WHITE).sum())
            line = f"Tromp-Taylor area: black {black}, white {white}, komi {model.game.komi:g}"
        self._lines(
            surface,
            pygame.Rect(rect.left, rect.top + 24, rect.width, 20),
            [(line, 17, False, DIM_TEXT)],
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
            self._text_centered(surface, text, rect.center, 18, (60, 60, 60))
            return
        black = wr if pos.to_play == BLACK else 1 - wr
        left = pygame.Rect(rect.left, rect.top, round(rect.width * black), rect.height)
        pygame.draw.rect(surface, (25, 25, 28), left, border_radius=4)
        mover = "you" if pos.to_play == model.settings.human else "AI"
        text = f"{COLOUR_NAMES[pos.to_play]} ({mover}) to move wins {100 * wr:.1f}%"
        # the label sits inside the wider part, so it never crosses the split between black and white
        right = pygame.Rect(left.right, rect.top, rect.width - left.width, rect.height)
        part = left if left.width >= right.width else right
        ink = (235, 235, 235) if part is left else (25, 25, 28)
        font = self.font(17, True)
        img = font.render(_fit(font, text, part.width - 8), True, ink)
        surface.blit(img, img.get_rect(center=part.center))

    def _draw_graph(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        pygame.draw.rect(surface, (30, 32, 38), rect, border_radius=4)
        if not model.overlays["winrate"]:
            return
        pygame.draw.line(surface, (80, 84, 94), (rect.left, rect.centery), (rect.right, rect.centery))
        rates = model.black_winrates()
        n = max(1, len(rates) - 1)

        def xy(i: int, wr: float) -> tuple[int, int]:
            return (
                round(rect.left + 4 + (rect.width - 8) * i / n),
                round(rect.bottom - 4 - (rect.height - 8) * wr),
            )

        points = [xy(i, wr) for i, wr in enumerate(rates) if wr is not None]
        if len(points) >= 2:
            poly = [(points[0][0], rect.centery), *points, (points[-1][0], rect.centery)]
            shade = pygame.Surface(rect.size, pygame.SRCALPHA)
            pygame.draw.polygon(shade, (90, 160, 230, 70), [(x - rect.left, y - rect.top) for x, y in poly])
            surface.blit(shade, rect)
            pygame.draw.aalines(surface, (120, 190, 255), False, points)
        for p in points:
            pygame.gfxdraw.filled_circle(surface, p[0], p[1], 2, (160, 210, 255))
        for m in model.reviewed() or []:
            if m["class"] != "good" and rates[m["move_number"]] is not None:
                x, y = xy(m["move_number"], rates[m["move_number"]])
                pygame.gfxdraw.filled_circle(surface, x, y, 4, CLASS_COLOURS[m["class"]])
                pygame.gfxdraw.aacircle(surface, x, y, 4, (20, 20, 20))
        cx = xy(model.cursor, 0.5)[0]
        pygame.draw.line(surface, (230, 200, 90), (cx, rect.top + 2), (cx, rect.bottom - 2))
        label = self.font(15).render("Black's win rate by move", True, DIM_TEXT)
        surface.blit(label, (rect.left + 6, rect.top + 3))

    def _draw_message(self, surface: pygame.Surface, model: Any, rect: pygame.Rect) -> None:
        if not model.message:
            return
        colour = ERROR if model.message_level == "error" else PANEL_TEXT
        lines = _wrap(self.font(18), model.message, rect.width)[:2]
        self._lines(surface, rect, [(line, 18, model.message_level == "error", colour) for line in lines])

    def draw_widget(self, surface: pygame.Surface, w: Widget, ui: Any) -> None:
        if w.kind == "field":
            field = ui.field(w.name)
            focused = field.editing
            pygame.draw.rect(
                surface, (250, 250, 246) if focused else (220, 220, 214), w.rect, border_radius=4
            )
            pygame.draw.rect(
                surface, BUTTON_ACTIVE if focused else (120, 120, 120), w.rect, 2, border_radius=4
            )
            text = field.shown + ("|" if focused and int(time.monotonic() * 2) % 2 == 0 else "")
            shown = text or (field.placeholder if not focused else "")
            colour = (20, 20, 20) if text else (120, 120, 120)
            img = self.font(19).render(_fit(self.font(19), shown, w.rect.width - 12, left=True), True, colour)
            surface.blit(img, img.get_rect(midleft=(w.rect.left + 6, w.rect.centery)))
            return
        fill = BUTTON_ACTIVE if w.active else BUTTON if w.enabled else BUTTON_DISABLED
        if w.name.endswith(":show"):
            fill = (52, 56, 64)
        pygame.draw.rect(surface, fill, w.rect, border_radius=5)
        colour = PANEL_TEXT if w.enabled or w.name.endswith(":show") else (110, 112, 118)
        self._text_centered(surface, w.label, w.rect.center, 19, colour, bold=w.active)
        if w.hint:
            img = self.font(13).render(w.hint, True, (170, 176, 190))
            surface.blit(img, img.get_rect(topright=(w.rect.right - 4, w.rect.top + 3)))

    def draw_setup(self, surface: pygame.Surface, model: Any, ui: Any, bands: dict, labels: list) -> None:
        self._lines(surface, bands["setup_title"], [("New game", 28, True, PANEL_TEXT)])
        for text, rect in labels:
            img = self.font(19, True).render(text, True, DIM_TEXT)
            surface.blit(img, img.get_rect(midleft=(rect.left, rect.centery)))
        note = [
            f"Net: {ui.net_note}",
            "Levels: more visits is stronger; the weaker",
            "ones pick among the best few. Enter starts.",
        ]
        self._lines(surface, bands["setup_note"], [(line, 16, False, DIM_TEXT) for line in note])
        self._draw_message(surface, model, bands["message"])

    def draw_prompt(self, surface: pygame.Surface, ui: Any, widgets: list[Widget]) -> None:
        r = self.prompt_rect()
        shade = pygame.Surface(r.size, pygame.SRCALPHA)
        shade.fill((30, 32, 40, 235))
        surface.blit(shade, r)
        pygame.draw.rect(surface, BUTTON_ACTIVE, r, 2, border_radius=6)
        title = (
            "Save the game as SGF to:"
            if ui.prompt == "save"
            else "Load an SGF file (or drop one on the window):"
        )
        img = self.font(20, True).render(title, True, PANEL_TEXT)
        surface.blit(img, (r.left + 10, r.top + 12))
        for w in widgets:
            self.draw_widget(surface, w, ui)


def _short(visits: int) -> str:
    return f"{visits / 1000:.1f}k" if visits >= 1000 else str(visits)


def _fit(font: pygame.font.Font, text: str, width: int, left: bool = False) -> str:
    """``text`` shortened with an ellipsis to fit ``width`` pixels (from the left for file paths)."""
    if font.size(text)[0] <= width:
        return text
    while text and font.size("…" + text)[0] > width:
        text = text[1:] if left else text[:-1]
    return ("…" + text) if left else (text + "…")


def _wrap(font: pygame.font.Font, text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if font.size(trial)[0] <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
