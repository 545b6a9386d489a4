"""The few widgets the panel needs: buttons (plain and on/off) and one-line text fields.

Vocabulary:

- **widget**: a named rectangle the controller hit-tests and the view draws. The
  ``name`` is the command the controller runs when it is clicked (``'pass'``,
  ``'undo'``, ``'toggle:candidates'``...), so the tests can click any widget by name.
- **button**: a widget with a label; ``active`` draws it pressed (a chosen option or
  an overlay that is on); ``enabled=False`` greys it out and clicks do nothing.
- **field**: a one-line text box (:class:`TextField`); clicking it gives it the keyboard
  **focus**, Enter commits, Escape cancels, Ctrl+A selects all. Text comes from KEYDOWN's
  ``unicode`` so that synthetic events in the tests type just like a keyboard.

Widgets hold no game state: the view builds them afresh each frame from the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

BUTTON_H = 30
GAP = 6


@dataclass
class Widget:
    name: str
    rect: pygame.Rect
    label: str = ""
    active: bool = False
    enabled: bool = True
    kind: str = "button"  # 'button' or 'field'
    hint: str = ""  # keyboard shortcut shown in the corner, e.g. 'C'

    def hit(self, pos: tuple[int, int]) -> bool:
        return self.enabled and self.rect.collidepoint(pos)


@dataclass
class TextField:
    """An editable line of text; ``value`` is only replaced when the edit is committed.

    Editing is a text box's usual: a **caret** (``caret``, an index into ``draft``) moved by
    Left/Right/Home/End, Backspace and Delete around it, Ctrl+A **selects all** (the next
    key typed replaces the whole text, Backspace or Delete clears it).
    """

    value: str = ""
    editing: bool = False
    draft: str = ""
    numeric: bool = False
    placeholder: str = ""  # shown greyed while the value is empty
    caret: int = 0
    all_selected: bool = False

    def start(self, select_all: bool = False) -> None:
        self.editing, self.draft = True, self.value
        self.caret, self.all_selected = len(self.draft), select_all

    def commit(self) -> None:
        if self.editing:
            self.value, self.editing = self.draft.strip(), False

    def set_draft(self, text: str) -> None:
        self.draft, self.caret, self.all_selected = text, len(text), False

    def key(self, event: pygame.event.Event) -> str | None:
        """Feed a KEYDOWN; returns 'commit' or 'cancel' when the edit ends, else None."""
        if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            self.commit()
            return "commit"
        if event.key == pygame.K_ESCAPE:
            self.editing = False
            return "cancel"
        if event.key == pygame.K_a and getattr(event, "mod", 0) & pygame.KMOD_CTRL:
            self.all_selected = bool(self.draft)
            return None
        if self._edit(event.key):
            return None
        ch = getattr(event, "unicode", "")
        if ch and ch.isprintable() and (not self.numeric or ch.isdigit() or ch in ".-"):
            if self.all_selected:
                self.draft, self.caret, self.all_selected = "", 0, False
            self.draft = self.draft[: self.caret] + ch + self.draft[self.caret:]
            self.caret += 1
        return None

    def _edit(self, key: int) -> bool:
        """Caret moves and deletions; True when ``key`` was one of them."""
        n = len(self.draft)
        if self.all_selected and key in (pygame.K_BACKSPACE, pygame.K_DELETE):
            self.draft, self.caret, self.all_selected = "", 0, False
            return True
        moves = {pygame.K_LEFT: self.caret - 1, pygame.K_RIGHT: self.caret + 1,
                 pygame.K_HOME: 0, pygame.K_END: n}
        if key in moves:
            self.caret, self.all_selected = max(0, min(n, moves[key])), False
        elif key == pygame.K_BACKSPACE and self.caret > 0:
            self.draft = self.draft[: self.caret - 1] + self.draft[self.caret:]
            self.caret -= 1
        elif key == pygame.K_DELETE:
            self.draft = self.draft[: self.caret] + self.draft[self.caret + 1:]
        elif key != pygame.K_BACKSPACE:
            return False
        return True

    @property
    def shown(self) -> str:
        return self.draft if self.editing else self.value


class Column:
    """Stacks rows of widgets down the panel; a row splits the width evenly between its buttons."""

    LABEL_W = 84

    def __init__(self, rect: pygame.Rect, top: int):
        self.rect = rect
        self.y = top
        self.widgets: list[Widget] = []
        self.labels: list[tuple[str, pygame.Rect]] = []  # (text, where) for rows with a caption

    def row(
        self,
        *specs: tuple[str, str],
        label: str = "",
        height: int = BUTTON_H,
        flags: dict[str, dict] | None = None,
    ) -> list[Widget]:
        """Add one row of buttons; each spec is (name, label). ``flags[name]`` sets widget attributes."""
        left, width = self.rect.left, self.rect.width
        if label:
            self.labels.append((label, pygame.Rect(left, self.y, self.LABEL_W, height)))
            left, width = left + self.LABEL_W, width - self.LABEL_W
        n = len(specs)
        w = (width - GAP * (n - 1)) / n
        made = []
        for i, (name, text) in enumerate(specs):
            r = pygame.Rect(round(left + i * (w + GAP)), self.y, round(w), height)
            widget = Widget(name, r, text)
            for attr, value in (flags or {}).get(name, {}).items():
                setattr(widget, attr, value)
            made.append(widget)
        self.widgets.extend(made)
        self.y += height + GAP
        return made

    def space(self, pixels: int) -> pygame.Rect:
        """Reserve a band of the column for drawing (text, the graph); returns its rect."""
        r = pygame.Rect(self.rect.left, self.y, self.rect.width, pixels)
        self.y += pixels + GAP
        return r
