"""The network: input features, the residual tower, checkpoints, Leela Zero weights and training chunks.

Reads games (positions to encode); knows nothing of search. Start with
:mod:`zero9.nn.features` (what the net sees), then :mod:`zero9.nn.net` (the tower).
"""
