"""Search: PUCT over a tree of positions, guided by an evaluator (a net, or uniform priors).

Start with :mod:`zero9.search.puct` (one tree, one game); :mod:`zero9.search.batched`
drives many trees at once for self-play, :mod:`zero9.search.gumbel` is the Gumbel root
search, :mod:`zero9.search.mcts_pure` the rollout baseline, and :mod:`zero9.search.player`
the object that protocols and the window ask for moves.
"""
