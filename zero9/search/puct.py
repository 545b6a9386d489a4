"""PUCT Monte Carlo tree search, as in AlphaGo Zero and Leela Zero: the fast twin of :mod:`zero9.search.mcts`.

The search of :mod:`zero9.search.mcts` (read that one first) over arrays instead of one object
per child: the same selections, visits and moves (``tests/test_mcts_twins.py``), several
times faster (``scripts/bench_search.py``). Self-play, play and analysis run this one.

Vocabulary:

- **node**: one position in the tree. An *expanded* node holds arrays over its
  candidate children (shape ``[n]``, ``n`` = number of legal actions):

  ====================  ==========================================================
  ``actions [n] int``   the action that leads to each child
  ``P [n] float``       prior from the evaluator (renormalised over candidates;
                        Dirichlet-noised at a self-play root)
  ``N [n] float``       visit count (virtual losses included while in flight)
  ``W [n] float``       total value backed up through the child
  ``Q [n] float``       ``W / N``; for a child never tried, the first-play value
  ``U0 [n] float``      ``P / (1 + N)``, kept current so PUCT is one expression
  ====================  ==========================================================

  Every value in a node's arrays is from the view of the player **to move at that
  node** (the one choosing among the children). A node's own ``value`` (its raw net
  evaluation, or the rules' result if terminal) is also from its side to move's
  view, so it is negated on the way up.
- **evaluator**: ``evaluate(positions) -> (priors [B, A], values [B])``, one call per
  batch of leaves: :class:`zero9.search.evaluator.NetEvaluator` (the input planes of
  :mod:`zero9.nn.features` through the net of :mod:`zero9.nn.net`), or uniform priors.
- **what it costs**: a numpy call costs about a microsecond whatever the size of these
  small arrays, an item of an ``array('d')`` a few dozen nanoseconds, so ``N`` and ``W``,
  changed one child at a time, are such arrays ``n`` and ``w`` (no float object per child),
  and PUCT for all children is three numpy calls over the rows of ``QFU [3, n]``:
  ``q`` (``Q`` of the tried children, 0 for the others), ``f`` (1 for an untried child,
  else 0) and ``U0``: ``c · U0 + q + fpu · f`` is ``Q + c · U0`` with every untried child at
  the first-play value ``fpu``, one number. Properties ``N``, ``W``, ``Q`` build the arrays.
- **PUCT**: pick ``argmax Q + U`` with ``U = c_puct · P · sqrt(ΣN) / (1 + N)``.
- **first-play urgency (FPU)**: a child never tried gets ``Q = value(node) −
  fpu_reduction · sqrt(Σ P of tried children)`` (Leela Zero): the more of the
  policy already explored, the less an untried move is worth guessing.
- **simulation** (one *playout*): select a leaf by PUCT from the root, evaluate it
  (net, or the rules for a terminal position — never the net), back the value up; in
  two halves, :meth:`Tree.select_leaf` and :meth:`Tree.expand_and_backup`, so that one
  evaluator call can serve many leaves (batching).
- **virtual loss**: while a leaf is in flight, every edge on its path counts
  ``virtual_loss`` extra visits that each lost, so the next selection in the same
  batch goes elsewhere. Undone exactly at backup (``N``, ``W`` return to the true
  counts; tests check it never leaks).
- **expansion**: a leaf's evaluation (priors and value) is kept; the arrays over its
  legal moves are built when a simulation first goes *through* it (:meth:`Node.expand`),
  so the third of leaves never visited again never pay for them. A child's position is
  built (``play``) when the child is first tried: most of the tree's width is numbers.
- **root noise** (self-play only): Dirichlet noise mixed into the root's priors
  (:meth:`Tree.add_noise`), so that moves the net dislikes are still tried.
- **tree reuse**: after a move the chosen child becomes the root (:meth:`Tree.advance`).
- **visits** = ``ΣN`` at the root (reused visits count); **playouts** = simulations
  done in this search. A search's **budget** is a number of visits and/or playouts
  (:meth:`Tree.begin_search`); :meth:`Tree.leaves_wanted` says how many leaves the
  next evaluator call may take without passing it.
- **the move**: the most visited child; or, early in a self-play game, a child drawn
  in proportion to its visits (temperature 1, Leela Zero's ``randomcnt``).

Defaults (:class:`zero9.settings.SearchConfig`; values on the [-1, 1] scale, twice Leela
Zero's [0, 1] winrate scale): ``c_puct = 3.0``, ``fpu_reduction = 0.5`` (Leela Zero's
0.25 winrate), chosen by matches at equal visits; the table is in
``docs/architecture.md`` (Search defaults).
"""

from __future__ import annotations

import functools
import math
from array import array

import numpy as np

from zero9.games import Position
from zero9.search.gcpause import gc_paused
from zero9.settings import SearchConfig


def draw_by_visits(actions, visits, rng: np.random.Generator, temperature: float = 1.0) -> int:
    """An action drawn with probability proportional to ``visits ** (1 / temperature)``.

    The one visit-proportional choice of zero9 (self-play's opening moves, the player's and
    GTP's ``randomcnt``, the weakened levels); ``temperature = 1``: proportional to visits.
    (:class:`zero9.search.mcts.Tree` writes the same draw inline: the readable file stands alone.)
    """
    weights = np.asarray(visits, dtype=np.float64)
    if temperature != 1.0:
        weights = (weights / weights.max()) ** (1.0 / temperature)
    return int(actions[rng.choice(len(weights), p=weights / weights.sum())])


def legal_actions(position: Position) -> np.ndarray:
    """The legal moves as an intp array; a position may build it itself (Go: from its bitboard)."""
    build = getattr(position, "legal_actions", None)
    return build() if build is not None else np.array(position.legal_moves(), np.intp)


class Node:
    """A position in the tree; see the module docstring for the arrays."""

    __slots__ = ("position", "terminal", "value", "pending", "priors", "actions", "P", "n", "w", "QFU", "q",
                 "U0", "fpu", "children", "total", "tried_prior", "sq_sum", "raw_prior")
    # the types of the slots that start as None (annotations only: no class attributes beside the slots)
    priors: np.ndarray | None
    actions: np.ndarray | None
    n: array | None
    w: array | None
    raw_prior: np.ndarray | None

    def __init__(self, position: Position):
        self.position = position
        self.terminal = terminal = position.is_terminal()
        # Terminal positions are scored by the rules, from the side to move's view.
        self.value = position.result_value(position.to_play) if terminal else 0.0
        self.pending = False  # waiting for an evaluation (a second visit in the batch collides)
        self.priors = None  # the evaluator's priors [A], kept until expand()
        self.actions = self.n = self.w = None  # set by expand(); None means not expanded yet
        self.children: dict[int, Node] = {}  # child index -> Node, created when first tried
        self.total = 0.0  # ΣN over children (virtual losses included)
        self.tried_prior = 0.0  # Σ P over children with N > 0, for FPU
        self.sq_sum = 0.0  # Σ value² backed up through this node (its variance: the player's LCB)
        self.raw_prior = None  # the root's priors before noise, so re-noising starts clean

    @property
    def N(self) -> np.ndarray | None:
        """Visit counts, as a numpy array (the search keeps them in ``n``)."""
        return None if self.n is None else np.array(self.n)

    @property
    def W(self) -> np.ndarray | None:
        """Total values, as a numpy array (the search keeps them in ``w``)."""
        return None if self.w is None else np.array(self.w)

    @property
    def Q(self) -> np.ndarray | None:
        """Mean values, untried children at the first-play value (the search keeps ``q`` and ``fpu``)."""
        return None if self.actions is None else self.q + self.fpu * self.QFU[1]

    @property
    def expanded(self) -> bool:
        """The child arrays exist (a simulation has gone through this node, or it is the root)."""
        return self.actions is not None

    @property
    def evaluated(self) -> bool:
        """The evaluation (priors and value) is in: expanded, or ready to expand."""
        return self.priors is not None or self.actions is not None

    def expand(self, fpu_value: float | None = None) -> None:
        """Create the child arrays from the kept priors, renormalised over the legal moves."""
        # A numpy call here costs more than its arithmetic: as few as possible, no temporaries.
        actions = legal_actions(self.position)
        n = len(actions)
        assert self.priors is not None  # expanded once evaluated (``evaluated``)
        p = self.priors[actions]  # a copy (fancy indexing): safe to scale in place
        s = float(np.add.reduce(p))
        if s > 0:
            p *= 1.0 / s
        else:
            p.fill(1.0 / max(n, 1))
        rows, zeros = _untried(n)  # rows q, f, U0 of QFU (see the module docstring), and N = W = 0
        self.QFU, self.n, self.w = rows.copy(), zeros.__copy__(), zeros.__copy__()
        self.q, self.U0 = self.QFU[0], self.QFU[2]
        self.U0[:] = p  # P / (1 + 0)
        self.fpu = self.value if fpu_value is None else fpu_value  # nothing tried, nothing to reduce
        self.P, self.actions, self.priors = p, actions, None

    def q_value(self) -> float:
        """Mean value of the node from its side to move's view (its raw value before any visit)."""
        # (``w is not None``: expanded)
        return sum(self.w) / self.total if self.w is not None and self.total > 0 else self.value


@functools.cache
def _untried(n: int) -> tuple[np.ndarray, array]:
    """``QFU`` of ``n`` untried children before the priors go in, and ``n`` zeros; expansions copy them."""
    rows = np.zeros((3, n))
    rows[1] = 1.0  # f: nothing tried yet
    rows.flags.writeable = False
    return rows, array("d", bytes(8 * n))


class Leaf:
    """A path of ``tree``: ``nodes[0]`` the root, ``nodes[k+1]`` the child ``idx[k]`` of ``nodes[k]``,
    ``node`` the leaf itself."""

    __slots__ = ("tree", "nodes", "idx", "node")

    def __init__(self, tree: Tree, nodes: list[Node], idx: list[int]):
        self.tree, self.nodes, self.idx, self.node = tree, nodes, idx, nodes[-1]


class Tree:
    """One search tree over one game, with virtual-loss leaf selection for batching."""

    def __init__(self, position: Position, config: SearchConfig | None = None,
                 rng: np.random.Generator | None = None):
        self.config = config or SearchConfig()
        self.rng = rng or np.random.default_rng()
        self.root = Node(position)
        self.playouts = 0  # simulations backed up (since the tree was made)
        self.collisions = 0  # leaves selected twice in one batch (virtual loss undone, not counted)
        self.begin_search()

    # --- the budget of a search ---------------------------------------------------------

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        """Start a search that stops at ``visits`` root visits and/or ``playouts`` new ones (None: none)."""
        self.visit_limit, self.playout_limit = visits, playouts
        self.playouts_at_start = self.playouts

    def leaves_wanted(self, k: int) -> int:
        """How many leaves to select next, at most ``k``, within the budget; 0 when the search is done."""
        root = self.root
        if root.terminal:
            return 0
        if root.actions is None:  # not expanded: the root's own evaluation comes first
            return 1
        if self.visit_limit is not None:
            k = min(k, self.visit_limit - self.visits())
        if self.playout_limit is not None:
            k = min(k, self.playout_limit - (self.playouts - self.playouts_at_start))
        return max(k, 0)

    # --- the two halves of a simulation -------------------------------------------------

    def select_leaf(self) -> Leaf | None:
        """Walk down by PUCT adding virtual loss; None when the leaf is already in flight."""
        node, vl = self.root, self.config.virtual_loss
        nodes, idx = [node], []
        select_child = self.select_child
        while not node.terminal:
            if node.actions is None:
                if node.priors is None:
                    break  # not evaluated yet (or in flight): the leaf
                node.expand(self.config.fpu_value)  # the first simulation through it
            # expanded (now, or by an earlier simulation)
            assert node.actions is not None and node.n is not None and node.w is not None
            i = select_child(node)
            child = node.children.get(i)
            if child is None:  # first try: only now is the child's position built
                child = node.children[i] = Node(node.position.play(node.actions.item(i)))
            if vl:  # virtual loss: vl more visits through this edge, each one lost
                N, W = node.n, node.w
                N[i] = n = N[i] + vl
                W[i] = w = W[i] - vl
                node.q[i] = w / n
                p = node.P.item(i)
                node.U0[i] = p / (1.0 + n)
                node.total += vl
                if n == vl:  # the child's first visit
                    self._tried(node, i, p, True)
            nodes.append(child)
            idx.append(i)
            node = child
        leaf = Leaf(self, nodes, idx)
        if node.pending:
            self.collisions += 1
            self._revert_virtual_loss(leaf)
            return None
        node.pending = not node.terminal
        return leaf

    def select_child(self, node: Node) -> int:
        """PUCT: the child maximising Q + c_puct · P · sqrt(ΣN) / (1 + N)."""
        # Q + c · U0 for every child in three numpy calls, each element rounded as Q + c * U0 is in
        # Python: c · U0, then + q (0 for an untried child), then + fpu · f (an exact 0 for a tried one,
        # fpu for an untried one). Not one BLAS dot product: OpenBLAS's AVX-512 kernel fuses its
        # multiply-adds, so the scores (and the moves) would depend on the CPU. Ties: the lowest index.
        c = self.config.c_puct * math.sqrt(node.total if node.total > 1.0 else 1.0)
        qfu = node.QFU
        score = qfu[2] * c
        score += qfu[0]
        score += node.fpu * qfu[1]
        return int(score.argmax())

    def expand_and_backup(self, leaf: Leaf, priors: np.ndarray | None = None, value: float = 0.0) -> None:
        """Finish a simulation: keep the leaf's evaluation (terminal: the rules' value), back it up.

        Only the root is expanded at once (noise, statistics); other leaves when next gone through.
        """
        node = leaf.node
        if not node.terminal:
            node.priors, node.value, node.pending = priors, float(value), False
            if node is self.root:
                node.expand(self.config.fpu_value)
                if self.config.noise:
                    self.add_noise()
        self.backup(leaf, node.value)

    def backup(self, leaf: Leaf, value: float) -> None:
        """Add ``value`` (the leaf's side to move's view) along the path, undoing the virtual loss."""
        vl = self.config.virtual_loss
        dn = 1.0 - vl  # the real visit replaces the virtual ones (nothing to add for vl = 1)
        nodes, idx = leaf.nodes, leaf.idx
        child = leaf.node
        for k in range(len(idx) - 1, -1, -1):
            value = -value  # one ply up: the other player's view
            child.sq_sum += value * value
            node, i = nodes[k], idx[k]
            W = node.w
            assert W is not None and node.n is not None  # a node above the leaf: expanded (select_leaf)
            W[i] = w = W[i] + value + vl
            if dn:
                node.n[i] = n = node.n[i] + dn
                p = node.P.item(i)
                node.U0[i] = p / (1.0 + n)
                node.total += dn
                if n == dn:  # the child's first visit (no virtual loss counted it before)
                    self._tried(node, i, p, True)
            else:
                n = node.n[i]
            node.q[i] = w / n
            child = node
        if idx:
            self.playouts += 1

    def _revert_virtual_loss(self, leaf: Leaf) -> None:
        """Take back the virtual losses of a path whose leaf turned out to be in flight already."""
        vl = self.config.virtual_loss
        if not vl:
            return  # nothing was added
        for node, i in zip(leaf.nodes, leaf.idx, strict=False):
            assert node.n is not None and node.w is not None  # a node above the leaf: expanded (select_leaf)
            n = node.n[i] - vl
            w = node.w[i] + vl
            node.n[i], node.w[i] = n, w
            node.q[i] = w / n if n else 0.0  # (0: untried again, at the first-play value)
            p = node.P.item(i)
            node.U0[i] = p / (1.0 + n)
            node.total -= vl
            if not n:
                self._tried(node, i, p, False)

    def _tried(self, node: Node, i: int, p: float, tried: bool) -> None:
        """Child ``i`` (prior ``p``) was just tried for the first time, or un-tried by a revert."""
        node.QFU[1, i] = 0.0 if tried else 1.0
        node.tried_prior += p if tried else -p
        self._refresh_fpu(node)

    def _refresh_fpu(self, node: Node) -> None:
        """Untried children share one first-play value, ``node.fpu``: recompute it after a child is tried."""
        cfg = self.config
        if cfg.fpu_value is not None:
            node.fpu = cfg.fpu_value
            return
        reduction = cfg.fpu_reduction
        if node is self.root:
            if cfg.fpu_root_reduction is not None:
                reduction = cfg.fpu_root_reduction
            elif cfg.noise:
                reduction = 0.0  # noise already spreads the root visits
        node.fpu = max(node.value - reduction * math.sqrt(node.tried_prior), -1.0)

    # --- root: noise, reuse, the move -----------------------------------------------------

    def add_noise(self) -> None:
        """Mix Dirichlet noise into the root priors: P = (1-ε)·P + ε·Dir(α), α = 0.03·361 / legal moves."""
        root, cfg = self.root, self.config
        if root.actions is None or len(root.actions) == 0:  # (not expanded, or no move)
            return
        if root.raw_prior is None:
            root.raw_prior = root.P.copy()
        alpha = cfg.noise_alpha_scale / len(root.actions)
        eta = self.rng.dirichlet(np.full(len(root.actions), alpha))
        root.P = (1 - cfg.noise_eps) * root.raw_prior + cfg.noise_eps * eta
        N = root.N
        assert N is not None  # expanded
        root.U0[:] = root.P / (1.0 + N)
        root.tried_prior = float(root.P[N > 0].sum())
        self._refresh_fpu(root)

    def set_noise(self, on: bool) -> None:
        """Root noise on or off for the next search (self-play: on full moves), the root's priors to match."""
        root, was = self.root, self.config.noise
        self.config.noise = on
        if on == was or not root.expanded:
            return  # as it should be: advance() noised a reused root if noise was on; a new root waits
        if on:
            self.add_noise()
        elif root.raw_prior is not None:
            root.P = root.raw_prior
            N = root.N
            assert N is not None  # expanded
            root.U0[:] = root.P / (1.0 + N)
            root.tried_prior = float(root.P[N > 0].sum())
            self._refresh_fpu(root)

    def advance(self, action: int) -> None:
        """Play ``action`` at the root: its subtree (if searched) becomes the new root."""
        root = self.root
        child = None
        if root.expanded:
            hits = np.flatnonzero(root.actions == action)
            child = root.children.get(int(hits[0])) if len(hits) else None
        if child is None or child.pending:
            child = Node(root.position.play(action))
        self.root = child
        if child.evaluated and not child.expanded:
            child.expand(self.config.fpu_value)  # the root keeps its arrays (statistics, noise)
        if child.expanded:
            # The root's first-play value differs from an inner node's; re-noise a reused root.
            self._refresh_fpu(child)
            if self.config.noise:
                self.add_noise()

    def restrict_root(self, keep: np.ndarray) -> None:
        """Drop the root's children whose action is not in ``keep`` (analysis' allowMoves/avoidMoves).

        Only before any child is visited; the priors are renormalised over the children left.
        Nothing else changes: selection below the root is untouched.
        """
        root = self.root
        if not root.expanded or root.total or root.children:
            raise ValueError("restrict_root: only a freshly expanded, unvisited root")
        assert root.actions is not None  # expanded
        mask = np.isin(root.actions, keep)
        if mask.all():
            return
        if not mask.any():
            raise ValueError("restrict_root: no legal move is left")
        raw = root.P[mask]
        s = float(raw.sum())
        p = raw / s if s > 0 else np.full(len(raw), 1.0 / len(raw))
        rows, zeros = _untried(len(p))
        root.QFU, root.n, root.w = rows.copy(), zeros.__copy__(), zeros.__copy__()
        root.q, root.U0 = root.QFU[0], root.QFU[2]
        root.U0[:] = p
        root.P, root.actions, root.raw_prior = p, root.actions[mask], None

    def visits(self) -> int:
        return int(round(self.root.total))

    def visit_policy(self, num_actions: int) -> np.ndarray:
        """Root visit counts as a distribution over all actions, float32 ``[A]`` (the policy target)."""
        pi = np.zeros(num_actions, dtype=np.float32)
        root = self.root
        if root.expanded and root.total > 0:
            N = root.N
            assert N is not None  # expanded
            pi[root.actions] = N / root.total
        return pi

    def choose_action(self, proportional: bool = False) -> int:
        """The move to play: most visits; or drawn in proportion to visits (temperature 1, ``randomcnt``)."""
        root = self.root
        if not root.expanded or root.total <= 0:
            raise ValueError("choose_action: the root has not been searched")
        N = root.N
        assert root.actions is not None and N is not None  # expanded
        if proportional:
            return draw_by_visits(root.actions, N, self.rng)
        # Most visits; ties broken by Q then prior (lexsort's last key is the primary one).
        Q = root.Q
        assert Q is not None  # expanded
        return int(root.actions[np.lexsort((root.P, Q, N))[-1]])


def collect_leaves(tree: Tree, k: int) -> list[Leaf]:
    """Select up to ``k`` leaves for one evaluator call; terminal leaves are backed up at once.

    Stops early at a collision (a leaf already in flight): the batch goes out as it is.
    """
    leaves = []
    for _ in range(k):
        leaf = tree.select_leaf()
        if leaf is None:
            break
        if leaf.node.terminal:
            tree.expand_and_backup(leaf)
            if tree.root.terminal:
                break
        else:
            leaves.append(leaf)
    return leaves


def evaluate_leaves(evaluator, leaves: list[Leaf], answer: tuple | None = None) -> None:
    """One evaluator call for ``leaves`` (of one tree or of many; ``answer``: its result, already in),
    then expand and back up each."""
    if not leaves:
        return
    priors, values = answer or evaluator.evaluate([leaf.node.position for leaf in leaves])
    if len(priors) != len(leaves) or len(values) != len(leaves):
        raise ValueError(f"the evaluator returned {len(priors)} priors and {len(values)} values "
                         f"for {len(leaves)} positions")
    values = values.tolist() if isinstance(values, np.ndarray) else [float(v) for v in values]
    # (Lengths checked above, not by a strict zip: that probes a numpy array past its end, a cost per call.)
    for leaf, p, v in zip(leaves, priors, values, strict=False):
        leaf.tree.expand_and_backup(leaf, p, v)


def run_simulations(tree: Tree, evaluator, playouts: int, batch_size: int = 1) -> int:
    """The search loop of one tree: ``playouts`` simulations, up to ``batch_size`` leaves per evaluator call.

    Returns the simulations backed up. Many trees at once, time limits and ``stop``:
    :func:`zero9.search.batched.search_trees`, the same loop over a list of trees.
    """
    tree.begin_search(playouts=playouts)
    with gc_paused():
        while (k := tree.leaves_wanted(batch_size)) > 0:
            evaluate_leaves(evaluator, collect_leaves(tree, k))
    return tree.playouts - tree.playouts_at_start
