"""The server counts each game once (issue 42): the same moves under any seed, from any client, turned
or mirrored, self-play or match, are kept once and credited to whoever sent them first.

Reported on an older main: one legal game uploaded under 15 new seeds was accepted 15 times, and a
classmate's real game re-uploaded under one's own seed was accepted and credited to the re-uploader.
The server here is the real one in-process (its checks and its SQLite database, no HTTP): the
HTTP path is the same ``check_game``/``submit_match`` (tests/test_server_attacks.py goes through it).
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the server extra: pip install '.[server]'")

from helpers import random_win

from zero9.distributed.client import play_selfplay  # noqa: E402
from zero9.distributed.config import Limits, TaskOptions  # noqa: E402
from zero9.distributed.server import Caller, Server  # noqa: E402
from zero9.distributed.validation import Rejected, game_digest  # noqa: E402
from zero9.distributed.variants import Variants  # noqa: E402
from zero9.games import BLACK, WHITE, make_game  # noqa: E402
from zero9.games.sgf import parse_sgf, write_sgf  # noqa: E402
from zero9.nn.features import point_maps  # noqa: E402

pytestmark = pytest.mark.timeout(300)
GO9 = make_game("go", 9, komi=7.5)
ROOT = Path(__file__).resolve().parents[1]
ANN, BOB, CAROL = (Caller(name, True) for name in ("ann", "bob", "carol"))


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Server:
    server = Server(tmp_path_factory.mktemp("dup") / "run", GO9, TaskOptions(visits=2, resign_pct=0),
                    limits=Limits(requests_per_minute=0))
    server.ensure_start_net(None, 1, 8)
    return server


@pytest.fixture(scope="module")
def real_game(server, tmp_path_factory):
    """A real self-play game of at least 20 moves, played by zero9's client with the server's net."""
    for _ in range(8):
        task = server.get_task(ANN)
        net = fetch_network_in_process(server, task, tmp_path_factory.mktemp("cache"))
        game = play_selfplay([task], net, "cpu", leaves=4)[0]
        if int(game.fields["movescount"]) >= 20 and b"+R" not in gzip.decompress(game.files["sgf"]):
            return game
    pytest.fail("no real game of 20 moves ending by passes in 8 tries")


def fetch_network_in_process(server: Server, task: dict, cache):
    path = server.network_file(task["hash"])
    target = cache / path.name
    target.write_bytes(path.read_bytes())
    return target


def answer(server: Server, caller: Caller, sgf_gz: bytes, chunk_gz: bytes, fields: dict) -> dict:
    """Upload this game as the answer to a new task of ``caller``'s."""
    task = server.get_task(caller)
    assert task["cmd"] == "selfplay"
    form = dict(fields, random_seed=task["random_seed"], networkhash=task["hash"],
                options_hash=task["options_hash"])
    return server.submit_game(form, sgf_gz, chunk_gz, caller)


def test_a_game_counts_once_for_whoever_sent_it_first(server, real_game):
    sgf, chunk, fields = real_game.files["sgf"], real_game.files["trainingdata"], real_game.fields
    before = server.status()["games"]
    assert answer(server, ANN, sgf, chunk, fields)["accepted"]
    refusals = []
    for _ in range(15):  # the same game under 15 new seeds
        with pytest.raises(Rejected) as refused:
            answer(server, ANN, sgf, chunk, fields)
        refusals.append(refused.value)
    with pytest.raises(Rejected) as by_bob:  # a classmate's game under one's own seed
        answer(server, BOB, sgf, chunk, fields)
    assert {r.status for r in refusals} == {409} and by_bob.value.status == 409
    assert "already uploaded by you" in refusals[0].reason
    assert "already uploaded by another client" in by_bob.value.reason
    assert "counts once" in by_bob.value.reason
    status = server.status()
    assert status["games"] == before + 1
    clients = {c["client"]: c["games"] for c in status["clients"]}
    assert clients.get("ann") == 1 and clients.get("bob", 0) == 0


def test_different_games_from_one_base_are_all_kept(server, real_game):
    """The load generator's games (scripts/bench_server.py) are different games that pass every check."""
    variants = Variants(GO9, real_game.files["sgf"], real_game.files["trainingdata"], seed=1)
    before = server.status()["games"]
    for _ in range(20):
        sgf, chunk, fields = variants.make()
        assert answer(server, CAROL, sgf, chunk, fields)["accepted"]
    assert server.status()["games"] == before + 20


def test_the_digest_is_the_same_turned_or_mirrored_and_differs_for_other_games():
    rng = random.Random(3)
    for game in (GO9, make_game("go", 9, komi=6.5), make_game("gomoku", 9)):
        position, actions = game.new_position(), []
        while not position.is_terminal() and len(actions) < 30:
            action = rng.choice([a for a in position.legal_moves() if a != game.pass_action])
            actions.append(action)
            position = position.play(action)
        if game.pass_action is not None:
            actions.append(game.pass_action)
        digest = game_digest(game, actions)
        for point_map in point_maps(game.size):
            turned = [a if a == game.pass_action else int(point_map[a]) for a in actions]
            assert game_digest(game, turned) == digest
        changed = list(actions)
        changed[5] = next(a for a in range(game.size ** 2) if a not in actions)
        assert game_digest(game, changed) != digest
        assert game_digest(game, actions[:-1]) != digest
    assert game_digest(GO9, [0, 1, 2]) != game_digest(make_game("go", 9, komi=6.5), [0, 1, 2])


def test_a_match_game_counts_once_even_mirrored(server):
    candidate = server.add_network((ROOT / "example-data" / "go_9x9_best.txt.gz").read_bytes())
    server._forget_state()
    tasks = [(ANN, server.get_task(ANN))] + [(BOB, server.get_task(BOB)) for _ in range(2)]
    assert all(task["cmd"] == "match" for _, task in tasks), [task["cmd"] for _, task in tasks]
    colour = {id(task): BLACK if task["black_hash"] == candidate else WHITE for _, task in tasks}

    def result(caller: Caller, task: dict, sgf_gz: bytes, moves: int) -> dict:
        winner = colour[id(task)]
        loser = task["white_hash"] if winner == BLACK else task["black_hash"]
        form = {"winnerhash": candidate, "loserhash": loser, "winnercolor": "black" if winner == BLACK
                else "white", "movescount": str(moves), "score": "", "options_hash": task["options_hash"],
                "random_seed": task["random_seed"], "clientversion": "18"}
        return server.submit_match(form, sgf_gz, caller)

    ann_task = tasks[0][1]
    sgf, moves = random_win(colour[id(ann_task)], random.Random(11))
    sgf_gz = gzip.compress(sgf)
    assert result(ANN, ann_task, sgf_gz, moves)["accepted"]
    bob_task = next(task for caller, task in tasks[1:] if colour[id(task)] == colour[id(ann_task)])
    record = parse_sgf(gzip.decompress(sgf_gz))
    mirror = point_maps(9)[4]  # bob sends ann's game mirrored: the same game to the server
    mirrored = [(c, a if a == GO9.pass_action else int(mirror[a])) for c, a in record.moves]
    with pytest.raises(Rejected) as refused:
        result(BOB, bob_task, gzip.compress(write_sgf(GO9, mirrored, record.result).encode()), moves)
    assert refused.value.status == 409 and "another client" in refused.value.reason
    assert server.status()["match_games"] == 1
