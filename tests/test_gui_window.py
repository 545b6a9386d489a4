"""The window's second pass (issue 37, issue 33's window items): the variation tree, the file chooser,
the text field, loaded games shown as what they are, every label fitting from 800x600 up, the
New-game panel's defaults, errors shown whole, score lead and territory from zero9.search.analysis.

Driven like tests/test_gui.py: the real window under SDL_VIDEODRIVER=dummy with synthetic events,
the shipped nets, real SGF files from docs/runs.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from gui.history import GameTree, tree_from_lines  # noqa: E402
from gui.scoring import count_text_of, dead_stones_of, territory_of, winning_line_of  # noqa: E402
from gui.settings import Settings  # noqa: E402
from gui.sgfio import Record, load_sgf, open_game, save_sgf  # noqa: E402
from gui.widgets import TextField  # noqa: E402
from tests import test_gui as base  # noqa: E402
from tests.test_gui import FAST, click_at, click_vertex, click_widget, press, pump, stone  # noqa: E402
from zero9.cli import play as play_cli  # noqa: E402
from zero9.games import BLACK, EMPTY, WHITE, make_game  # noqa: E402

make_app, go_engine = base.make_app, base.go_engine  # the same fixtures as tests/test_gui.py
ROOT = Path(__file__).resolve().parents[1]
STRONG_VS_GNUGO = ROOT / "docs/runs/levels/level_strong-vs-gnugo_10/game-0000.sgf"  # B+3.5, 87 moves
RAPFI_GOMOKU = ROOT / "docs/runs/opponents-cpu/gomoku-rapfi1000/game-0000.sgf"  # W+ by five, 28 moves
SIZES = [(800, 600), (1024, 768), (1280, 800)]


def key(app, k: int, text: str = "", mod: int = 0) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, unicode=text, mod=mod))
    app.step()


# ---- the tree and the text field, without a window -------------------------------------------------


def test_game_tree_branches_switches_and_deletes():
    go = make_game("go", 9, komi=7.5)
    tree = GameTree(go.new_position())
    e5, c3, g7, d4 = (go.vertex_to_action(v) for v in ("E5", "C3", "G7", "D4"))
    for a in (e5, c3, g7):
        tree.play(tree.node.position.play(a))
    tree.goto(1)  # after E5: a new move there starts a branch, the old line stays
    tree.play(tree.node.position.play(d4))
    assert [p.last_move for p in tree.positions[1:]] == [e5, d4] and tree.count() == 5
    assert tree.siblings() == (2, 2) and tree.branch_points() == [1]
    assert tree.switch(1) and [p.last_move for p in tree.positions[1:]] == [e5, c3, g7]
    tree.goto(1)
    tree.play(tree.node.position.play(c3))  # an existing child is followed, its moves kept
    assert tree.count() == 5 and len(tree.line) == 4
    assert sorted(tree.all_lines()) == sorted([[e5, c3, g7], [e5, d4]])
    tree.goto(2)
    assert tree.delete_branch() and tree.cursor == 1 and [p.last_move for p in tree.positions[1:]] == [e5, d4]
    assert tree.count() == 3 and not GameTree(go.new_position()).delete_branch()


def test_tree_from_lines_names_the_bad_variation():
    go = make_game("go", 9)
    with pytest.raises(ValueError, match="variation 1.*move 2"):
        tree_from_lines(go.new_position(), [[40, 41], [40, 40]], "g.sgf")


def test_text_field_edits_like_a_text_box():
    f = TextField(value="old/junk/path.sgf")
    f.start(select_all=True)

    def k(code: int, text: str = "", mod: int = 0) -> None:
        f.key(pygame.event.Event(pygame.KEYDOWN, key=code, unicode=text, mod=mod))

    k(0, "a")  # typing replaces the selected text
    assert f.draft == "a"
    for ch in "bcd":
        k(0, ch)
    k(pygame.K_LEFT)
    k(pygame.K_LEFT)
    k(0, "X")
    assert f.draft == "abXcd"
    k(pygame.K_HOME)
    k(pygame.K_DELETE)
    k(pygame.K_END)
    k(pygame.K_BACKSPACE)
    assert f.draft == "bXc"
    k(pygame.K_a, "\x01", pygame.KMOD_CTRL)  # Ctrl+A selects all; it types nothing
    assert f.all_selected and f.draft == "bXc"
    k(pygame.K_BACKSPACE)
    assert f.draft == "" and f.caret == 0
    k(pygame.K_RETURN)
    assert f.value == "" and not f.editing


def test_handicap_stones_make_the_start_position(tmp_path):
    path = tmp_path / "h.sgf"
    path.write_text("(;GM[1]SZ[9]KM[0.5]HA[2]AB[cg][gc]PB[Kim]PW[Lee];W[ee];B[dd])")
    game, tree, record = open_game(path)
    start = tree.root.position
    board = start.board_array()
    assert board[game.vertex_to_action("C3")] == BLACK and board[game.vertex_to_action("G7")] == BLACK
    assert int((board != EMPTY).sum()) == 2 and start.to_play == WHITE and len(tree.line) == 3
    bad = tmp_path / "bad-setup.sgf"
    bad.write_text("(;GM[1]SZ[9]AB[ai]AW[ai];B[ee])")  # A1 twice
    with pytest.raises(ValueError, match="bad-setup.sgf"):
        open_game(bad)


# ---- the window ----------------------------------------------------------------------------------


def test_variations_in_the_window_and_as_sgf_variations(make_app, go_engine, tmp_path):
    go = make_game("go", 9, komi=7.5)
    path = tmp_path / "line.sgf"
    path.write_text("(;GM[1]FF[4]SZ[9]KM[7.5]PB[Kim]PW[Lee];B[ee];W[cc];B[gg];W[cg];B[gc])")
    app = make_app(Settings(visits=FAST), go_engine, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 6, what="the loaded game")
    press(app, pygame.K_HOME)
    press(app, pygame.K_RIGHT)
    press(app, pygame.K_RIGHT)  # after W C7: black to move
    assert m.position.to_play == BLACK and m.cursor == 2
    click_vertex(app, "D4")  # from an earlier move: a new variation; the game's later moves stay
    assert stone(app, "D4") == BLACK and m.tree.count() == 7 and m.tree.siblings() == (2, 2)
    assert "AI" not in m.describe() or m.own_game, "you took over the game by playing in it"
    pump(app, lambda: len(m.history) == 5 and not m.thinking, what="the AI's reply in the variation")
    reply = go.action_to_vertex(m.actions()[3])
    m.navigate(3)  # the move where the game branches (D4)
    key(app, pygame.K_LEFTBRACKET, "[")  # the other variation at this move: the game's own line
    press(app, pygame.K_END)
    assert [go.action_to_vertex(a) for a in m.actions()] == ["E5", "C7", "G3", "C3", "G7"]
    # White (the AI) is to move at the end of the game's own line, but browsing never makes it move
    # (it did, racing the navigation below: CI saw the branch switch refused while it thought)
    jobs = (m.worker.running, m.worker.pending)
    assert not m.thinking and all(job is None or job[0] != "move" for job in jobs)
    m.navigate(3)
    key(app, pygame.K_RIGHTBRACKET, "]")
    assert go.action_to_vertex(m.actions()[2]) == "D4", (m.message, m.cursor, m.thinking)

    saved = m.save(tmp_path / "tree.sgf")
    text = saved.read_text()
    # one branch per variation after W C7 (cc): the new line and the game's own
    assert "\n;W[cc]\n(;B[df]" in text and "(;B[gg];W[cg]" in text, text
    back = load_sgf(saved)
    lines = {tuple(go.action_to_vertex(a) for a in line) for line in back.lines}
    assert lines == {("E5", "C7", "D4", reply), ("E5", "C7", "G3", "C3", "G7")}

    app.model.load(saved)  # loaded back: both lines, the branch point marked on the slider
    pump(app, lambda: m.loading is None and m.tree.count() >= 7, what="the reloaded tree")
    assert m.tree.branch_points() == [2]
    m.navigate(3)
    key(app, pygame.K_DELETE)
    assert m.tree.count() < 7 and m.tree.branch_points() == [] and "deleted move 3" in m.message


def test_the_chooser_browses_with_keys_and_mouse_and_keeps_recent_files(make_app, go_engine, tmp_path,
                                                                         monkeypatch):
    games = tmp_path / "home" / "zero9-games"
    (games / "club").mkdir(parents=True)
    (games / "club" / "b.sgf").write_bytes(STRONG_VS_GNUGO.read_bytes())
    (games / "notes.txt").write_text("not a game")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    app.step()
    press(app, pygame.K_l, "l")
    chooser = app.ui.chooser
    assert chooser.folder == games and chooser.field.draft == "", "no junk typed in the name field"
    labels = [e.label for e in chooser.entries]
    assert labels == ["..", "club/"], "folders and .sgf files only"
    key(app, pygame.K_DOWN)
    assert chooser.entries[chooser.selected].label == "club/"
    key(app, pygame.K_RETURN)  # enters the folder
    assert chooser.folder == games / "club" and [e.label for e in chooser.entries] == ["..", "b.sgf"]
    key(app, pygame.K_BACKSPACE)  # with an empty name: the parent folder
    assert chooser.folder == games
    app.step()
    entry = next(w for w in app.view.widgets(m, app.ui)[0] if w.name == "chooser:entry:1")
    click_at(app, entry.rect.center)  # a click selects, a second one opens
    click_at(app, entry.rect.center)
    assert chooser.folder == games / "club"
    entry = next(w for w in app.view.widgets(m, app.ui)[0] if w.name == "chooser:entry:1")
    click_at(app, entry.rect.center)
    click_at(app, entry.rect.center)
    assert app.ui.chooser is None
    pump(app, lambda: len(m.history) == 88, what="the chosen game")

    press(app, pygame.K_l, "l")  # the recent file comes first next time
    first = app.ui.chooser.entries[0]
    assert first.kind == "recent" and first.path == (games / "club" / "b.sgf").resolve()
    key(app, pygame.K_ESCAPE)
    assert app.ui.chooser is None


def test_a_loaded_game_is_shown_as_what_it_is(make_app, go_engine):
    app = make_app(Settings(visits=FAST), go_engine, sgf=str(STRONG_VS_GNUGO))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 88, what="the loaded game")
    assert not m.own_game and m.players == {BLACK: "level:strong", WHITE: "gnugo:10"}
    assert m.result_text() == "Game over: B+3.5 — Black (level:strong) wins", m.result_text()
    assert "AI" not in m.result_text() and "you" not in m.result_text()
    assert "level:strong" in m.describe() and "gnugo:10" in m.describe()
    # the quick pass fills the graphs at once (win rate, and for Go the score lead)
    pump(app, lambda: all(v is not None for v in m.black_winrates()), timeout=90, what="the quick pass")
    assert sum(v is not None for v in m.black_score_leads()) >= 80
    app.step()
    banner = [t for t in app.view.texts if t.owner == "banner"]
    lay = app.view.layout
    top_line = lay.origin[1] - (lay.size - 1) * lay.cell
    assert banner and banner[0].rect.bottom <= top_line - lay.stone_radius, "the result sits above the stones"
    # the count: area with the dead stones off, as clubs count (none are dead here: the file's B+3.5)
    pump(app, lambda: m.analysis_at().statuses is not None, timeout=60, what="the aftermath")
    assert m.show_count() and count_text_of(m) == "clubs' count, 0 dead off: B+3.5", count_text_of(m)


def test_a_gomoku_game_marks_its_winning_five(make_app):
    app = make_app(Settings(game="gomoku", size=15, visits=FAST), None, sgf=str(RAPFI_GOMOKU))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 29, what="the Gomoku game")
    five = winning_line_of(m)
    board = m.position.board_array()
    assert len(five) >= 5 and all(board[p] == WHITE for p in five)
    rows_cols = [divmod(p, 15) for p in five]
    steps = {(b[0] - a[0], b[1] - a[1]) for a, b in zip(rows_cols, rows_cols[1:], strict=False)}
    assert len(steps) == 1, "the points lie on one line, one step apart"
    m.navigate(10)
    assert winning_line_of(m) == []


def test_score_lead_and_territory_come_from_the_analysis_api(make_app, go_engine):
    from zero9.search.analysis import analyse

    app = make_app(Settings(visits=FAST), go_engine, sgf=str(STRONG_VS_GNUGO))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 88, what="the loaded game")
    pump(app, lambda: all(v is not None for v in m.black_score_leads()[:-1]), timeout=90, what="quick pass")
    m.navigate(40)
    m.tree.node.analysis = None  # the net's own look at this position (the quick pass searched 8 visits)
    click_widget(app, "toggle:territory")
    pump(app, lambda: m.analysis_at().policy is not None and territory_of(m) is not None, what="the look")
    raw = analyse(m.position, m.engine.analyser, 0)  # the same evaluator: its cached evaluation
    a = m.analysis_at()
    assert a.score_lead == pytest.approx(raw.score_lead, abs=1e-4), "the window shows the API's number"
    assert territory_of(m) == pytest.approx(raw.ownership if m.position.to_play == BLACK else -raw.ownership)
    app.step()
    assert app.view.score_rect is not None, "the score graph beside the win-rate graph"


def test_the_new_game_panel_starts_from_the_games_defaults(make_app, go_engine, tmp_path):
    path = tmp_path / "k65.sgf"
    path.write_text("(;GM[1]SZ[9]KM[6.5];B[ee];W[cc])")
    app = make_app(Settings(visits=FAST), go_engine, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 3, what="the loaded game")
    assert m.settings.komi == 6.5
    press(app, pygame.K_n, "n")
    assert app.ui.draft.komi == 7.5 and app.ui.draft.size == 9
    click_widget(app, "set:game:gomoku")
    assert app.ui.draft.size == 15
    click_widget(app, "set:size:-")
    click_widget(app, "set:game:go")
    assert (app.ui.draft.size, app.ui.draft.komi) == (9, 7.5)
    click_widget(app, "set:level:beginner")
    app.step()
    labels = {t.text for t in app.view.texts}
    assert {"Beginner", "Casual", "Club", "Strong", "Max"} <= labels, "the level buttons show names only"
    click_widget(app, "start")
    pump(app, lambda: m.loading is None and m.own_game, what="the new game")
    app.step()
    assert m.settings.visits == 1
    assert any("(1 visit)" in t.text for t in app.view.texts), "one visit, not '1 visits'"


def test_errors_are_shown_whole_and_the_command_line_says_why(make_app, go_engine, tmp_path, capsys):
    bad = tmp_path / "two-blacks.sgf"
    bad.write_text("(;GM[1]SZ[9];B[ee];B[cc])")
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    app.step()
    assert not m.load(bad)
    app.step()
    assert m.alert is not None and "move 2" in m.alert and len(m.history) == 1
    alert_text = " ".join(t.text for t in app.view.texts if t.owner == "alert")
    assert "move 2 is by B but W was to play" in alert_text, alert_text
    press(app, pygame.K_RETURN)
    assert m.alert is None

    parser = argparse.ArgumentParser()
    play_cli.add_arguments(parser)
    assert play_cli.run(parser.parse_args(["--sgf", str(bad)])) == 2
    err = capsys.readouterr().err
    assert "zero9 play:" in err and "move 2 is by B but W was to play" in err
    help_text = parser.format_help()
    assert "15 for gomoku" in " ".join(help_text.split()), "the size default is per game"


def _check_texts(app, where: str) -> None:
    """No label cut off (except names and paths elided on purpose), none outside the window, and no
    two panel labels on top of each other; each button's label inside its button."""
    w, h = app.screen.get_size()
    texts = [t for t in app.view.texts if t.owner not in ("board",)]
    for t in texts:
        assert not t.clipped, f"{where}: {t.text!r} ({t.owner}) is cut off"
        assert 0 <= t.rect.left and t.rect.right <= w and 0 <= t.rect.top and t.rect.bottom <= h, \
            f"{where}: {t.text!r} is outside the window"
    widgets = {x.name: x for x in app.view.widgets(app.model, app.ui)[0]}
    for t in texts:
        if t.owner in widgets:
            assert widgets[t.owner].rect.contains(t.rect), f"{where}: {t.text!r} leaves its button"
    on_board = [t for t in app.view.texts if t.owner == "board"]
    for i, a in enumerate(on_board):  # overlay numbers never share a point
        for b in on_board[i + 1:]:
            clip = a.rect.clip(b.rect)
            smaller = min(a.rect.width * a.rect.height, b.rect.width * b.rect.height)
            assert clip.width * clip.height <= 0.25 * smaller, f"{where}: {a.text!r} and {b.text!r} overlap"
    boxed = ("alert", "chooser")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            same_box = (a.owner.startswith(boxed) or a.owner.startswith(("chooser:", "field:chooser"))) != \
                (b.owner.startswith(boxed) or b.owner.startswith(("chooser:", "field:chooser")))
            if same_box:
                continue  # a box over the board covers what is under it, on purpose
            assert not a.rect.colliderect(b.rect), f"{where}: {a.text!r} and {b.text!r} overlap"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_label_fits_from_800x600_up(make_app, go_engine, size, tmp_path):
    app = make_app(Settings(visits=FAST), go_engine, size=size, show_setup=True)
    m = app.model
    app.step()
    assert app.screen.get_size() == size
    app.step()
    _check_texts(app, f"setup {size}")
    app.ui.setup_open = False
    click_vertex(app, "E5")
    pump(app, lambda: len(m.history) == 3, what="the AI's reply")
    m.say("loaded 87 moves (result B+3.5). Browse with the arrows or the slider; click to play on, "
          "or AI move")
    for overlay in ("candidates", "variation", "policy"):
        m.toggle(overlay)
    pump(app, lambda: m.analysis_at().done and m.analysis_at().policy is not None, what="the analysis")
    app.step()
    assert sum(t.owner == "board" for t in app.view.texts) > 10, "candidates, the line and the policy drawn"
    _check_texts(app, f"game {size}")
    m.load(STRONG_VS_GNUGO)
    pump(app, lambda: m.loading is None and len(m.history) == 88, what="the loaded game")
    app.step()
    _check_texts(app, f"loaded game {size}")
    press(app, pygame.K_l, "l")
    app.step()
    _check_texts(app, f"chooser {size}")
    key(app, pygame.K_ESCAPE)
    m.load(tmp_path / "no-such-folder" / "a-file-with-a-rather-long-name-that-is-not-there.sgf")
    app.step()
    assert m.alert is not None
    _check_texts(app, f"alert {size}")


def test_the_windows_review_is_zero9_reviews(make_app, go_engine, tmp_path):
    """The window's Review calls review_game as `zero9 review` does: the same visits and seed give
    the same numbers (a 9x9 Go game with handicap stones, judged in points)."""
    import json

    from gui.coach import REVIEW_SEED
    from zero9.cli import review as review_cli

    path = tmp_path / "h2.sgf"
    path.write_text("(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cg][gc]PB[Kim]PW[Lee]"
                    ";W[ee];B[dd];W[fd];B[fe];W[ge];B[ef];W[de];B[ce];W[ed])")
    app = make_app(Settings(visits=FAST), go_engine, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 10, what="the handicap game")
    assert int((m.tree.root.position.board_array() != EMPTY).sum()) == 2, "the handicap stones are there"
    m.coach.review_visits = 16
    click_widget(app, "review")
    pump(app, lambda: m.reviewed() is not None, timeout=120, what="the review")
    parser = argparse.ArgumentParser()
    review_cli.add_arguments(parser)
    args = parser.parse_args([str(path), "--visits", "16", "--seed", str(REVIEW_SEED), "--no-plot",
                              "--out", str(tmp_path / "out")])
    assert review_cli.run(args) == 0
    cli = json.loads((tmp_path / "out" / "h2-review.json").read_text())["moves"]
    window = m.reviewed()
    keys = ("move", "best_move", "points_lost", "winrate_loss", "class", "pv")
    assert [{k: mv[k] for k in keys} for mv in window] == [{k: mv[k] for k in keys} for mv in cli]
    assert m.black_score_leads()[1] is not None, "the score graph shows the review's points"


def test_the_level_table_in_the_docs_is_the_codes():
    """docs/cli-play.md's level table says what zero9/arena/levels.py plays (and the default)."""
    import re

    from gui.engine import DEFAULT_LEVEL
    from zero9.arena.levels import LEVELS

    text = (ROOT / "docs" / "cli-play.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| (\d+)[^|]* \| ([^|]+) \| ([\d.]+) \|$", text, re.M)
    assert [r[0].lower() for r in rows] == list(LEVELS), rows
    for name, visits, among, temperature in rows:
        level = LEVELS[name.lower()]
        assert int(visits) == level.visits and float(temperature) == level.temperature, name
        best = re.search(r"(\d+)", among)
        assert (int(best.group(1)) if best else 1) == level.top_k, f"{name}: {among}"
    assert f"(default `{DEFAULT_LEVEL}`)" in text
    assert f"**{LEVELS[DEFAULT_LEVEL].name} is the default**" in text


def test_the_game_clock_main_time_then_byo_yomi():
    from gui.clock import GameClock

    clock = GameClock(main_s=10, byo_s=5, periods=2)
    assert clock.update(BLACK, 0.0) is None and clock.text(BLACK) == "0:10"
    assert clock.update(WHITE, 8.0) is None and clock.text(BLACK) == "0:02"  # Black used 8 s, White runs
    assert clock.update(BLACK, 9.0) is None and clock.text(WHITE) == "0:09"
    assert clock.update(BLACK, 15.0) is None and clock.text(BLACK) == "0:01 (2)"  # 2 s main + 4 s of a period
    clock.moved(BLACK)
    assert clock.text(BLACK) == "0:05 (2)", "a move in time gives the period back"
    assert clock.update(BLACK, 21.0) is None and clock.text(BLACK) == "0:04 (1)"  # one period lost
    assert clock.update(None, 26.0) == BLACK, "the last period ran out: Black loses on time"
    with pytest.raises(ValueError, match="needs some time"):
        GameClock(main_s=0, byo_s=0, periods=0)


def test_a_player_who_runs_out_of_time_loses(make_app, go_engine):
    app = make_app(Settings(visits=FAST, clock=(0.3, 0.2, 1)), go_engine)
    m = app.model
    pump(app, lambda: m.over, timeout=20, what="Black's time to run out")
    assert m.result_text() == "Game over: W+T — the AI wins" and "ran out of time" in m.message
    app.step()
    assert any(t.text.startswith("move 0 · B 0:00 (0)") for t in app.view.texts)
    parser = argparse.ArgumentParser()
    play_cli.add_arguments(parser)
    s = play_cli.settings_from_args(parser.parse_args(["--time", "5", "--byo-yomi", "20", "--periods", "5"]))
    assert s.clock == (300.0, 20.0, 5)


def test_dead_stones_are_marked_and_counted_as_gnu_go_counts(make_app, go_engine, tmp_path, gnugo_path):
    """Black E1-E9 against White F1-F9; then Black H5 into White's side, White B5 into Black's, two
    passes. Tromp-Taylor counts both invaders alive; clubs (and GNU Go's aftermath) take them off."""
    import subprocess

    go = make_game("go", 9, komi=7.5)
    moves = [v for row in range(1, 10) for v in (f"E{row}", f"F{row}")] + ["H5", "B5"]
    actions = [go.vertex_to_action(v) for v in moves] + [go.pass_action, go.pass_action]
    path = save_sgf(tmp_path / "dead.sgf", Record(go.to_dict(), actions))
    app = make_app(Settings(visits=FAST), go_engine, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 23, what="the finished game")
    assert m.show_count() and m.position.result_string() == "W+7.5", "Tromp-Taylor: every stone alive"
    pump(app, lambda: m.analysis_at().statuses is not None, timeout=60, what="the aftermath")
    assert [go.action_to_vertex(p) for p in dead_stones_of(m)] == ["B5", "H5"]
    done = subprocess.run([gnugo_path, "--score", "aftermath", "--chinese-rules", "-l", str(path)],
                          capture_output=True, text=True, timeout=120)
    said = done.stdout.strip().splitlines()[-1]  # 'Black wins by 1.5 points'
    winner, margin = said.split()[0][0], said.split()[3]
    assert count_text_of(m) == f"clubs' count, 2 dead off: {winner}+{margin}", (count_text_of(m), said)
    # the "Game over" line says the same count (issue 42: one count everywhere), not Tromp-Taylor's W+7.5
    assert m.result_text() == f"Game over: {winner}+{margin} — {'Black' if winner == 'B' else 'White'} wins"
    app.step()
    assert any(t.text.startswith("clubs' count") for t in app.view.texts)
