"""KaTrain's window analysing a 9x9 game with ``zero9 analysis`` as its engine: screenshots for the docs.

Run under a display (``xvfb-run -a -s "-screen 0 1300x1000x24" python scripts/katrain_screenshots.py``).
KaTrain (1.20, with kivy) starts from its own package config with only the engine's program
changed to a two-line script that runs ``zero9`` (docs/use-in-katrain.md), loads ``--sgf``,
analyses every move, and this script saves the window at ``--moves`` (the last one also with
KaTrain's territory overlay) into ``--out``. Its home folder (KaTrain's ~/.katrain) is a
temporary one, so a real KaTrain setup is never touched.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def prepare(home: str, visits: int) -> str:
    """KaTrain's package config with zero9 as the engine, written under ``home``; returns its path."""
    import katrain

    exe = os.path.join(home, "zero9-katago")
    with open(exe, "w") as f:
        f.write(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m zero9 \"$@\"\n")
    os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
    with open(os.path.join(os.path.dirname(katrain.__file__), "config.json")) as f:
        config = json.load(f)
    config["engine"].update(katago=exe, max_visits=visits, fast_visits=max(1, visits // 4))
    config["ui_state"] = {"restoresize": True, "size": [1200, 920]}  # width x 3 bytes a multiple of 4
    path = os.path.join(home, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sgf", default=os.path.join(ROOT, "docs/runs/review-gnugo/game-0000.sgf"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs/images"))
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--moves", type=int, nargs="+", default=[24, 60])
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="zero9-katrain-")
    os.environ.update(HOME=home, KIVY_HOME=os.path.join(home, ".kivy"), KIVY_NO_ARGS="1")
    config = prepare(home, args.visits)
    sys.argv = [sys.argv[0], config]  # KaTrain reads a config file named on its command line

    import katrain.__main__ as katrain_main
    from kivy.clock import Clock
    from kivy.core.window import Window

    app = katrain_main.KaTrainApp()
    started = time.monotonic()
    shots = list(args.moves)

    def load(_dt):
        app.gui.load_sgf_file(args.sgf, fast=False, rewind=True)
        Clock.schedule_interval(wait, 1.0)

    def wait(_dt):
        engine = app.gui.engine
        if engine is not None and not engine.is_idle() and time.monotonic() - started < args.timeout:
            return True
        print(f"analysis done in {time.monotonic() - started:.0f} s", flush=True)
        Clock.schedule_once(shoot, 1.0)
        return False

    def shoot(_dt):
        move = shots.pop(0)
        last = not shots
        app.gui.analysis_controls.ownership.checkbox.active = last  # the territory overlay on the last
        app.gui.analysis_controls.hints.checkbox.active = not last  # the candidate moves on the others
        app.gui("undo", 9999)  # KaTrain's own navigation (its message loop redraws the board)
        app.gui("redo", move)
        Clock.schedule_once(lambda _dt: save(move, last), 4.0)

    def save(move, last):
        node = app.gui.game.current_node
        top = [(m["move"], m["visits"]) for m in node.candidate_moves[:3]]
        print(f"move {move}: {node.root_visits} root visits, candidates {top}", flush=True)
        name = os.path.join(args.out, f"katrain-zero9-move{move}.png")
        written = Window.screenshot(name=name)  # kivy numbers the file it writes
        if written:
            os.replace(written, name)
        print(f"wrote {name}", flush=True)
        if last:
            Clock.schedule_once(lambda _dt: app.stop(), 1.0)
        else:
            Clock.schedule_once(shoot, 0.5)

    Clock.schedule_once(load, 3.0)
    app.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
