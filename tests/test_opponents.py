"""Real opponents in ``zero9 match``: Pachi for Go, pbrain brains told the match's INFO, opening files.

Pachi is built by scripts/test.sh (docs/opponents.md); GNU Go referees its finished games.
"""

import subprocess
import sys
import textwrap

import pytest

from zero9.arena.gtpclient import GTPClient, find_gnugo, find_pachi, gnugo_command
from zero9.arena.match import play_match
from zero9.arena.openings import canonical_opening, opening_for_game, parse_openings, read_openings
from zero9.arena.players import EngineOptions, make_player, spec_name
from zero9.games import make_game
from zero9.games.sgf import read_sgf

needs_pachi = pytest.mark.skipif(find_pachi() is None, reason="Pachi not built: scripts/test.sh builds it "
                                 "(docs/opponents.md), or set ZERO9_PACHI")
needs_gnugo = pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed")


# ----------------------------------------------------------------------------- Pachi


def test_pachi_specs_are_checked_before_any_game(tmp_path):
    go = make_game("go", 9)
    with pytest.raises(ValueError, match=">= 500"):  # Pachi aborts on fewer fixed playouts
        make_player("pachi:100", go, engines=EngineOptions(pachi="/bin/true"))
    with pytest.raises(ValueError, match="Pachi plays Go"):
        make_player("pachi:1000", make_game("gomoku", 9))
    missing = tmp_path / "no-pachi"
    with pytest.raises(ValueError, match="Pachi not found.*no-pachi.*--pachi PATH"):
        make_player("pachi:1000", go, engines=EngineOptions(pachi=str(missing)))
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "random", "pachi:1000", "--pachi",
                          str(missing), "--games", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Pachi not found" in out.stderr


@needs_pachi
def test_pachi_player_is_one_thread_chinese_rules_komi_from_the_game():
    agent = make_player("pachi:1000", make_game("go", 9, komi=6.5))
    assert agent.name == "pachi:1000"
    assert agent.argv[1:] == ["-r", "chinese", "-t", "=1000", "threads=1,pass_all_alive"]
    agent.new_game(make_game("go", 9, komi=6.5))
    assert agent.client.send("kgs-rules chinese") == ""  # Pachi speaks the rules we set
    agent.close()


@needs_pachi
@needs_gnugo
@pytest.mark.timeout(300)
def test_games_against_pachi_end_with_no_dead_stones_so_tromp_taylor_is_the_real_score(tmp_path):
    """Pachi against itself (and GNU Go) to the last pass; GNU Go then finds no dead stone on the
    board, so the Tromp-Taylor result zero9 wrote equals a referee's Chinese count."""
    game = make_game("go", 9, komi=7.5)
    result = play_match("pachi:500", "gnugo:1", game, 2, seed=1, sgf_dir=tmp_path)
    assert len(result.games) == 2
    for g in result.games:
        assert not g.result.endswith(("F", "T")), g.events
        record = read_sgf(g.sgf)
        if g.result.endswith("R"):
            continue
        assert [a for _, a in record.moves[-2:]] == [81, 81]  # ended by two passes
        with GTPClient(gnugo_command(level=1, size=9, komi=7.5)) as gnugo:
            for colour, action in record.moves:
                gnugo.send(f"play {'b' if colour == 1 else 'w'} {game.action_to_vertex(action)}")
            assert gnugo.send("final_status_list dead") == "", (g.result, g.sgf)
            referee = gnugo.send("final_score")
        assert referee == g.result, (referee, g.result)


@needs_pachi
@pytest.mark.timeout(300)
def test_match_cli_against_pachi_found_through_the_option(tmp_path):
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "uniform:8", "pachi:500", "--pachi",
                          find_pachi(), "--games", "2", "--sgf-dir", str(tmp_path), "--seed", "2"],
                         capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr
    assert "uniform:8 vs pachi:500: " in out.stdout
    for i in range(2):
        record = read_sgf(tmp_path / f"game-000{i}.sgf")
        assert record.result[:2] in ("B+", "W+") and not record.result.endswith(("F", "T"))
        assert "pachi:500" in (record.black, record.white)


# ----------------------------------------------------------------------------- pbrain INFO and logs


def _info_brain(tmp_path) -> str:
    """A Gomocup brain that reports each INFO it gets as a MESSAGE and on stderr, then plays the
    first empty point; it honours max_node=0 by playing off the board (to prove INFO reached it)."""
    script = tmp_path / "info_brain.py"
    script.write_text(textwrap.dedent("""
        import sys
        size, taken, info = 0, set(), {}
        def move():
            if info.get("max_node") == "0":
                return "99,99"
            x, y = next((x, y) for y in range(size) for x in range(size) if (x, y) not in taken)
            taken.add((x, y))
            return f"{x},{y}"
        lines = iter(sys.stdin)
        for line in lines:
            words = line.strip().replace(",", " ").split()
            command = words[0].upper() if words else ""
            if command == "START":
                size, taken = int(words[1]), set()
                print("OK", flush=True)
            elif command == "INFO":
                info[words[1]] = words[2]
                print(f"INFO {words[1]}={words[2]}", file=sys.stderr, flush=True)
            elif command in ("BEGIN", "TURN", "BOARD"):
                if command == "TURN":
                    taken.add((int(words[1]), int(words[2])))
                if command == "BOARD":
                    taken = set()
                    for row in lines:
                        if row.strip().upper() == "DONE":
                            break
                        x, y, _ = row.strip().split(",")
                        taken.add((int(x), int(y)))
                print("MESSAGE heard " + " ".join(f"{k}={v}" for k, v in sorted(info.items())), flush=True)
                print(move(), flush=True)
            elif command == "END":
                break
    """))
    return f"{sys.executable} {script}"


@pytest.mark.timeout(120)
def test_pbrain_hears_the_match_time_controls_and_info_and_its_chatter_reaches_the_match_log(tmp_path):
    game = make_game("gomoku", 7)
    brain = "pbrain:max_node=1234 " + _info_brain(tmp_path)
    engines = EngineOptions(turn_time=2.5, game_time=60, pbrain_info=(("max_memory", "83886080"),))
    result = play_match("random", brain, game, 2, seed=3, sgf_dir=tmp_path / "games", engines=engines)
    assert all(not g.result.endswith(("F", "T")) for g in result.games), [g.events for g in result.games]
    assert result.b.endswith("info_brain.py max_node=1234")
    log = (tmp_path / "games" / "engines.log").read_text()
    for heard in ("timeout_turn=2500", "timeout_match=60000", "rule=0", "max_memory=83886080",
                  "max_node=1234", "time_left="):
        assert heard in log, heard
    assert "game 0: " in log and "game 1: " in log
    assert ": MESSAGE heard" in log and ": stderr INFO rule=0" in log
    # The standard (exactly five) variant is rule 1 in Gomocup's bit mask.
    standard = make_game("gomoku", 7, variant="standard")
    agent = make_player(brain, standard)
    assert ("rule", "1") in agent.info and agent.info[-1] == ("max_node", "1234")  # the user's come last


@pytest.mark.timeout(120)
def test_pbrain_info_from_the_command_line_reaches_the_brain(tmp_path):
    brain = "pbrain:" + _info_brain(tmp_path)
    out = subprocess.run([sys.executable, "-m", "zero9", "match", "random", brain, "--game", "gomoku",
                          "--size", "7", "--games", "1", "--pbrain-info", "max_node=0", "--sgf-dir",
                          str(tmp_path / "g")], capture_output=True, text=True, timeout=100)
    assert out.returncode == 0, out.stderr
    # max_node=0 makes this brain answer off the board: the INFO arrived, and the fault is logged.
    assert "B+F" in out.stdout and "99,99" in (tmp_path / "g" / "events.log").read_text()
    for bad in (["--pbrain-info", "max_node"], ["--turn-time", "500"], ["--game-time", "-1"]):
        refused = subprocess.run([sys.executable, "-m", "zero9", "match", "random", brain, "--game", "gomoku",
                                  "--size", "7", "--games", "1"] + bad, capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2, bad
        assert any(word in refused.stderr for word in ("KEY=VALUE", "move timeout", ">= 0")), refused.stderr
    assert spec_name("pbrain:max_node=10000 /opt/rapfi/pbrain-rapfi") == "pbrain-rapfi max_node=10000"


@pytest.mark.timeout(120)
def test_a_game_clock_that_runs_out_loses_on_time(tmp_path):
    slow = tmp_path / "slow_brain.py"
    slow.write_text(textwrap.dedent("""
        import sys, time
        for line in sys.stdin:
            word = line.split()[0].upper() if line.split() else ""
            if word == "START":
                print("OK", flush=True)
            elif word == "BEGIN":
                time.sleep(0.8)
                print("3,3", flush=True)
            elif word == "END":
                break
    """))
    engines = EngineOptions(turn_time=0.2, game_time=0.5)
    result = play_match(f"pbrain:{sys.executable} {slow}", "random", make_game("gomoku", 7), 1,
                        seed=1, engines=engines, move_timeout=10)
    assert result.games[0].result == "W+T", result.games[0].events
    assert "ran out of its 0.5 s game time" in result.games[0].events[0]


@pytest.mark.timeout(120)
def test_a_turn_the_brain_dropped_as_rapfi_does_is_sent_again_once(tmp_path):
    # Rapfi reads a command's first word while its last search is still marked running, drops it,
    # then reads the coordinates as a command: 'ERROR Unknown command: x,y'. This brain does that to
    # its first TURN of each game, and to every TURN in a game where it is told max_node=0.
    script = tmp_path / "dropping_brain.py"
    script.write_text(textwrap.dedent("""
        import sys
        taken, dropped, stubborn = set(), False, False
        def move():
            for y in range(7):
                for x in range(7):
                    if (x, y) not in taken:
                        taken.add((x, y))
                        return f"{x},{y}"
        lines = iter(sys.stdin)
        for line in lines:
            words = line.split()
            word = words[0].upper() if words else ""
            if word == "START":
                taken, dropped = set(), False
                print("OK", flush=True)
            elif word == "INFO" and words[1:] == ["max_node", "0"]:
                stubborn = True
            elif word == "BEGIN":
                print(move(), flush=True)
            elif word == "TURN":
                if stubborn or not dropped:
                    dropped = True
                    print(f"ERROR Unknown command: {words[1]}", flush=True)
                    continue
                x, y = words[1].split(",")
                taken.add((int(x), int(y)))
                print(move(), flush=True)
            elif word == "END":
                break
    """))
    game = make_game("gomoku", 7)
    result = play_match("random", f"pbrain:{sys.executable} {script}", game, 2, seed=5,
                        sgf_dir=tmp_path / "games")
    assert all(not g.result.endswith("F") for g in result.games), [g.events for g in result.games]
    log = (tmp_path / "games" / "engines.log").read_text()
    assert log.count("dropped 'TURN") == 2 and "sent again" in log
    # Dropped twice in a row is a fault, as any other ERROR.
    stubborn = play_match("random", f"pbrain:max_node=0 {sys.executable} {script}", game, 1, seed=5)
    assert stubborn.games[0].result.endswith("F") and "Unknown command" in stubborn.games[0].events[0]


# ----------------------------------------------------------------------------- openings


def test_opening_files_are_read_checked_and_played_twice_with_colours_swapped(tmp_path):
    game = make_game("gomoku", 9)
    text = "# two openings\nE5 F6 D4   # a comment\n\n-\n"
    openings = parse_openings(text, game)
    assert openings == [tuple(game.vertex_to_action(v) for v in ("E5", "F6", "D4")), ()]
    assert [opening_for_game(openings, i) for i in range(5)] == [openings[0]] * 2 + [()] * 2 + [openings[0]]
    for bad, reason in (("E5 E5\n", "line 1"), ("Z99\n", "line 1"), ("# none\n", "no openings"),
                        ("E5\nA1 B1 A2 B2 A3 B3 A4 B4 A5\n", "line 2: the game is already over")):
        with pytest.raises(ValueError, match=reason):
            parse_openings(bad, game, where="f.txt")
    path = tmp_path / "openings.txt"
    path.write_text("E5 F6 D4\nD4 E5\n")
    openings = read_openings(path, game)
    result = play_match("random", "uniform:2", game, 4, seed=1, sgf_dir=tmp_path / "games", openings=openings)
    for g in result.games:
        record = read_sgf(g.sgf)
        opening = opening_for_game(openings, g.index)
        assert [a for _, a in record.moves[: len(opening)]] == list(opening)
        assert f"opening {g.index // 2}" in record.properties.get("GC", "")


def test_shipped_gomoku_openings_are_legal_and_many_and_the_tuning_set_shares_none_with_the_match_set():
    game = make_game("gomoku", 15)
    openings = read_openings("example-data/openings_gomoku_15x15.txt", game)
    assert len(openings) >= 50 and len(set(openings)) == len(openings)
    assert all(len(o) >= 3 for o in openings)
    tuning = read_openings("example-data/openings_gomoku_15x15_tuning.txt", game)
    assert len(tuning) == 60 and all(len(o) == 3 for o in tuning)
    match_set, tuning_set = ({canonical_opening(o, 15) for o in file} for file in (openings, tuning))
    assert len(tuning_set) == 60 and not match_set & tuning_set


def test_shipped_go_openings_are_legal_and_make_openings_writes_go_ones(tmp_path):
    go = make_game("go", 9)
    openings = read_openings("example-data/openings_go_9x9.txt", go)
    assert len(openings) == 20 and len(set(openings)) == 20 and all(len(o) == 2 for o in openings)
    out = tmp_path / "go.txt"
    command = [sys.executable, "scripts/make_openings.py", "--game", "go", "--size", "9", "--stones", "2",
               "--radius", "1", "--count", "2", "--visits", "4", "--candidates", "20", "--margin", "0.5",
               "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "9x9 Go (komi 7.5) openings" in out.read_text()
    first = read_openings(out, go)
    assert len(first) == 2
    # --exclude: the same candidates again, none of the first file's openings (under any symmetry)
    again = tmp_path / "again.txt"
    done = subprocess.run(command[:-1] + [str(again), "--exclude", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"--exclude {out}" in again.read_text()
    second = read_openings(again, go)
    assert not {canonical_opening(o, 9) for o in first} & {canonical_opening(o, 9) for o in second}
