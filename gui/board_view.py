"""Drawing the board: the wood, the stones, and the teaching overlays on them.

Vocabulary:

- **overlay**: a teaching layer drawn over the stones: the **candidates** (Lizzie's
  coloured circles with win rate and visits; the best is cyan), the **policy
  heatmap** (the net's prior per point, red, stronger = likelier), the
  **variation** (the principal variation as translucent numbered **ghost stones**;
  with the candidates on too, the line's stones are all drawn and the candidates'
  circles only where the line does not go), the **hint** (a green ring on the AI's
  move for you), the **territory** (the ownership estimate: a black or white square
  on each point, bigger where surer) and at the end of a Go game the **count**
  (the owned points, the dead stones crossed out).
- **review marks**: a ring in the class's colour around each flagged stone; when the
  next move from the position shown was flagged, the better move and its line as
  numbered ghost stones (the same for a teaching game's last move).
- **banner**: the result at the end, in the top margin over the column letters (never
  over the stones); in Gomoku the **winning five** is struck through in red.
- **slider**: under the board, with a tick at each move where the game branches.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import pygame
import pygame.gfxdraw

from gui import scoring
from gui.paint import (
    BEST,
    CLASS_COLOURS,
    DIM_TEXT,
    HINT,
    LINE,
    MAX_CANDIDATES,
    MAX_PV,
    WOOD,
    WOOD_DARK,
    Painter,
    fit,
    short_count,
)
from zero9.games import BLACK, COLUMN_LETTERS, EMPTY, WHITE


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



class BoardPainter(Painter):
    """Paints the board area and the slider under it."""

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
        territory = scoring.territory_of(model)
        if territory is not None:
            self._draw_territory(surface, territory, board)
        elif model.show_count():
            self._draw_count(surface, pos.ownership(), board)
        if model.overlays["policy"] and a.policy is not None and not pos.is_terminal():
            self._draw_policy(surface, a.policy, board, self._labelled_points(model, a))
        for p in range(n * n):
            if board[p] != EMPTY:
                self.draw_stone(surface, lay.center(p), int(board[p]))
        if pos.last_move is not None and pos.last_move < n * n and board[pos.last_move] != EMPTY:
            cx, cy = lay.center(pos.last_move)
            mark = (230, 60, 50) if board[pos.last_move] == WHITE else (255, 90, 70)
            pygame.gfxdraw.filled_circle(surface, cx, cy, max(3, round(cell * 0.13)), mark)
            pygame.gfxdraw.aacircle(surface, cx, cy, max(3, round(cell * 0.13)), mark)
        self._draw_review_marks(surface, model, board)
        self._draw_dead(surface, scoring.dead_stones_of(model), board)
        self._draw_five(surface, scoring.winning_line_of(model))
        if not pos.is_terminal():
            self._draw_search(surface, model, a, board)
            if a.hint is not None and a.hint < n * n:
                self._draw_hint(surface, a.hint, pulse=not model.overlays["policy"])
            self._draw_hover(surface, model, ui, board)
        if model.over:
            self._draw_banner(surface, model.result_text())

    def _draw_search(self, surface: pygame.Surface, model: Any, a: Any, board: Any) -> None:
        """The candidates and the variation; with both on, the line's stones are all shown and the
        candidates' circles only where the line does not go (so neither hides the other)."""
        pv = (getattr(a.candidates[0], "pv", None) or []) if a.candidates else []
        shown_pv = set(pv[:MAX_PV]) if model.overlays["variation"] else set()
        if model.overlays["candidates"] and a.candidates:
            self._draw_candidates(surface, a.candidates, skip=shown_pv)
        if model.overlays["variation"] and pv:
            self._draw_variation(surface, pv, model.position.to_play, board)

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

    def _draw_candidates(self, surface: pygame.Surface, candidates: list,
                         skip: set[int] = frozenset()) -> None:
        if not candidates:
            return
        lay = self.layout
        total = max(1, sum(s.visits for s in candidates))
        top = max(1, max(s.visits for s in candidates))
        shown = [s for s in candidates if s.action < lay.size**2 and s.visits > 0][:MAX_CANDIDATES]
        for rank, s in reversed(list(enumerate(shown))):
            if (rank and s.visits < 0.02 * total) or s.action in skip:
                continue
            cx, cy = lay.center(s.action)
            colour = candidate_colour(rank, s.visits / top)
            self._translucent_disc(surface, (cx, cy), round(lay.stone_radius), colour, 235)
            fs = round(lay.cell * 0.34)
            self._text_centered(surface, f"{100 * s.winrate:.0f}", (cx, cy - round(fs * 0.38)), fs)
            self._text_centered(
                surface, short_count(s.visits), (cx, cy + round(fs * 0.5)), round(fs * 0.8), bold=False
            )

    def _labelled_points(self, model: Any, a: Any) -> set[int]:
        """Points where another overlay writes numbers (candidates, the line, the hint): the policy's
        percentages stay off them so that no two numbers lie on one another."""
        points: set[int] = set()
        if a.candidates and model.overlays["candidates"]:
            points |= {s.action for s in a.candidates[:MAX_CANDIDATES] if s.visits > 0}
        if a.candidates and model.overlays["variation"]:
            points |= set((getattr(a.candidates[0], "pv", None) or [])[:MAX_PV])
        if a.hint is not None:
            points.add(a.hint)
        return points

    def _draw_policy(self, surface: pygame.Surface, policy: Any, board: Any,
                     quiet: set[int] = frozenset()) -> None:
        """The heatmap; the likeliest points get their percentage, except the ``quiet`` ones."""
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
            if p in labelled and prob >= 0.01 and p not in quiet:
                self._text_centered(
                    surface, f"{100 * prob:.0f}", (cx, cy), round(lay.cell * 0.32), (255, 255, 255)
                )

    def _draw_variation(self, surface: pygame.Surface, pv: list[int], to_play: int, board: Any) -> None:
        """The line as numbered ghost stones (a point played twice in it keeps its first number)."""
        pv = list(pv)[:MAX_PV]
        lay = self.layout
        seen: set[int] = set()
        colour = to_play
        for number, action in enumerate(pv, start=1):
            if action < lay.size**2 and action not in seen and board[action] == EMPTY:
                seen.add(action)
                self.draw_stone(surface, lay.center(action), colour, alpha=150)
                text = (240, 240, 240) if colour == BLACK else (20, 20, 20)
                self._text_centered(surface, str(number), lay.center(action), round(lay.cell * 0.42), text)
            colour = 3 - colour

    def _draw_review_marks(self, surface: pygame.Surface, model: Any, board: Any) -> None:
        """Rings on the flagged stones; the better move and its line where the next move was flagged."""
        n = self.layout.size
        for index, line in ((i, model.review_at(i)) for i in range(1, model.cursor + 1)):
            if line is None or line["class"] not in CLASS_COLOURS:  # good, forced, tiny, slight: no ring
                continue
            point = model.history[index].last_move
            if point is not None and point < n * n and board[point] != EMPTY:
                self._ring(surface, point, CLASS_COLOURS[line["class"]])
        following = model.review_at(model.cursor + 1)
        note = model.teach_note
        if following is not None and following["class"] in CLASS_COLOURS and following["best_move"]:
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

    def _draw_hint(self, surface: pygame.Surface, point: int, pulse: bool = True) -> None:
        """A green ring; and a pulsing dot inside unless the policy's number is there to read."""
        cx, cy = self.layout.center(point)
        r = round(self.layout.stone_radius)
        for k in range(3):
            pygame.gfxdraw.aacircle(surface, cx, cy, r - k, HINT)
        if pulse:
            beat = 0.5 + 0.5 * math.sin(time.monotonic() * 5)
            self._translucent_disc(surface, (cx, cy), round(r * (0.35 + 0.15 * beat)), HINT, 200)

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
        """The result in the board's top margin (over the column letters), never over the stones."""
        lay = self.layout
        top_line = lay.origin[1] - (lay.size - 1) * lay.cell
        band = pygame.Rect(0, 0, lay.board_side, max(16, round(top_line - lay.stone_radius) - 2))
        font = self.font(min(round(lay.cell * 0.5), band.height - 4), bold=True)
        shown = fit(font, text, band.width - 24)
        img = font.render(shown, True, (255, 255, 255))
        box = img.get_rect(center=band.center).inflate(20, 4)
        s = pygame.Surface(box.size, pygame.SRCALPHA)
        pygame.draw.rect(s, (20, 20, 28, 215), s.get_rect(), border_radius=8)
        surface.blit(s, box)
        self.blit_text(surface, img, img.get_rect(center=box.center), text, "banner", clipped=shown != text)

    def _draw_five(self, surface: pygame.Surface, points: list[int]) -> None:
        """The winning five of a Gomoku game: a red line through the stones and a ring on each."""
        if not points:
            return
        ends = [self.layout.center(points[0]), self.layout.center(points[-1])]
        pygame.draw.line(surface, (235, 45, 45), ends[0], ends[1], max(3, round(self.layout.cell * 0.1)))
        for p in points:
            self._ring(surface, p, (235, 45, 45), outside=2)

    def _draw_territory(self, surface: pygame.Surface, ownership: Any, board: Any) -> None:
        """The ownership estimate (Black's view, -1..1): a square on each point, its size the certainty;
        a stone the other side owns gets a square too (it is probably dead)."""
        lay = self.layout
        for p, own in enumerate(ownership):
            if abs(own) < 0.15 or (board[p] == BLACK and own > 0) or (board[p] == WHITE and own < 0):
                continue
            side = max(3, round(lay.cell * (0.18 + 0.3 * min(1.0, abs(float(own))))))
            cx, cy = lay.center(p)
            square = pygame.Surface((side, side), pygame.SRCALPHA)
            square.fill((15, 15, 15, 200) if own > 0 else (250, 250, 250, 210))
            surface.blit(square, (cx - side // 2, cy - side // 2))

    def _draw_dead(self, surface: pygame.Surface, dead: list[int], board: Any) -> None:
        """Dead stones at the end of a Go game: a cross over each (they are counted as captured)."""
        lay = self.layout
        arm = round(lay.stone_radius * 0.6)
        width = max(3, round(lay.cell * 0.09))
        for p in dead:
            cx, cy = lay.center(p)
            pygame.draw.line(surface, (235, 30, 30), (cx - arm, cy - arm), (cx + arm, cy + arm), width)
            pygame.draw.line(surface, (235, 30, 30), (cx - arm, cy + arm), (cx + arm, cy - arm), width)

    def draw_slider(self, surface: pygame.Surface, model: Any) -> None:
        """The move slider; a tick where the game branches; 'move k / n' right of it, clear of the knob."""
        r = self.layout.slider_rect
        length = len(model.history) - 1
        pygame.draw.rect(surface, (70, 74, 84), r, border_radius=r.height // 2)
        if length:
            filled = pygame.Rect(r.left, r.top, self.layout.slider_x(model.cursor, length) - r.left, r.height)
            pygame.draw.rect(surface, (120, 150, 190), filled, border_radius=r.height // 2)
        for index in model.tree.branch_points():
            x = self.layout.slider_x(index, max(1, length))
            pygame.draw.line(surface, (255, 200, 80), (x, r.top - 4), (x, r.bottom + 4), 2)
        x = self.layout.slider_x(model.cursor, length)
        knob = r.height // 2 + 3
        pygame.gfxdraw.filled_circle(surface, x, r.centery, knob, (230, 230, 230))
        text = f"move {model.cursor} / {length}"
        font = self.font(18, True)
        img = font.render(text, True, DIM_TEXT)
        rect = img.get_rect(midleft=(max(r.right, x) + knob + 6, r.centery))
        self.blit_text(surface, img, rect, text, "slider", clipped=rect.right > self.layout.board_side)
