"""The file chooser inside the window: browse folders, recent files, a name field; keyboard and mouse.

Vocabulary:

- **chooser** (:class:`Chooser`): open to ``load`` or ``save`` an SGF. It shows a
  **folder** and its **entries**: the **recent** files first (those loaded or saved
  lately, newest first, kept in :func:`recent_path`), then ``..`` (the parent folder),
  the sub-folders, and the ``.sgf`` files. One entry is **selected** (Up/Down, a
  click); **opening** it (Enter, a click on the selected entry, a double click) enters
  a folder or picks a file.
- **name field**: a :class:`gui.widgets.TextField` under the list. Typing there names
  the file (relative to the folder, or a whole path; ``~`` is the home folder); Enter
  with a name uses it (a folder named there is entered). For ``save`` it starts with a
  proposed file name, all selected so that typing replaces it; for ``load`` it starts empty.
- **decision**: what :meth:`Chooser.enter` or :meth:`Chooser.open` returns: the path
  to load or save, or None when the chooser stays open (a folder was entered).

Folders are listed with at most :data:`MAX_ENTRIES` entries (the first ones by name), so
a huge folder costs nothing; unreadable folders say why in ``problem``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from dataclasses import field as default
from pathlib import Path

from gui.widgets import TextField

MAX_ENTRIES = 500
MAX_RECENT = 8


@dataclass
class Entry:
    label: str
    path: Path
    kind: str  # 'recent', 'parent', 'folder' or 'file'


def recent_path() -> Path:
    """Where the recent files are kept: $XDG_CONFIG_HOME/zero9/recent-sgf.json (~/.config by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "zero9" / "recent-sgf.json"


def recent_files() -> list[Path]:
    """The files loaded or saved lately that still exist, newest first (a bad list is ignored)."""
    try:
        names = json.loads(recent_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(names, list):
        return []
    return [Path(n) for n in names if isinstance(n, str) and Path(n).is_file()][:MAX_RECENT]


def remember(path: str | Path) -> None:
    """Put ``path`` first in the recent files (best effort: a read-only home folder is no error)."""
    path = Path(path).expanduser().resolve()
    names = [str(path)] + [str(p) for p in recent_files() if p.resolve() != path]
    target = recent_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(names[:MAX_RECENT], indent=1), encoding="utf-8")
    except OSError:
        pass


@dataclass
class Chooser:
    mode: str  # 'load' or 'save'
    folder: Path
    field: TextField = default(default_factory=TextField)
    entries: list[Entry] = default(default_factory=list)
    selected: int = 0
    scroll: int = 0  # the first entry shown
    problem: str = ""  # why the folder could not be listed

    @classmethod
    def open_for(cls, mode: str, folder: Path, name: str = "") -> Chooser:
        chooser = cls(mode, folder.expanduser())
        chooser.field.value = name
        chooser.field.start(select_all=bool(name))
        chooser.refresh()
        return chooser

    def refresh(self) -> None:
        """List the folder (and the recent files)."""
        entries = [Entry(f"{p.name}  ({p.parent})", p, "recent") for p in recent_files()]
        self.problem = ""
        if self.folder.parent != self.folder:
            entries.append(Entry("..", self.folder.parent, "parent"))
        try:
            found = sorted(os.scandir(self.folder), key=lambda e: e.name.lower())[:MAX_ENTRIES]
        except FileNotFoundError:  # the games folder before the first save: made when a game is saved
            found = []
            if self.mode != "save":
                self.problem = f"no folder {self.folder}"
        except OSError as e:
            found, self.problem = [], f"cannot list {self.folder}: {e.strerror or e}"
        for item in found:
            if item.name.startswith("."):
                continue
            if item.is_dir():
                entries.append(Entry(item.name + "/", Path(item.path), "folder"))
        sgf_files = [i for i in found if i.name.lower().endswith(".sgf") and not i.name.startswith(".")]
        entries += [Entry(item.name, Path(item.path), "file") for item in sgf_files if item.is_file()]
        self.entries = entries
        # the first file here, else the first entry of this folder (not a recent file elsewhere)
        first = next((i for i, e in enumerate(entries) if e.kind == "file"), None)
        self.selected = (
            first if first is not None else next((i for i, e in enumerate(entries) if e.kind != "recent"), 0)
        )
        self.scroll = 0

    def move(self, step: int, rows: int) -> None:
        """Select the entry ``step`` below (above when negative), scrolling ``rows`` visible rows."""
        if not self.entries:
            return
        self.selected = max(0, min(len(self.entries) - 1, self.selected + step))
        self.keep_visible(rows)

    def keep_visible(self, rows: int) -> None:
        if self.selected < self.scroll:
            self.scroll = self.selected
        elif self.selected >= self.scroll + rows:
            self.scroll = self.selected - rows + 1

    def scroll_by(self, step: int, rows: int) -> None:
        self.scroll = max(0, min(max(0, len(self.entries) - rows), self.scroll + step))

    def go_to(self, folder: Path) -> None:
        self.folder = folder
        self.refresh()

    def open(self, index: int | None = None) -> Path | None:
        """Open an entry (the selected one by default): a folder is entered, a file is the decision."""
        if not self.entries:
            return None
        entry = self.entries[self.selected if index is None else index]
        if entry.kind in ("parent", "folder"):
            self.go_to(entry.path)
            return None
        if self.mode == "save":  # a file chosen to save over: its name goes to the field first
            self.field.start()
            self.field.set_draft(entry.path.name)
            self.folder = entry.path.parent
            return entry.path
        return entry.path

    def enter(self) -> Path | None:
        """Enter pressed: the typed name if any (a folder is entered), else the selected entry."""
        name = (self.field.draft if self.field.editing else self.field.value).strip()
        if not name:
            return self.open()
        path = Path(name).expanduser()
        path = path if path.is_absolute() else self.folder / path
        if path.is_dir():
            self.field.start()
            self.field.set_draft("")
            self.go_to(path)
            return None
        if self.mode == "save" and path.suffix.lower() != ".sgf":
            path = path.with_name(path.name + ".sgf")
        return path

    def up(self) -> None:
        self.go_to(self.folder.parent)


__all__ = ["Chooser", "Entry", "recent_files", "recent_path", "remember"]
