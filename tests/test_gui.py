"""The window, driven by synthetic pygame events under SDL_VIDEODRIVER=dummy (and once on a real X server).

Real parts throughout: the shipped net, real SearchPlayer searches (at a few visits),
real SGF files. Screenshots of the main states go to docs/images/ when
ZERO9_SAVE_SCREENSHOTS=1, else to the test's tmp folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from gui.app import App  # noqa: E402
from gui.engine import UNIFORM_NOTICE, build_engine  # noqa: E402
from gui.layout import Layout  # noqa: E402
from gui.settings import Settings  # noqa: E402
from gui.sgfio import Record, load_sgf, save_sgf  # noqa: E402
from zero9.arena.levels import LEVELS  # noqa: E402
from zero9.cli import play as app_module  # noqa: E402
from zero9.games import BLACK, EMPTY, WHITE, make_game  # noqa: E402
from zero9.nn.checkpoint import default_net_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAST = 8  # visits: enough to exercise the search, fast on a loaded 2-core CPU


@pytest.fixture
def shots(tmp_path) -> Path:
    if os.environ.get("ZERO9_SAVE_SCREENSHOTS") == "1":
        return ROOT / "docs" / "images"
    return tmp_path


@pytest.fixture(scope="module")
def go_engine():
    """One engine on the shipped 9x9 net for the module (loading torch and the net once)."""
    return build_engine(make_game("go", 9, komi=7.5), None, FAST)


@pytest.fixture
def make_app(monkeypatch, tmp_path):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the chooser's recent files
    made = []

    def make(settings: Settings, engine=None, **kw) -> App:
        app = App(settings, engine, **kw)
        made.append(app)
        return app

    yield make
    for app in made:
        app.close()


# ---- driving helpers ----------------------------------------------------------------------------


def pump(app: App, until, timeout: float = 60.0, what: str = "") -> None:
    """Run frames until ``until()`` holds; fail naming ``what`` after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        app.step()
        if until():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what or until}: message {app.model.message!r}")


def click_at(app: App, pos: tuple[int, int]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    app.step()


def click_vertex(app: App, vertex: str) -> None:
    click_at(app, app.view.layout.center(app.model.game.vertex_to_action(vertex)))


def click_widget(app: App, name: str) -> None:
    widgets, _, _ = app.view.widgets(app.model, app.ui)
    found = [w for w in widgets if w.name == name]
    assert found, f"no widget {name!r} on screen: {[w.name for w in widgets]}"
    assert found[0].enabled, f"widget {name!r} is disabled"
    click_at(app, found[0].rect.center)


def press(app: App, key: int, text: str = "") -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, unicode=text, mod=0))
    app.step()


def type_text(app: App, text: str) -> None:
    for ch in text:
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=0, unicode=ch, mod=0))
    app.step()


def stone(app: App, vertex: str) -> int:
    return int(app.model.position.board_array()[app.model.game.vertex_to_action(vertex)])


def count(app: App, colour: int) -> int:
    return int((app.model.position.board_array() == colour).sum())


# ---- pure parts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [7, 9, 15, 19])
def test_layout_maps_clicks_to_points_and_back(size):
    lay = Layout(size, 1060, 720)
    for p in range(size * size):
        assert lay.point_at(lay.center(p)) == p
    x0, y0 = lay.center(0)
    assert lay.point_at((x0 + round(lay.cell / 2), y0)) is None, "a click between two points is on neither"
    assert lay.point_at((x0 - round(lay.cell), y0)) is None, "left of the board"
    # y = 0 is the bottom row, as in Leela Zero: A1 is below A2 on the screen
    assert lay.center(0)[1] > lay.center(size)[1]
    assert (
        lay.slider_index(lay.slider_rect.right, 40) == 40 and lay.slider_index(lay.slider_rect.left, 40) == 0
    )


def test_sgf_round_trip_and_bad_files(tmp_path):
    go = make_game("go", 9, komi=6.5)
    actions = [40, 41, 81, 30, 81]  # E5 F5 pass D4 pass
    path = save_sgf(tmp_path / "a" / "g.sgf", Record(go.to_dict(), actions, "", "Human", "zero9"))
    text = path.read_text()
    assert "GM[1]" in text and "KM[6.5]" in text and "PB[Human]" in text
    back = load_sgf(path)
    assert back.actions == actions and back.make_game().to_dict() == go.to_dict()

    gomoku = make_game("gomoku", 15)
    path = save_sgf(tmp_path / "k.sgf", Record(gomoku.to_dict(), [112, 113], "", "", ""))
    back = load_sgf(path)
    assert back.game_params["game"] == "gomoku" and back.actions == [112, 113] and "GM[4]" in path.read_text()

    bad = tmp_path / "bad.sgf"
    bad.write_text("this is not sgf")
    with pytest.raises(ValueError, match="bad.sgf"):
        load_sgf(bad)
    with pytest.raises(ValueError, match="missing.sgf"):
        load_sgf(tmp_path / "missing.sgf")
    handicap = tmp_path / "h.sgf"
    handicap.write_text("(;GM[1]SZ[9]HA[2]AB[cc][gg];W[ee])")
    record = load_sgf(handicap)  # the setup stones are read; White moves first after a handicap
    assert sorted(p for _, p in record.setup) == [24, 56] and record.first == WHITE and record.actions == [40]
    twice = tmp_path / "twice.sgf"
    twice.write_text("(;GM[1]SZ[9];B[ee];B[cc])")
    with pytest.raises(ValueError, match="move 2"):
        load_sgf(twice)


# ---- the window ---------------------------------------------------------------------------------


def test_short_game_with_overlays_undo_and_refusals(make_app, go_engine, shots):
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    app.step()
    assert m.engine.label.startswith("net ") and not m.engine.uniform
    app.screenshot(shots / "play-empty.png")

    click_vertex(app, "E5")
    assert stone(app, "E5") == BLACK and len(m.history) == 2
    pump(app, lambda: len(m.history) == 3, what="the AI's reply")
    assert count(app, WHITE) == 1 and count(app, BLACK) == 1
    assert m.message.startswith("the AI played "), m.message
    assert m.analysis_at(1).candidates, "the AI's search statistics are kept for the graph and the overlays"

    click_vertex(app, "E5")  # occupied
    assert "E5 is occupied" in m.message and m.message_level == "error" and len(m.history) == 3

    # overlays: keys and buttons
    assert m.overlays["winrate"]
    press(app, pygame.K_c, "c")
    press(app, pygame.K_v, "v")
    click_widget(app, "toggle:policy")
    assert m.overlays["candidates"] and m.overlays["variation"] and m.overlays["policy"]
    press(app, pygame.K_w, "w")
    assert not m.overlays["winrate"]
    click_widget(app, "toggle:winrate")
    assert m.overlays["winrate"]
    pump(app, lambda: m.analysis_at().done and m.analysis_at().policy is not None, what="the analysis")
    a = m.analysis_at()
    assert a.candidates and a.visits >= FAST and 0.0 <= a.winrate <= 1.0
    # the net's raw policy (zero9.search.analysis): occupied points 0, the legal ones near all of it
    assert a.policy.shape == (82,) and abs(float(a.policy.sum()) - 1.0) < 0.02
    assert all(a.policy[p] == 0 for p in range(81) if m.position.board_array()[p] != EMPTY)
    assert all(a.candidates[0].visits >= s.visits for s in a.candidates)

    click_widget(app, "hint")
    pump(app, lambda: m.analysis_at().hint is not None, what="the hint")
    assert m.position.is_legal(m.analysis_at().hint) and m.message.startswith("hint: ")
    assert sum(wr is not None for wr in m.black_winrates()) == 3, "a win rate for every position so far"

    # The AI's replies vary with the net's random symmetries: play points it has left empty.
    second = next(v for v in ("C3", "C7", "G7", "B2") if stone(app, v) == EMPTY)
    click_vertex(app, second)
    pump(app, lambda: len(m.history) == 5 and m.analysis_at().done, what="the second reply and its analysis")
    app.screenshot(shots / "play-overlays.png")

    # a click while the AI thinks is refused; Stop makes it move now
    m.engine.player.play.visits = 10**6
    third = next(v for v in ("G3", "C7", "G5", "B2") if stone(app, v) == EMPTY)
    click_vertex(app, third)
    pump(app, lambda: m.thinking and m.live_visits > 0, what="the AI to start thinking")
    free = next(v for v in ("G7", "B8", "H2", "A1") if stone(app, v) == EMPTY)
    click_vertex(app, free)
    assert "the AI is thinking" in m.message and stone(app, free) == EMPTY and len(m.history) == 6
    click_widget(app, "stop")
    pump(app, lambda: len(m.history) == 7, timeout=30, what="the AI to move after Stop")
    m.engine.player.play.visits = FAST

    # undo takes back the AI's reply and your move
    click_widget(app, "undo")
    assert len(m.history) == 5 and stone(app, third) == EMPTY and m.position.to_play == BLACK
    press(app, pygame.K_u, "u")
    press(app, pygame.K_u, "u")
    assert len(m.history) == 1 and count(app, BLACK) == 0 and count(app, WHITE) == 0
    press(app, pygame.K_u, "u")
    assert m.message_level == "error" and "nothing" in m.message


def _ko_game(tmp_path: Path) -> Path:
    """White to move with a ko to retake at E5 and a suicide point at A1."""
    go = make_game("go", 9, komi=7.5)
    moves = "D5 F4 E4 F6 E6 G5 A2 E5 B1 J9 F5".split()
    return save_sgf(tmp_path / "ko.sgf", Record(go.to_dict(), [go.vertex_to_action(v) for v in moves]))


def test_load_sgf_browse_and_illegal_moves(make_app, go_engine, tmp_path):
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    path = _ko_game(tmp_path)
    press(app, pygame.K_l, "l")  # the chooser opens with an empty name field: type the path
    assert app.ui.chooser is not None and app.ui.chooser.mode == "load" and app.ui.chooser.field.draft == ""
    type_text(app, str(path))
    press(app, pygame.K_RETURN)
    pump(app, lambda: len(m.history) == 12, what="the loaded game")
    assert not m.auto and m.message.startswith("loaded 11 moves") and stone(app, "E5") == EMPTY
    app.step()
    assert not m.thinking, "after loading, the AI waits until you play or ask it to"

    click_vertex(app, "E5")  # black's turn? no: white is to move and you are black
    assert "AI's turn" in m.message
    click_widget(app, "swap")
    assert m.settings.human == WHITE
    click_vertex(app, "E5")
    assert "illegal move E5" in m.message and "superko" in m.message and len(m.history) == 12
    click_vertex(app, "A1")
    assert "illegal move A1: suicide" in m.message and len(m.history) == 12

    # browse back and continue from move 6 (black to move): the moves after it are cut off
    press(app, pygame.K_HOME)
    assert m.cursor == 0
    for _ in range(6):
        press(app, pygame.K_RIGHT)
    assert m.cursor == 6 and m.position.to_play == BLACK
    click_widget(app, "ai_move")
    pump(app, lambda: len(m.history) == 8, what="the AI's move from move 6")
    assert m.at_end and m.position.to_play == WHITE and stone(app, "E5") == EMPTY

    # slider: click its left end to go back to the start
    r = app.view.layout.slider_rect
    click_at(app, (r.left, r.centery))
    assert m.cursor == 0


def test_game_over_by_passes_shows_the_count(make_app, go_engine, tmp_path, shots):
    go = make_game("go", 9, komi=7.5)
    moves = []
    for row in range(1, 10):
        moves += [f"E{row}", f"F{row}"]
    path = save_sgf(
        tmp_path / "walls.sgf", Record(go.to_dict(), [go.vertex_to_action(v) for v in moves] + [81])
    )
    app = make_app(Settings(visits=FAST, human=WHITE), go_engine, sgf=str(path))
    m = app.model
    pump(app, lambda: len(m.history) == 20, what="the loaded game")
    click_widget(app, "toggle:policy")
    click_widget(app, "pass")  # white passes after black's pass: the game ends, counted Tromp-Taylor
    assert m.over and m.show_count()
    assert m.position.result_string() == "B+1.5" and "B+1.5" in m.result_text()
    app.step()
    app.screenshot(shots / "play-count.png")
    click_vertex(app, "A1")
    assert "Game over" in m.message
    assert (tmp_path / "out.sgf").exists() is False
    saved = m.save(tmp_path / "out.sgf")
    assert load_sgf(saved).actions == m.actions() and "RE[B+1.5]" in saved.read_text()

    click_widget(app, "undo")  # takes back your pass (and nothing else: the AI made none since)
    assert not m.over and len(m.history) == 20


def test_resign_and_gomoku_without_a_net(make_app, go_engine):
    app = make_app(Settings(visits=FAST), go_engine)
    click_widget(app, "resign")
    assert app.model.over and app.model.position.result_string() == "W+R"

    assert default_net_path("gomoku", 8) is None, "this test needs a board size with no shipped net"
    app2 = make_app(Settings(game="gomoku", size=8, visits=FAST))
    m = app2.model
    pump(app2, lambda: m.engine is not None, what="the Gomoku engine")
    assert m.engine.uniform and m.engine.label == UNIFORM_NOTICE and UNIFORM_NOTICE in m.message
    widgets, _, _ = app2.view.widgets(m, app2.ui)
    assert not next(w for w in widgets if w.name == "pass").enabled, "Gomoku has no pass"
    click_vertex(app2, "D5")
    pump(app2, lambda: len(m.history) == 3, what="the Gomoku reply")
    assert count(app2, WHITE) == 1


def test_setup_panel_refuses_a_net_for_another_size(make_app, go_engine):
    shipped = default_net_path("go", 9)
    assert shipped is not None
    app = make_app(Settings(visits=FAST), go_engine, show_setup=True)
    m = app.model
    click_widget(app, "set:size:-")
    click_widget(app, "set:size:-")
    assert app.ui.draft.size == 7
    click_widget(app, "field:net")
    type_text(app, str(shipped))
    click_widget(app, "set:level:casual")  # clicking elsewhere commits the field
    assert app.ui.draft.net == str(shipped) and app.ui.draft.visits == LEVELS["casual"].visits
    click_widget(app, "start")
    pump(app, lambda: m.loading is None and app.ui.setup_open, what="the refusal")
    assert "is for a 9x9 board, not 7x7" in m.message and m.message_level == "error"
    assert m.game.size == 9, "the game on the board is untouched"
    click_vertex(app, "E5")
    assert "Start" in m.message, "board clicks are refused while the settings are open"

    # bad visits in the field are refused with a message; a fitting setup starts
    click_widget(app, "set:size:+")
    click_widget(app, "set:size:+")
    click_widget(app, "field:visits")
    app.ui.visits_field.draft = ""
    type_text(app, "0")
    press(app, pygame.K_RETURN)
    assert "visits must be" in m.message and app.ui.draft.visits == LEVELS["casual"].visits
    click_widget(app, "set:human:white")
    click_widget(app, "start")
    pump(
        app,
        lambda: not app.ui.setup_open and m.loading is None and len(m.history) == 2,
        what="the AI's opening",
    )
    assert m.settings.human == WHITE and m.settings.visits == LEVELS["casual"].visits
    assert count(app, BLACK) == 1


def test_command_line_refuses_bad_input(tmp_path, capsys):
    parser = __import__("argparse").ArgumentParser()
    app_module.add_arguments(parser)
    shipped = str(default_net_path("go", 9))
    assert app_module.run(parser.parse_args(["--game", "go", "--size", "7", "--net", shipped])) == 2
    assert "is for a 9x9 board, not 7x7" in capsys.readouterr().err
    assert app_module.run(parser.parse_args(["--game", "gomoku", "--size", "9", "--net", shipped])) == 2
    assert "is for go 9x9, not gomoku 9x9" in capsys.readouterr().err
    assert app_module.run(parser.parse_args(["--color", "green"])) == 2
    assert "bad colour 'green'" in capsys.readouterr().err
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"PK\x03\x04 not a checkpoint")
    assert app_module.run(parser.parse_args(["--net", str(junk)])) == 2
    assert "junk.pt" in capsys.readouterr().err
    s = app_module.settings_from_args(parser.parse_args(["--game", "gomoku", "--level", "casual"]))
    assert (s.game, s.size, s.visits) == ("gomoku", 15, LEVELS["casual"].visits)


# ---- a newcomer's fixes, review and the teaching game ----------------------------------------------


def move_pointer(app: App, pos: tuple[int, int]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=(0, 0), buttons=(0, 0, 0)))
    app.step()


def pixel(app: App, vertex: str) -> tuple[int, int, int]:
    return tuple(app.screen.get_at(app.view.layout.center(app.model.game.vertex_to_action(vertex))))[:3]


def test_loading_a_smaller_board_with_the_pointer_on_the_board(make_app, go_engine, tmp_path):
    """The pointer over J9 of a 9x9 board, then a 7x7 game is loaded: no IndexError, hover found again."""
    small = make_game("go", 7, komi=7.5)
    path = save_sgf(tmp_path / "seven.sgf", Record(small.to_dict(), [24, 25], "", "a", "b"))
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    app.step()
    j9 = app.view.layout.center(m.game.vertex_to_action("J9"))
    move_pointer(app, j9)
    assert app.ui.hover == 80
    assert m.load(path)
    pump(app, lambda: m.loading is None and m.game.size == 7, what="the 7x7 game")
    app.step()  # draws the 7x7 board with the pointer still where J9 was
    assert app.ui.hover == app.view.layout.point_at(j9) and (app.ui.hover is None or app.ui.hover < 49)
    assert len(m.history) == 3


def test_no_ghost_stone_once_the_pointer_leaves(make_app, go_engine):
    app = make_app(Settings(visits=FAST), go_engine)
    app.step()
    empty = pixel(app, "C3")
    move_pointer(app, app.view.layout.center(app.model.game.vertex_to_action("C3")))
    assert app.ui.hover is not None and pixel(app, "C3") != empty, "the ghost stone is drawn"
    pygame.event.post(pygame.event.Event(pygame.WINDOWLEAVE))
    app.step()
    assert app.ui.hover is None and pixel(app, "C3") == empty


def test_sgf_given_at_start_is_shown_once_the_net_has_loaded(make_app, tmp_path):
    """``zero9 play --sgf FILE``: the App starts the net loading and the SGF at once."""
    go = make_game("go", 9, komi=7.5)
    moves = [40, 30, 50, 31]
    path = save_sgf(tmp_path / "g.sgf", Record(go.to_dict(), moves, "", "Human", "zero9"))
    app = make_app(Settings(visits=FAST), None, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and m.engine is not None, what="the net")
    app.step()
    assert [p.last_move for p in m.history[1:]] == moves, "the loaded game, not an empty board"
    assert count(app, BLACK) == 2 and "loaded 4 moves" in m.message


PLANTED = Path(__file__).resolve().parent / "data" / "gomoku9-planted-blunder.sgf"


def click_graph_at(app: App, index: int) -> None:
    app.view.widgets(app.model, app.ui)
    r = app.view.graph_rect
    length = len(app.model.history) - 1
    click_at(app, (round(r.left + 4 + (r.width - 8) * index / length), r.centery))


def test_review_in_the_window_marks_the_blunder_and_shows_the_better_line(make_app, shots):
    """Review game on the planted Gomoku blunder: the graph marks move 6, a click on it shows F5/B5."""
    app = make_app(Settings(game="gomoku", size=9, human=BLACK, visits=FAST), None, sgf=str(PLANTED))
    m = app.model
    m.coach.review_visits = 48
    pump(app, lambda: m.loading is None and len(m.history) == 10, what="the planted game")
    click_widget(app, "review")
    assert "reviewing 9 moves" in m.message
    pump(app, lambda: m.reviewed() is not None, timeout=120, what="the review")
    assert "review done: 1 blunder," in m.message, m.message
    blunder = m.review_at(6)
    assert blunder["class"] == "blunder" and blunder["move"] == "A9" and blunder["best_move"] in ("B5", "F5")
    rates = m.black_winrates()
    assert len(rates) == 10 and rates[6] > 0.9 > rates[5]
    click_graph_at(app, 5)  # the position before the blunder
    assert m.cursor == 5 and "blunder" in m.message and f"better {blunder['best_move']}" in m.message
    app.step()
    best = m.game.vertex_to_action(blunder["best_move"])
    assert m.position.board_array()[best] == 0 and app.screen.get_at(app.view.layout.center(best))[:3] != \
        tuple(app.screen.get_at(app.view.layout.center(m.game.vertex_to_action("H2"))))[:3], \
        "the better move is drawn on its empty point"
    app.screenshot(shots / "review-window.png")


def test_teaching_game_stops_after_a_blunder_and_offers_undo(make_app, shots, tmp_path):
    """You play White in the planted game and ignore Black's open three: the teacher stops you."""
    gomoku = make_game("gomoku", 9)
    opening = [gomoku.vertex_to_action(v) for v in "E5 E4 D5 D4 C5".split()]
    path = save_sgf(tmp_path / "open-three.sgf", Record(gomoku.to_dict(), opening, "", "zero9", "student"))
    app = make_app(Settings(game="gomoku", size=9, human=WHITE, visits=FAST), None, sgf=str(path))
    m = app.model
    pump(app, lambda: m.loading is None and len(m.history) == 6, what="the opening")
    m.coach.teach_visits = 48
    press(app, pygame.K_t, "t")
    assert m.teaching and "teaching game on" in m.message
    click_vertex(app, "A9")
    pump(app, lambda: m.teach_note is not None, timeout=120, what="the teacher's verdict")
    note = m.teach_note
    assert note.kind == "blunder" and m.game.action_to_vertex(note.best) in ("B5", "F5")
    assert "A9 loses" in m.message and "Undo to try again" in m.message
    for _ in range(20):  # the AI waits for the student
        app.step()
    assert len(m.history) == 7 and not m.thinking
    app.screenshot(shots / "teaching-blunder.png")
    press(app, pygame.K_u, "u")
    assert len(m.history) == 6 and m.teach_note is None
    click_vertex(app, m.game.action_to_vertex(note.best))
    pump(app, lambda: len(m.history) == 8, timeout=120, what="the AI's answer to the block")
    assert m.teach_note is None



def test_save_sgf_asks_where_and_proposes_a_games_folder_not_the_current_directory(make_app, go_engine,
                                                                                  tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    app = make_app(Settings(visits=FAST), go_engine)
    m = app.model
    app.step()
    click_vertex(app, "E5")
    pump(app, lambda: len(m.history) == 3, what="the AI's reply")
    press(app, pygame.K_s, "s")
    chooser = app.ui.chooser
    assert chooser is not None and chooser.mode == "save"
    assert chooser.field.editing and chooser.field.all_selected, "the proposed name is selected"
    proposed = chooser.folder / chooser.field.draft
    assert proposed.parent == tmp_path / "home" / "zero9-games" and proposed.suffix == ".sgf"
    assert not list(tmp_path.glob("*.sgf")), "nothing is written before the player confirms"
    press(app, pygame.K_RETURN)
    assert m.sgf_path == proposed and proposed.is_file() and load_sgf(proposed).actions == m.actions()
    assert not list(tmp_path.glob("*.sgf")), "nothing in the current directory"


def test_a_window_resized_below_the_minimum_grows_back_and_the_panel_fits(make_app, go_engine):
    app = make_app(Settings(visits=FAST), go_engine)
    app.step()
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, w=640, h=480, size=(640, 480)))
    app.step()
    assert app.screen.get_size() == (800, 600)
    widgets, bands, _ = app.view.widgets(app.model, app.ui)
    bottom = max([w.rect.bottom for w in widgets] + [b.bottom for b in bands.values()])
    right = max(w.rect.right for w in widgets)
    assert bottom <= 600 and right <= 800, f"the panel is cut: bottom {bottom}, right {right}"

REAL_X_SCRIPT = r"""
import sys, time, pygame
from gui.app import App
from gui.settings import Settings
app = App(Settings(visits=4, net=sys.argv[1]))
m = app.model
end = time.monotonic() + 120
def pump(cond):
    while not cond():
        assert time.monotonic() < end, m.message
        app.step(); time.sleep(0.01)
pump(lambda: m.engine is not None)
assert pygame.display.get_driver() == "x11", pygame.display.get_driver()
pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=app.view.layout.center(40), button=1))
pump(lambda: len(m.history) == 3)
app.screenshot(sys.argv[2])
driver = pygame.display.get_driver()
app.close()
print("ok", driver)
"""


def test_on_a_real_x_server(tmp_path):
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb): the real-X run is skipped")
    display = f":{90 + os.getpid() % 200}"
    server = subprocess.Popen(
        [xvfb, display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.0)
        env = {k: v for k, v in os.environ.items() if k != "SDL_VIDEODRIVER"}
        env["DISPLAY"] = display
        shot = tmp_path / "x11.png"
        done = subprocess.run(
            [sys.executable, "-c", REAL_X_SCRIPT, str(default_net_path("go", 9)), str(shot)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        assert "ok x11" in done.stdout and shot.stat().st_size > 10_000
    finally:
        server.terminate()
        server.wait(10)


def test_a_job_cut_short_by_another_says_so_and_its_analysis_resumes():
    """The quick pass or a hint cancels a live analysis: its partial result is not "done" (it resumes
    when wanted again); a job that ran to its end is. (A cut analysis once stayed done with a few visits.)"""
    import threading

    from gui.engine import Worker

    worker, started, stop = Worker(), threading.Event(), threading.Event()

    def slow(progress):
        started.set()
        stop.wait(10)
        return "partial"

    worker.submit("analyze", "p", slow, stop.set)
    assert started.wait(10)
    worker.submit("sketch", "q", lambda progress: "whole")
    results, end = [], time.monotonic() + 10
    while len(results) < 2 and time.monotonic() < end:
        results += worker.poll()
        time.sleep(0.01)
    assert [(r.kind, r.value, r.cancelled) for r in results] == [("analyze", "partial", True),
                                                                  ("sketch", "whole", False)]


def test_a_net_field_naming_a_pipe_or_a_device_is_refused_for_what_it_is(tmp_path):
    """The window's net field, as the command line: a pipe would block its loader, /dev/zero never ends."""
    game = make_game("go", 9, komi=7.5)
    fifo = tmp_path / "net.pt"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "named pipe"), ("/dev/zero", "character device"), (tmp_path, "folder")):
        with pytest.raises(ValueError, match=f"it is a {kind}, not a regular file"):
            build_engine(game, str(path), FAST)
    with pytest.raises(ValueError, match="no net file"):
        build_engine(game, str(tmp_path / "absent.pt"), FAST)
