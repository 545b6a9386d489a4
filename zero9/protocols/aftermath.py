"""Moved to :mod:`zero9.games.aftermath` (issue 42: the review, below this layer, counts with it too).

Kept only so ``zero9.protocols.gtp_kata`` imports as before; it should import
:func:`zero9.games.aftermath.dead_stones` and :func:`zero9.games.aftermath.count_finished`
instead, and this file go.
"""

from zero9.games.aftermath import aftermath, area_score, chain_statuses

__all__ = ["aftermath", "area_score", "chain_statuses"]
