"""Matches against real programs: GNU Go over GTP, gomokubench, zero9's own pbrain; faults and SPRT."""

import argparse
import os
import subprocess
import sys
import textwrap

import pytest

from zero9.arena.gtpclient import GTPClient, find_gnugo, gnugo_command
from zero9.arena.match import play_match
from zero9.arena.players import EngineOptions, make_player, spec_name
from zero9.cli.match import add_arguments, engines_from_args
from zero9.games import make_game
from zero9.games.sgf import read_sgf

needs_gnugo = pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed")


def test_bad_specs_are_refused_with_the_spec_named():
    game = make_game("go", 9)
    for spec in ("no/such/net.pt", "mcts:x", "uniform:0", "gtp:", "gnugo:abc"):
        with pytest.raises(ValueError, match="bad player|expected"):
            make_player(spec, game)
    with pytest.raises(ValueError, match="Gomoku"):
        make_player("pbrain:whatever", game)
    assert spec_name("gtp:/usr/games/gnugo --mode gtp --level 1") == "gnugo --mode gtp --level 1"
    assert spec_name("nets/best.txt.gz@50") == "best@50"
    assert spec_name({"kind": "net", "path": "x/abc.pt", "visits": 8}) == "abc@8"


@needs_gnugo
def test_gnugo_player_captures_dead_stones_before_passing():
    player = make_player("gnugo:2", make_game("go", 9, komi=6.5))
    argv = player.argv
    assert argv.count("--capture-all-dead") == 1 and argv[argv.index("--komi") + 1] == "6.5"
    player.close()


@needs_gnugo
@pytest.mark.timeout(300)
def test_full_9x9_game_against_gnu_go_through_the_cli_is_legal_for_gnu_go(tmp_path):
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "uniform:8", "gnugo:1", "--games", "1",
                          "--sgf-dir", str(tmp_path), "--seed", "1"],
                         capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr
    assert "uniform:8 vs gnugo:1: " in out.stdout
    assert "win rate" in out.stdout and "Elo difference" in out.stdout
    record = read_sgf(tmp_path / "game-0000.sgf")
    assert record.black == "uniform:8" and record.white == "gnugo:1"
    assert record.result[:2] in ("B+", "W+") and not record.result.endswith("F")
    assert len(record.actions) > 20
    # The last two moves are passes (Tromp-Taylor after both pass) unless someone resigned.
    if not record.result.endswith("R"):
        assert [a for _, a in record.moves[-2:]] == [81, 81]
    # GNU Go replays every move: each one legal under its Chinese rules and positional superko.
    with GTPClient(gnugo_command(level=1, size=9)) as gnugo:
        gnugo.send("clear_board")
        for colour, action in record.moves:
            vertex = record.game.action_to_vertex(action)
            gnugo.send(f"play {'b' if colour == 1 else 'w'} {vertex}")  # raises GTPError if illegal
        tt = gnugo.send("final_score")
    assert tt[:1] in ("B", "W", "0")


def _broken_engine(tmp_path, behaviour: str) -> str:
    """A GTP engine that follows the protocol until genmove, then misbehaves as asked."""
    script = tmp_path / f"broken_{behaviour}.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        for line in sys.stdin:
            cmd = line.split()[0] if line.split() else ""
            if cmd == "genmove":
                if "{behaviour}" == "crash":
                    sys.exit(3)
                if "{behaviour}" == "sleep":
                    time.sleep(30)
                print("= Z99" if "{behaviour}" == "nonsense" else "= A1", flush=True)
                print(flush=True)
                continue
            print("= ", flush=True)
            print(flush=True)
            if cmd == "quit":
                break
    """))
    return f"gtp:{sys.executable} {script}"


@pytest.mark.timeout(200)
def test_crashing_timing_out_and_illegal_opponents_lose_and_the_match_goes_on(tmp_path):
    game = make_game("go", 5)
    for behaviour, mark in (("crash", "+F"), ("sleep", "+T"), ("nonsense", "+F"), ("illegal", "+F")):
        spec = _broken_engine(tmp_path, behaviour)
        sgf_dir = tmp_path / behaviour
        result = play_match("random", spec, game, 2, seed=1, sgf_dir=sgf_dir, move_timeout=2)
        assert result.wins == 2 and len(result.games) == 2, (behaviour, result.games)
        results = [g.result for g in result.games]
        assert all(r.endswith(mark) for r in results), (behaviour, results)
        log = (sgf_dir / "events.log").read_text()
        assert log.count("forfeits" if behaviour != "illegal" else "illegal") >= 2, log
    # "illegal": A1 is played once legally; the second time it is occupied
    assert any("illegal A1" in g.events[0] for g in result.games)


def test_an_engine_that_cannot_start_stops_the_match_before_any_game(tmp_path):
    """Not a sweep of forfeits: a mistyped engine path (or a config it refuses) is the user's error."""
    missing = tmp_path / "no-such-engine"
    with pytest.raises(ValueError, match="could not start a game, so no game was played") as caught:
        play_match("random", f"gtp:{missing} gtp", make_game("go", 5), 4, sgf_dir=tmp_path / "sgf")
    assert str(missing) in str(caught.value)
    assert not list((tmp_path / "sgf").glob("*.sgf"))
    refuses = tmp_path / "refuses.py"  # starts, then dies on its first command (a bad config)
    refuses.write_text("import sys\nsys.exit('bad config')\n")
    with pytest.raises(ValueError, match="could not start a game"):
        play_match("random", f"gtp:{sys.executable} {refuses}", make_game("go", 5), 4)
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "random", f"gtp:{missing}", "--game", "go",
                          "--size", "5", "--games", "2"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "could not start a game" in out.stderr and "wins" not in out.stdout


def test_sprt_stops_a_one_sided_match_early(tmp_path):
    spec = _broken_engine(tmp_path, "nonsense")
    result = play_match("random", spec, make_game("go", 5), 40, sprt=(0, 200), seed=2)
    assert result.sprt_decision == "H1"
    assert len(result.games) < 40 and result.wins == len(result.games)
    assert "H1 accepted" in result.summary(0, 200)


@pytest.mark.timeout(300)
def test_gomoku_match_against_gomokubench_through_the_cli(tmp_path):
    pytest.importorskip("libs.ai", reason="gomokubench not installed")
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "uniform:4", "gomokubench:easy", "--game",
                          "gomoku", "--size", "9", "--games", "2", "--sgf-dir", str(tmp_path), "--seed", "3"],
                         capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr
    assert "(2 games)" in out.stdout
    for i in range(2):
        record = read_sgf(tmp_path / f"game-000{i}.sgf")
        assert record.game.name == "gomoku"
        assert record.result in ("B+", "W+", "0") and not record.result.endswith("F")
        final = record.game.new_position()
        for _, action in record.moves:
            final = final.play(action)
        assert final.is_terminal() or record.result == "0"
    assert "gomokubench:easy" in {read_sgf(tmp_path / "game-0000.sgf").white,
                                  read_sgf(tmp_path / "game-0001.sgf").black}


def test_match_cli_plays_the_gomoku_that_connect_names_and_refuses_go_options(tmp_path):
    base = [sys.executable, "-m", "zero9", "match", "random", "mcts:30", "--game", "gomoku", "--size", "6"]
    out = subprocess.run(base + ["--connect", "4", "--games", "2", "--sgf-dir", str(tmp_path), "--seed", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for i in range(2):
        record = read_sgf(tmp_path / f"game-000{i}.sgf")
        assert record.game.to_dict()["connect"] == 4
        moves = [action for _, action in record.moves]
        assert record.game.play_moves(moves).is_terminal()
        five = make_game("gomoku", 6)  # the same moves under the default connect 5 go on
        assert not five.play_moves(moves).is_terminal()
    refused = subprocess.run(base + ["--komi", "6.5"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--komi is for Go only" in refused.stderr


@pytest.mark.timeout(300)
def test_pbrain_engine_plays_through_match(tmp_path):
    brain = f"pbrain:{sys.executable} -m zero9 pbrain -w uniform -v 4"
    result = play_match("random", brain, make_game("gomoku", 7), 2, seed=4, sgf_dir=tmp_path)
    assert [g.index for g in result.games] == [0, 1]
    for g in result.games:
        assert not g.result.endswith(("F", "T")), g.events
        assert os.path.exists(g.sgf)
    assert result.games[0].white.startswith("python") and result.games[1].black.startswith("python")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_parallel_games_in_worker_processes(tmp_path):
    result = play_match("random", "uniform:2", make_game("go", 5), 4, parallel=2, seed=5, sgf_dir=tmp_path)
    assert [g.index for g in result.games] == [0, 1, 2, 3]
    assert len(list(tmp_path.glob("game-*.sgf"))) == 4
    assert result.wins + result.losses + result.draws == 4


def test_search_options_reach_the_nets_search_and_bad_ones_are_refused():
    net = "example-data/gomoku_9x9_best.pt"
    game = make_game("gomoku", 9)
    agent = make_player(f"{net}@16", game, engines=EngineOptions(c_puct=1.5, fpu_reduction=0.0, batch_size=1,
                                                                  lcb=True))
    agent.new_game(game)
    player = agent.player
    assert (player.config.c_puct, player.config.fpu_reduction) == (1.5, 0.0)
    assert (player.play.batch_size, player.play.lcb) == (1, True)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([net, "random", "--c-puct", "2", "--batch-size", "1", "--lcb"])
    engines = engines_from_args(args)
    assert (engines.c_puct, engines.fpu_reduction, engines.batch_size, engines.lcb) == (2.0, 0.5, 1, True)
    for bad, message in ((["--c-puct", "0"], "--c-puct"), (["--fpu-reduction", "-1"], "--fpu-reduction"),
                         (["--batch-size", "0"], "--batch-size")):
        with pytest.raises(ValueError, match=message):
            engines_from_args(parser.parse_args([net, "random", *bad]))
