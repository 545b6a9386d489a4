"""The window's fixes for a newcomer, driven with real pygame events (SDL dummy driver).

Real parts: the shipped nets, SearchPlayer searches at a few visits, SGF files on disk.
Screenshots go to docs/images/ when ZERO9_SAVE_SCREENSHOTS=1.
"""

from __future__ import annotations

import pygame
from test_gui import FAST, click_vertex, count, go_engine, make_app, pump, shots  # noqa: F401

from gui.app import App
from gui.model import Settings
from gui.sgfio import Record, save_sgf
from zero9.games import BLACK, make_game


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
