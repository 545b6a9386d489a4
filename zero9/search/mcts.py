"""PUCT Monte Carlo tree search, as in AlphaGo Zero and Leela Zero, in plain Python.

This is the search written to be read: one :class:`Node` object per move, and each formula
written once as it is printed below; the readable self-play loop (:mod:`zero9.learn.selfplay.game`)
runs it. The search self-play's workers and play actually run is :mod:`zero9.search.puct` (or
the native fast path): the same algorithm over arrays (one numpy call scores every child),
behind the same interface, several times faster. ``tests/test_mcts_twins.py`` runs both on a
thousand positions of Go and Gomoku with the same evaluator and seeds and checks that they
ask the evaluator for the same leaves, count the same visits and choose the same moves.

Vocabulary:

- **node**: one position of the tree, reached by playing ``action`` from its parent. A node
  holds the statistics of that move, from the view of the player who plays it:
  ``P`` (prior), ``N`` (visits) and ``W`` (total value backed up); ``Q = W / N``.
  ``children`` are the node's legal moves, made all at once when its evaluation comes in
  (**expansion**); a child's ``position`` is built (``play``) only when the child is first
  visited, as most children never are.
- **evaluator**: ``evaluate(positions) -> (priors [B, A], values [B])``, one call for a batch
  of leaves; values are from the side to move's view (:mod:`zero9.search.evaluator`).
- **PUCT**: from a node, go to the child with the largest ``Q + U``, where
  ``U = c_puct · P · sqrt(N_parent) / (1 + N)`` and ``N_parent`` is the sum of the children's
  ``N`` (at least 1). ``U`` is large for moves the net likes and that were seldom tried.
- **first-play urgency (FPU)**: a child never visited has no ``Q``; it gets
  ``value(parent) − fpu_reduction · sqrt(Σ P of the visited children)`` (Leela Zero): the more
  of the policy already explored, the less an untried move is worth guessing.
- **simulation** (a *playout*): select a leaf by PUCT from the root, evaluate it (the net; or,
  at the end of the game, the rules), and **back up** its value along the path, negated at
  each step up (the players alternate). In two halves, :meth:`Tree.select_leaf` and
  :meth:`Tree.expand_and_backup`, so that one evaluator call serves many leaves.
- **virtual loss**: while a leaf waits for its evaluation, every move on its path counts
  ``virtual_loss`` extra visits that each lost, so the next selection of the same batch goes
  elsewhere. Backup takes them back.
- **root noise** (self-play only): Dirichlet noise mixed into the root's priors, so that
  moves the net dislikes are still tried.
- **tree reuse**: after a move, the chosen child becomes the root, with its visits.
- **visits** = ``N_parent`` at the root; a search's **budget** is a number of root visits
  and/or of playouts (simulations of this search).
- **the move**: the most visited child; or, early in a self-play game, a child drawn in
  proportion to its visits.

Settings: :class:`zero9.settings.SearchConfig` (``c_puct``, ``fpu_reduction``, noise, virtual loss).
"""

from __future__ import annotations

import math

import numpy as np

from zero9.games.game import Position
from zero9.settings import SearchConfig


class Node:
    """A move and the position it leads to, with the move's statistics P, N, W (see the module docstring)."""

    def __init__(self, action: int | None, prior: float, position: Position | None = None):
        self.action, self.P, self.N, self.W = action, prior, 0.0, 0.0
        self.prior_before_noise = prior
        self.children: list[Node] = []  # made by expand()
        self.position: Position | None = None  # built at the first visit (arrive)
        self.pending = False  # its evaluation is on the way (a second visit in the batch collides)
        self.evaluated = False  # its evaluation is in: value (and children) set
        if position is not None:
            self.arrive(position)

    def arrive(self, position: Position) -> None:
        """The first visit: the position exists now; at the end of the game the rules give its value."""
        self.position = position
        self.terminal = position.is_terminal()
        self.value = position.result_value(position.to_play) if self.terminal else 0.0

    def Q(self, fpu: float) -> float:
        """Mean value of the move for the player who plays it; ``fpu`` if never visited."""
        return self.W / self.N if self.N > 0 else fpu

    def parent_visits(self) -> float:
        """N_parent: the visits of the children, virtual ones included."""
        return sum(child.N for child in self.children)

    def q_value(self) -> float:
        """The node's value for its side to move: the mean over its children's visits, or its evaluation."""
        total = self.parent_visits()
        return sum(child.W for child in self.children) / total if total > 0 else self.value

    def expand(self, priors: np.ndarray) -> None:
        """One child per legal move, with the evaluator's priors rescaled to sum to 1 over them."""
        assert self.position is not None  # evaluated, so visited: it has arrived
        actions = self.position.legal_moves()
        legal = priors[actions]  # float32, as the net gives them
        total = float(legal.sum())
        if total > 0:
            legal = legal * (1.0 / total)
        else:  # the net gave the legal moves nothing: all alike
            legal = np.full(len(actions), 1.0 / len(actions), legal.dtype)
        self.children = [Node(a, p) for a, p in zip(actions, legal.tolist(), strict=True)]


class Leaf:
    """A path from the root (``nodes[0]``) to a leaf (``node``), selected in ``tree``."""

    def __init__(self, tree: Tree, nodes: list[Node]):
        self.tree, self.nodes, self.node = tree, nodes, nodes[-1]


class Tree:
    """One search tree over one game. Same interface as :class:`zero9.search.puct.Tree`."""

    def __init__(self, position: Position, config: SearchConfig | None = None,
                 rng: np.random.Generator | None = None):
        self.config = config or SearchConfig()
        self.rng = rng or np.random.default_rng()
        self.root = Node(None, 1.0, position)
        self.playouts = 0  # simulations backed up
        self.collisions = 0  # leaves selected twice in one batch
        self.begin_search()

    # --- the budget ------------------------------------------------------------------------

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        """Start a search that stops at ``visits`` root visits and/or ``playouts`` new simulations."""
        self.visit_limit, self.playout_limit = visits, playouts
        self.playouts_at_start = self.playouts

    def visits(self) -> int:
        return int(round(self.root.parent_visits()))

    def leaves_wanted(self, k: int) -> int:
        """How many leaves the next evaluator call may take, at most ``k``; 0 when the search is done."""
        if self.root.terminal:
            return 0
        if not self.root.evaluated:
            return 1  # the root's own evaluation comes first
        if self.visit_limit is not None:
            k = min(k, self.visit_limit - self.visits())
        if self.playout_limit is not None:
            k = min(k, self.playout_limit - (self.playouts - self.playouts_at_start))
        return max(k, 0)

    # --- PUCT ------------------------------------------------------------------------------

    def first_play_value(self, node: Node) -> float:
        """FPU: the Q of ``node``'s children that were never visited."""
        cfg = self.config
        if cfg.fpu_value is not None:
            return cfg.fpu_value
        reduction = cfg.fpu_reduction
        if node is self.root and cfg.fpu_root_reduction is not None:
            reduction = cfg.fpu_root_reduction
        elif node is self.root and cfg.noise:
            reduction = 0.0  # the noise already spreads the root's visits
        tried = sum(child.P for child in node.children if child.N > 0)
        return max(node.value - reduction * math.sqrt(tried), -1.0)

    def select_child(self, node: Node) -> Node:
        """The child with the largest Q + c_puct · P · sqrt(N_parent) / (1 + N); ties: the first."""
        fpu = self.first_play_value(node)
        c = self.config.c_puct * math.sqrt(max(node.parent_visits(), 1.0))
        best, best_score = None, -math.inf
        for child in node.children:
            score = child.Q(fpu) + c * (child.P / (1.0 + child.N))
            if score > best_score:
                best, best_score = child, score
        assert best is not None  # an evaluated node that is not terminal has children
        return best

    # --- one simulation, in two halves ---------------------------------------------------------

    def select_leaf(self) -> Leaf | None:
        """Walk down by PUCT to a leaf, adding virtual loss; None if that leaf is already in flight."""
        node, vl = self.root, self.config.virtual_loss
        path = [node]
        while not node.terminal and node.evaluated:
            node = self.select_child(node)
            if node.position is None:
                assert path[-1].position is not None and node.action is not None  # a visited node's child
                node.arrive(path[-1].position.play(node.action))
            node.N += vl  # virtual loss: vl more visits, each one lost
            node.W -= vl
            path.append(node)
        leaf = Leaf(self, path)
        if node.pending:  # in flight already: take the virtual loss back, the batch goes out as it is
            self.collisions += 1
            for child in path[1:]:
                child.N -= vl
                child.W += vl
            return None
        node.pending = not node.terminal
        return leaf

    def expand_and_backup(self, leaf: Leaf, priors: np.ndarray | None = None, value: float = 0.0) -> None:
        """Finish a simulation: keep the leaf's evaluation (at the game's end: the rules'), back it up."""
        node = leaf.node
        if not node.terminal:
            node.value, node.pending, node.evaluated = float(value), False, True
            assert priors is not None  # a leaf that is not terminal comes with its evaluation
            node.expand(priors)
            if node is self.root and self.config.noise:
                self.add_noise()
        self.backup(leaf, node.value)

    def backup(self, leaf: Leaf, value: float) -> None:
        """Add ``value`` (the leaf's side to move's view) to every move on the path, negated at each step
        up, replacing the virtual loss by the real visit."""
        vl = self.config.virtual_loss
        for node in reversed(leaf.nodes[1:]):
            value = -value  # the player who played this move is the other one
            node.W = node.W + value + vl
            node.N += 1.0 - vl
        if len(leaf.nodes) > 1:
            self.playouts += 1

    # --- the root: noise, reuse, the move ------------------------------------------------------

    def add_noise(self) -> None:
        """P = (1 − ε) · P + ε · Dir(α) at the root, with α = noise_alpha_scale / the number of moves."""
        cfg, children = self.config, self.root.children
        if not children:
            return
        eta = self.rng.dirichlet(np.full(len(children), cfg.noise_alpha_scale / len(children)))
        for child, noise in zip(children, eta.tolist(), strict=True):
            child.P = (1 - cfg.noise_eps) * child.prior_before_noise + cfg.noise_eps * noise

    def set_noise(self, on: bool) -> None:
        """Root noise on or off for the next search (self-play: on full moves), the root's priors to match."""
        was, self.config.noise = self.config.noise, on
        if on and not was and self.root.evaluated:
            self.add_noise()
        elif was and not on:
            for child in self.root.children:
                child.P = child.prior_before_noise

    def advance(self, action: int) -> None:
        """Play ``action`` at the root: its child (with its subtree) becomes the new root."""
        child = next((c for c in self.root.children if c.action == action and c.position is not None), None)
        if child is None or child.pending:
            assert self.root.position is not None  # a root has its position (made with it, or visited)
            child = Node(action, 1.0, self.root.position.play(action))
        self.root = child
        if child.evaluated and self.config.noise:
            self.add_noise()  # a reused root is noised afresh

    def visit_policy(self, num_actions: int) -> np.ndarray:
        """The root's visits as a distribution over all actions, float32 ``[A]`` (the policy target)."""
        pi = np.zeros(num_actions, dtype=np.float32)
        total = self.root.parent_visits()
        for child in self.root.children:
            if total > 0:
                pi[child.action] = child.N / total
        return pi

    def choose_action(self, proportional: bool = False) -> int:
        """The most visited move (ties: higher Q, then higher prior, then the later move); or one drawn in
        proportion to the visits."""
        children = self.root.children
        if not children or self.root.parent_visits() <= 0:
            raise ValueError("choose_action: the root has not been searched")
        if proportional:  # P(child) = N / N_parent (the fast trees: zero9.search.puct.draw_by_visits)
            visits = np.array([c.N for c in children])
            chosen = children[self.rng.choice(len(children), p=visits / visits.sum())]
        else:
            fpu = self.first_play_value(self.root)
            chosen = max(reversed(children), key=lambda c: (c.N, c.Q(fpu), c.P))
        assert chosen.action is not None  # a child: only the root has no action
        return chosen.action


def search(tree: Tree, evaluator, visits: int | None = None, playouts: int | None = None,
           leaves_per_call: int = 1) -> int:
    """A search: simulations until the root has ``visits`` visits and/or ``playouts`` more have been
    done, up to ``leaves_per_call`` leaves per evaluator call. Returns the simulations done.

    (Many trees at once, one evaluator call for all: :func:`zero9.search.batched.search_trees`,
    which drives :mod:`zero9.search.puct`'s trees.)
    """
    tree.begin_search(visits, playouts)
    simulate(tree, evaluator, leaves_per_call)
    return tree.playouts - tree.playouts_at_start


def simulate(tree: Tree, evaluator, leaves_per_call: int = 1) -> None:
    """The search loop: simulations until the budget of the search begun (:meth:`Tree.begin_search`) is
    spent, up to ``leaves_per_call`` leaves per evaluator call. A terminal leaf is backed up at once; a
    collision (a leaf already in flight) sends the batch out as it is."""
    while (k := tree.leaves_wanted(leaves_per_call)) > 0:
        leaves = []
        for _ in range(k):
            leaf = tree.select_leaf()
            if leaf is None:
                break  # a collision: evaluate what we have
            if leaf.node.terminal:
                tree.expand_and_backup(leaf)  # the rules' value, no evaluator needed
                if tree.root.terminal:
                    break
            else:
                leaves.append(leaf)
        if leaves:
            priors, values = evaluator.evaluate([leaf.node.position for leaf in leaves])
            for leaf, p, v in zip(leaves, priors, values.tolist(), strict=True):
                tree.expand_and_backup(leaf, p, v)
