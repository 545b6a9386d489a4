"""The game's history as a variation tree, as Sabaki, KaTrain and Lizzie keep it.

Vocabulary:

- **node** (:class:`Node`): one position of the game and what the window knows about
  it (its :class:`~gui.analysis.Analysis`). Its **children** are the moves tried from
  it, in the order they were first played; the first child is the **main line**.
- **line**: the nodes from the root (the empty board, or the setup stones) down to
  the end of the branch being shown: :attr:`GameTree.line`. The window's "history"
  is this line; the **cursor** is the index of the node on the board.
- **branch**: playing a move at the cursor that is not already a child of it adds a
  child, so the moves after the cursor are kept as another variation (never cut off).
  Playing a move that already is a child just follows it. Each node remembers which of
  its children was shown last (``chosen``), so going back into a node follows the
  line you were on.
- **siblings**: the children of the cursor's parent; :meth:`GameTree.switch` moves to
  the next or previous one, :meth:`GameTree.delete_branch` removes the cursor's node
  and everything after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zero9.games import IllegalMove, Position


@dataclass(eq=False)
class Node:
    position: Position
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    chosen: int = 0  # the child the line follows from here
    analysis: Any = None  # gui.analysis.Analysis, made when first asked for

    @property
    def move(self) -> int | None:
        return None if self.parent is None else self.position.last_move

    def child_with(self, move: int) -> Node | None:
        return next((c for c in self.children if c.position.last_move == move), None)

    def depth(self) -> int:
        """How many moves led here (0 at the root)."""
        n, node = 0, self
        while node.parent is not None:
            n, node = n + 1, node.parent
        return n


class GameTree:
    """The variation tree and the line shown; every change keeps ``cursor`` inside ``line``."""

    def __init__(self, root: Position):
        self.root = Node(root)
        self.line: list[Node] = [self.root]
        self.cursor = 0

    # ---- reading ---------------------------------------------------------------------------------

    @property
    def node(self) -> Node:
        return self.line[self.cursor]

    @property
    def positions(self) -> list[Position]:
        return [n.position for n in self.line]

    def index_of(self, position: Any) -> int | None:
        """The line index of ``position`` (by identity), None when it is not on the line shown."""
        for i in range(len(self.line) - 1, -1, -1):
            if self.line[i].position is position:
                return i
        return None

    def siblings(self, index: int | None = None) -> tuple[int, int]:
        """(which, how many) variations branch where ``line[index]`` was played (1-based; (1, 1) at root)."""
        node = self.line[self.cursor if index is None else index]
        if node.parent is None:
            return 1, 1
        return node.parent.children.index(node) + 1, len(node.parent.children)

    def branch_points(self) -> list[int]:
        """Line indices whose node has more than one child: where the game branches."""
        return [i for i, n in enumerate(self.line) if len(n.children) > 1]

    def count(self) -> int:
        """All nodes of the tree (the root included)."""
        stack, n = [self.root], 0
        while stack:
            node = stack.pop()
            n += 1
            stack.extend(node.children)
        return n

    def all_lines(self) -> list[list[int]]:
        """Every line of the tree (root to each leaf) as actions, the first children's line first."""
        out: list[list[int]] = []
        stack: list[tuple[Node, list[int]]] = [(self.root, [])]
        while stack:
            node, line = stack.pop()
            if not node.children:
                out.append(line)
            stack.extend((c, [*line, c.position.last_move]) for c in reversed(node.children))
        return out

    # ---- changing --------------------------------------------------------------------------------

    def goto(self, index: int) -> None:
        self.cursor = max(0, min(len(self.line) - 1, index))

    def play(self, position: Position) -> Node:
        """Add ``position`` (a move from the cursor's position) after the cursor and go there.

        An existing child with the same move is followed instead (its own later moves kept).
        """
        parent = self.node
        child = parent.child_with(position.last_move)
        if child is None:
            child = Node(position, parent)
            parent.children.append(child)
        parent.chosen = parent.children.index(child)
        self._extend_from(self.cursor, child)
        self.cursor += 1
        return child

    def switch(self, step: int) -> bool:
        """Show the next (``step`` = 1) or previous (-1) variation of the cursor's node. False if none."""
        node = self.node
        if node.parent is None or len(node.parent.children) < 2:
            return False
        siblings = node.parent.children
        other = siblings[(siblings.index(node) + step) % len(siblings)]
        node.parent.chosen = siblings.index(other)
        self._extend_from(self.cursor - 1, other)
        return True

    def delete_branch(self) -> bool:
        """Remove the cursor's node and all after it; the cursor goes to its parent. False at the root."""
        node = self.node
        parent = node.parent
        if parent is None:
            return False
        parent.children.remove(node)
        parent.chosen = min(parent.chosen, max(0, len(parent.children) - 1))
        self.cursor -= 1
        del self.line[self.cursor + 1:]
        if parent.children:
            self._extend_from(self.cursor, parent.children[parent.chosen])
        return True

    def cut_after(self, index: int) -> None:
        """Remove the line's nodes after ``index`` (an undo: the moves taken back are gone)."""
        if index + 1 < len(self.line):
            self.line[index].children.remove(self.line[index + 1])
            self.line[index].chosen = 0
        del self.line[index + 1:]
        self.cursor = min(self.cursor, len(self.line) - 1)

    def _extend_from(self, index: int, child: Node) -> None:
        """The line up to ``index``, then ``child``, then each node's chosen child to the end."""
        del self.line[index + 1:]
        node = child
        while True:
            self.line.append(node)
            if not node.children:
                return
            node = node.children[min(node.chosen, len(node.children) - 1)]


def replay(start: Position, actions: list[int], source: Any = "the record") -> list[Position]:
    """Positions from ``start`` through ``actions``; ValueError naming the move that is illegal."""
    history = [start]
    for number, action in enumerate(actions, start=1):
        try:
            history.append(history[-1].play(action))
        except IllegalMove as e:
            raise ValueError(f"{source}: move {number} cannot be played: {e}") from e
        if history[-1].is_terminal() and number < len(actions):
            raise ValueError(f"{source}: the game is over after move {number} but has more moves")
    return history


def tree_from_lines(start: Position, lines: list[list[int]], source: Any = "the record") -> GameTree:
    """A tree holding each line of actions from ``start``, the first as the main line, shown to its end.

    ValueError naming the line and the move that cannot be played.
    """
    tree = GameTree(start)
    for k, actions in enumerate(lines):
        where = source if k == 0 else f"{source} (variation {k})"
        node = tree.root
        for number, action in enumerate(actions, start=1):
            child = node.child_with(action)
            if child is None:
                if node.position.is_terminal():
                    raise ValueError(f"{where}: the game is over after move {number - 1} but has more moves")
                try:
                    child = Node(node.position.play(action), node)
                except IllegalMove as e:
                    raise ValueError(f"{where}: move {number} cannot be played: {e}") from e
                node.children.append(child)
            node = child
    if tree.root.children:
        tree._extend_from(0, tree.root.children[0])
    tree.goto(len(tree.line) - 1)
    return tree


def setup_stones(start: Position) -> list[tuple[int, int]]:
    """The stones on a line's start position (handicap or setup), as (colour, point)."""
    board = start.board_array()
    return [(int(board[p]), p) for p in range(len(board)) if board[p] != 0]


__all__ = ["GameTree", "Node", "replay", "setup_stones", "tree_from_lines"]
