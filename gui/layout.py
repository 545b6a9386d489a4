"""Where everything sits in the window: pure geometry, no drawing and no state.

Vocabulary:

- **board area**: the left square of the window; the grid plus a margin that holds
  the coordinates. The **move slider** runs under it.
- **cell**: the distance between two neighbouring lines of the grid, in pixels.
- **grid origin**: the pixel of point ``A1`` (x = 0, y = 0), the *bottom-left*
  intersection, because point ``y*size + x`` counts rows from the bottom like
  Leela Zero. Screen rows grow downwards, so ``y`` is flipped here and nowhere else.
- **panel**: the column on the right with the status text, the win-rate graph and
  the buttons. Widgets place themselves inside ``panel`` (see ``gui/widgets.py``).

The tests compute click positions from this same layout, so a click always lands
where the drawing put the point.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

PANEL_WIDTH = 330
SLIDER_HEIGHT = 34
MIN_WIDTH, MIN_HEIGHT = 800, 600


@dataclass(frozen=True)
class Layout:
    """The geometry for a ``size`` x ``size`` board in a ``width`` x ``height`` window."""

    size: int
    width: int = 1060
    height: int = 720

    @property
    def board_side(self) -> int:
        """Side of the square board area (grid + coordinate margin), in pixels."""
        return max(200, min(self.width - PANEL_WIDTH, self.height - SLIDER_HEIGHT))

    @property
    def board_rect(self) -> pygame.Rect:
        return pygame.Rect(0, 0, self.board_side, self.board_side)

    @property
    def cell(self) -> float:
        # size-1 gaps between lines, plus room for one coordinate band and half a stone each side
        return self.board_side / (self.size + 1.2)

    @property
    def origin(self) -> tuple[float, float]:
        """Pixel centre of point A1 (bottom-left intersection)."""
        margin = (self.board_side - self.cell * (self.size - 1)) / 2
        return margin, self.board_side - margin

    @property
    def stone_radius(self) -> float:
        return self.cell * 0.47

    def center(self, point: int) -> tuple[int, int]:
        """Pixel centre of a point (``y*size + x``)."""
        y, x = divmod(point, self.size)
        ox, oy = self.origin
        return round(ox + x * self.cell), round(oy - y * self.cell)

    def point_at(self, pos: tuple[int, int]) -> int | None:
        """The point under a pixel, or None when the pixel is off the grid or between points."""
        ox, oy = self.origin
        fx = (pos[0] - ox) / self.cell
        fy = (oy - pos[1]) / self.cell
        x, y = round(fx), round(fy)
        if not (0 <= x < self.size and 0 <= y < self.size):
            return None
        if (fx - x) ** 2 + (fy - y) ** 2 > 0.45**2:  # a click between points is no click on either
            return None
        return y * self.size + x

    @property
    def slider_rect(self) -> pygame.Rect:
        """The move slider under the board."""
        side = self.board_side
        label = 112  # room on the right for "move k / n", clear of the knob
        return pygame.Rect(
            int(self.cell * 0.6), side + 8, side - int(self.cell * 0.6) - label, SLIDER_HEIGHT - 16
        )

    def slider_index(self, x: int, length: int) -> int:
        """The history index (0..length) that a click at pixel column ``x`` on the slider selects."""
        r = self.slider_rect
        if length <= 0:
            return 0
        frac = min(1.0, max(0.0, (x - r.left) / max(1, r.width)))
        return round(frac * length)

    def slider_x(self, index: int, length: int) -> int:
        r = self.slider_rect
        return r.left + (round(r.width * index / length) if length else 0)

    @property
    def panel(self) -> pygame.Rect:
        left = self.board_side + 10
        return pygame.Rect(left, 8, max(PANEL_WIDTH - 20, self.width - left - 10), self.height - 16)
