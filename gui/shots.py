"""The window's documentation screenshots: ``python gui/shots.py OUT TAG [SCENE...]``.

Writes ``OUT/play-SCENE-TAG.png`` (80 % size) for each scene, driving the real window under the
dummy video driver with the shipped nets and the SGFs in docs/runs. The same script made the
"before" pictures on the window as it was (commit c29c6be), with that commit's ``gui`` first on
the path, so it uses only what both windows have (``App``, ``model.load``, ``model.click``...):

    git archive c29c6be gui | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before:$PWD python gui/shots.py docs/images before loaded five chooser error small newgame
    PYTHONPATH=$PWD python gui/shots.py docs/images after
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

try:  # Pillow comes with matplotlib; without it the pictures are plain (larger) PNGs
    from PIL import Image
except ImportError:
    Image = None

from gui.app import App  # noqa: E402
from gui.settings import Settings  # noqa: E402
from zero9.games import make_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GO_GAME = ROOT / "docs/runs/levels/level_strong-vs-gnugo_10/game-0000.sgf"  # level:strong vs gnugo:10, B+3.5
GOMOKU_GAME = ROOT / "docs/runs/opponents-cpu/gomoku-rapfi1000/game-0000.sgf"  # ends in a white five
SCALE = 0.8


def pump(app: App, until, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        app.step()
        if until():
            return
        time.sleep(0.01)


def press(app: App, key: int, text: str = "") -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, unicode=text, mod=0))
    app.step()


def click(app: App, pos: tuple[int, int]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    app.step()


def shot(app: App, out: Path, name: str) -> None:
    for _ in range(3):
        app.step()
    w, h = app.screen.get_size()
    size = (round(w * SCALE), round(h * SCALE))
    small = pygame.transform.smoothscale(app.screen, size)
    path = out / f"{name}.png"
    if Image is not None:  # a palette PNG is a third of the size
        image = Image.frombytes("RGB", size, pygame.image.tobytes(small, "RGB"))
        image.quantize(colors=160, dither=Image.Dither.NONE).save(path, optimize=True)
    else:
        pygame.image.save(small, str(path))
    print("wrote", path)


def loaded(app_size=(1060, 720), sgf: Path = GO_GAME, settle: float = 20.0, **kw) -> App:
    app = App(Settings(visits=8, **kw), None, size=app_size, sgf=str(sgf))
    pump(app, lambda: app.model.loading is None and len(app.model.history) > 10)
    pump(app, lambda: not app.model.worker.busy, timeout=settle)  # the quick pass, where there is one
    return app


def scene_loaded(out: Path, tag: str) -> None:
    app = loaded()
    shot(app, out, f"play-loaded-{tag}")
    app.close()


def scene_five(out: Path, tag: str) -> None:
    app = loaded(sgf=GOMOKU_GAME, game="gomoku", size=15)
    shot(app, out, f"play-five-{tag}")
    app.close()


def scene_chooser(out: Path, tag: str) -> None:
    app = loaded(settle=0.5)
    press(app, pygame.K_l, "l")
    shot(app, out, f"play-chooser-{tag}")
    app.close()


def scene_error(out: Path, tag: str) -> None:
    bad = Path("/tmp/zero9-shots/games-from-the-club-evening/two-black-moves-in-a-row.sgf")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("(;GM[1]SZ[9];B[ee];B[cc])")
    app = App(Settings(visits=8), None, size=(1060, 720))
    pump(app, lambda: app.model.loading is None)
    app.model.load(str(bad))
    shot(app, out, f"play-error-{tag}")
    app.close()


def scene_handicap(out: Path, tag: str) -> None:
    path = Path("/tmp/zero9-shots-handicap.sgf")
    path.write_text("(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cg][gc]PB[Kim]PW[Lee]"
                    ";W[ee];B[dd];W[fd];B[fe];W[ge];B[ef];W[de];B[ce];W[ed])")
    app = App(Settings(visits=8), None, size=(1060, 720))
    pump(app, lambda: app.model.loading is None)
    app.model.load(str(path))  # the window before refused it (and cut the reason off)
    pump(app, lambda: app.model.loading is None)
    pump(app, lambda: not app.model.worker.busy, timeout=20)
    shot(app, out, f"play-handicap-{tag}")
    app.close()


def scene_small(out: Path, tag: str) -> None:
    app = App(Settings(visits=8), None, size=(800, 600))
    m = app.model
    pump(app, lambda: m.loading is None)
    m.click(m.game.vertex_to_action("E5"))
    pump(app, lambda: len(m.history) == 3 and not m.thinking)
    pump(app, lambda: m.analysis_at().winrate is not None, timeout=10)
    shot(app, out, f"play-800x600-{tag}")
    app.close()


def scene_newgame(out: Path, tag: str) -> None:
    app = App(Settings(game="gomoku", size=15, visits=8), None, size=(1060, 720))
    pump(app, lambda: app.model.loading is None)
    press(app, pygame.K_n, "n")
    widgets, _, _ = app.view.widgets(app.model, app.ui)
    click(app, next(w for w in widgets if w.name == "set:game:go").rect.center)
    shot(app, out, f"play-newgame-{tag}")
    app.close()


def scene_variations(out: Path, tag: str) -> None:
    app = loaded()
    m = app.model
    m.navigate(30)
    if m.position.to_play != m.settings.human:
        m.swap_sides()
    free = next(p for p in range(81) if m.position.board_array()[p] == 0 and m.position.is_legal(p))
    m.click(free)
    pump(app, lambda: not m.thinking and len(m.history) == 33, timeout=30)
    m.navigate(31)
    shot(app, out, f"play-variations-{tag}")
    app.close()


def scene_territory(out: Path, tag: str) -> None:
    app = loaded(settle=60)
    m = app.model
    m.navigate(40)
    m.toggle("territory")
    pump(app, lambda: not m.worker.busy, timeout=10)
    shot(app, out, f"play-territory-{tag}")
    app.close()


def scene_dead(out: Path, tag: str) -> None:
    go = make_game("go", 9, komi=7.5)
    moves = [v for row in range(1, 10) for v in (f"E{row}", f"F{row}")] + ["H5", "B5"]
    actions = " ".join(f";{'BW'[i % 2]}[{_sgf(go, v)}]" for i, v in enumerate(moves))
    path = Path("/tmp/zero9-shots-dead.sgf")
    path.write_text(f"(;GM[1]FF[4]SZ[9]KM[7.5]{actions};B[];W[])")
    app = loaded(sgf=path, settle=60)
    shot(app, out, f"play-dead-{tag}")
    app.close()


def _sgf(game, vertex: str) -> str:
    y, x = divmod(game.vertex_to_action(vertex), game.size)
    return "abcdefghi"[x] + "abcdefghi"[game.size - 1 - y]


SCENES = {"loaded": scene_loaded, "five": scene_five, "chooser": scene_chooser, "error": scene_error,
          "handicap": scene_handicap, "small": scene_small, "newgame": scene_newgame,
          "variations": scene_variations, "territory": scene_territory, "dead": scene_dead}


def main(argv: list[str]) -> int:
    out, tag, names = Path(argv[0]), argv[1], argv[2:] or list(SCENES)
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        SCENES[name](out, tag)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
