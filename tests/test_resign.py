"""The server's resignation check (zero9/distributed/resign.py): a resignation is believed where the
resigner's own net calls the position lost, or where one move can end the game and the area count
already has the resigner behind (a weak early net resigns such games honestly at a raw value of 0.5)."""

from __future__ import annotations

import pytest
import torch

from zero9.distributed.resign import ResignCheck, behind_at_a_scored_end
from zero9.distributed.validation import Rejected
from zero9.games.go import Go
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.net import make_net

PASS = 25  # the 5x5 board's pass


def test_a_scored_end_in_reach_with_the_resigner_behind():
    capped = Go(5, move_cap=10)
    near_cap = capped.play_moves([PASS, 12, PASS, 6, PASS, 18, PASS, 8])  # black to move at 8 of 10, no stone
    assert behind_at_a_scored_end(near_cap)
    uncapped = Go(5, move_cap=0)
    # the same stones far from any end
    assert not behind_at_a_scored_end(uncapped.play_moves([PASS, 12, PASS, 6, PASS, 18, PASS, 8]))
    after_pass = uncapped.play_moves([0, 12, 1, PASS])  # white passed: a black pass ends it, black behind
    assert behind_at_a_scored_end(after_pass)
    ahead = uncapped.play_moves([0, 12, 1, 6, 2, PASS])  # 3 stones to 2 after a pass, behind by komi
    assert behind_at_a_scored_end(ahead)
    leading = Go(5, komi=0.5, move_cap=0).play_moves([0, 12, 1, 6, 2, PASS])
    assert not behind_at_a_scored_end(leading)  # black leads the count: its resignation is not believed here


def test_the_check_believes_the_count_near_the_end_and_the_net_elsewhere(tmp_path):
    torch.manual_seed(0)
    game = Go(5, move_cap=10)
    net = make_net(game, 1, 8)
    path = tmp_path / "net.pt"
    save_checkpoint(path, net, {"game": game.to_dict()})
    check = ResignCheck(game, lambda _hash: path, resign_pct=5)
    near_cap = game.play_moves([PASS, 12, PASS, 6, PASS, 18, PASS, 8])
    far = game.play_moves([PASS, 12])
    assert check.raw_winrate("f" * 16, near_cap) > 0.25  # a random net sees an even game
    check.check(near_cap, "f" * 16)  # believed: the count decides there
    assert check.raw_winrate("f" * 16, far) > 0.25
    with pytest.raises(Rejected, match="resigned at move 2"):  # no end in reach: the net decides, and refuses
        check.check(far, "f" * 16)
