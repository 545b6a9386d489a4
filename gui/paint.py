"""What every part of the window's drawing shares: the palette, fonts, and text that is checked to fit.

Vocabulary:

- **painter** (:class:`Painter`): the base of the board and panel painters (:mod:`gui.board_view`,
  :mod:`gui.panel_view`): the layout, a font cache, and the **text record** of the frame.
- **text record** (:attr:`Painter.texts`): every label drawn in the frame, with its rectangle,
  where it belongs (``panel``, ``board``, a widget's name) and whether it had to be shortened
  (``clipped``). The layout tests read it to check that no label is cut off or covered at
  800x600 and up; names from a file (players, paths) may be **elided** on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from gui.layout import Layout

# The palette (RGB), one line per part of the window.
WOOD, WOOD_DARK, LINE = (222, 184, 107), (196, 152, 78), (40, 30, 20)  # the board
BACKGROUND, PANEL_TEXT, DIM_TEXT = (44, 47, 54), (232, 232, 228), (160, 164, 172)  # the side panel
ERROR, WARN = (255, 120, 100), (255, 190, 90)  # message levels
BUTTON, BUTTON_ACTIVE, BUTTON_DISABLED = (72, 78, 90), (64, 140, 200), (58, 60, 66)
BEST, HINT = (80, 210, 255), (40, 200, 90)  # the search's best move, the hint's move
CLASS_COLOURS = {"inaccuracy": (240, 200, 60), "mistake": (245, 140, 40), "blunder": (235, 45, 45)}
MAX_CANDIDATES = 10
MAX_PV = 12


@dataclass
class DrawnText:
    text: str
    rect: pygame.Rect
    owner: str  # 'panel', 'board', 'slider' or a widget's name
    clipped: bool = False  # shortened to fit (an ellipsis)
    elided: bool = False  # data shortened on purpose (a long name or path)


class Painter:
    """The layout, the fonts and the frame's text record."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._wood: pygame.Surface | None = None
        self.graph_rect: pygame.Rect | None = None  # the win-rate graph: a click there jumps to a move
        self.texts: list[DrawnText] = []

    def graph_index(self, x: int, length: int, graph: pygame.Rect | None = None) -> int:
        """The move index under ``x`` on a graph (the win-rate graph by default) of ``length`` moves."""
        r = graph or self.graph_rect
        return max(0, min(length, round((x - r.left - 4) / max(1, r.width - 8) * max(1, length))))

    def font(self, size: int, bold: bool = False) -> pygame.font.Font:
        key = (max(8, size), bold)
        if key not in self._fonts:
            f = pygame.font.Font(None, key[0])
            f.set_bold(bold)
            self._fonts[key] = f
        return self._fonts[key]

    def blit_text(self, surface: pygame.Surface, img: pygame.Surface, rect: pygame.Rect, text: str,
                  owner: str, clipped: bool = False, elided: bool = False) -> None:
        surface.blit(img, rect)
        self.texts.append(DrawnText(text, pygame.Rect(rect), owner, clipped, elided))

    def _text_centered(self, surface: pygame.Surface, text: str, centre: tuple[int, int], size: int,
                       colour: tuple = (0, 0, 0), bold: bool = True, owner: str = "board",
                       width: int | None = None) -> None:
        """``text`` centred on ``centre``; shortened (and recorded as clipped) if wider than ``width``."""
        font = self.font(size, bold)
        shown = text if width is None else fit(font, text, width)
        img = font.render(shown, True, colour)
        self.blit_text(surface, img, img.get_rect(center=centre), text, owner, clipped=shown != text)

    def _lines(self, surface: pygame.Surface, rect: pygame.Rect, lines: list[tuple[str, int, bool, tuple]],
               owner: str = "panel", elided: bool = False) -> int:
        """Lines of text down ``rect``, each shortened to its width; returns the y under the last."""
        y = rect.top
        for text, size, bold, colour in lines:
            font = self.font(size, bold)
            shown = fit(font, text, rect.width)
            img = font.render(shown, True, colour)
            self.blit_text(surface, img, img.get_rect(topleft=(rect.left, y)), text, owner,
                           clipped=shown != text and not elided, elided=shown != text and elided)
            y += img.get_height() + 2
        return y


def short_count(visits: int) -> str:
    return f"{visits / 1000:.1f}k" if visits >= 1000 else str(visits)


def fit(font: pygame.font.Font, text: str, width: int, left: bool = False) -> str:
    """``text`` shortened with an ellipsis to fit ``width`` pixels (from the left for file paths)."""
    if font.size(text)[0] <= width:
        return text
    while text and font.size("…" + text)[0] > width:
        text = text[1:] if left else text[:-1]
    return ("…" + text) if left else (text + "…")


def wrap(font: pygame.font.Font, text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` pixels, at spaces; a longer word (a path) is broken."""
    lines, line = [], ""
    words: list[str] = []
    for word in text.split():
        while font.size(word)[0] > width and len(word) > 1:
            cut = next(k for k in range(len(word), 0, -1) if font.size(word[:k])[0] <= width or k == 1)
            words.append(word[:cut])
            word = word[cut:]
        words.append(word)
    for word in words:
        trial = f"{line} {word}".strip()
        if font.size(trial)[0] <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines

