"""Search: PUCT over a tree of positions, guided by an evaluator (a net, or uniform priors).

Start with :mod:`zero9.search.puct` (one tree, one game, its search loop);
:mod:`zero9.search.batched` is the one driver of many trees at once (self-play's games,
root-parallel play), :mod:`zero9.search.gumbel` the Gumbel root search on the same tree,
:mod:`zero9.search.mcts_pure` the rollout baseline, :mod:`zero9.search.player` the object
that protocols and the window ask for moves, and :mod:`zero9.search.gcpause` keeps
Python's garbage collector off a growing tree.
"""
