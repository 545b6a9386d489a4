"""The AI behind the window: building it from the settings, and running it off the event loop.

Vocabulary:

- **level**: a named strength of :mod:`zero9.arena.levels` (Beginner ... Max: visits per
  move, and for the weaker ones a choice among the search's best few moves);
  :data:`LEVELS` gives their visits. The visits field can set any other number (a
  ``custom`` level: the search's best move at those visits).
- **engine**: a ready :class:`zero9.search.player.SearchPlayer` with a label saying which
  net it uses, or the notice ``no net: uniform prior`` when none exists for the
  game and size (the search then runs on a :class:`UniformEvaluator`).
- **fit**: a net *fits* a game when it was trained for the same game name and
  board size; a net that does not fit is refused with :class:`NetMismatch`.
- **job**: a function run on the :class:`Worker`'s background thread (load a net,
  choose a move, analyse, evaluate). The event loop submits jobs and collects their
  **results** with :meth:`Worker.poll` each frame, so it never waits for the AI.
  A job may also post **progress** (live search statistics) while it runs.
- **tag**: what a result is about (the position it was computed for); the model
  drops results whose position is no longer on the board (after an undo, say).

The SearchPlayer is not thread-safe, so the worker runs one job at a time; a job
submitted while another runs waits as *pending* (only the newest is kept), and
the running one is asked to cancel through the function it was given.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zero9.games import Game
from zero9.nn.checkpoint import check_net_file, default_net_path
from zero9.search.analysis import make_evaluator
from zero9.search.player import NetSource
from zero9.settings import PlayConfig

DEFAULT_LEVEL = "beginner"  # a level a beginner can beat (docs/levels.md: 29-1 against random play)
UNIFORM_NOTICE = "no net: uniform prior"


@dataclass
class Engine:
    player: Any  # zero9.search.player.SearchPlayer
    label: str  # 'net go9-10x64.pt (10x64)' or UNIFORM_NOTICE
    uniform: bool
    net_path: Path | None
    analyser: Any = None  # the evaluator zero9.search.analysis searches with (ownership kept: Go scores)
    net: Any = None  # the net itself (review_game builds its own seeded evaluator from it); None: uniform


def resolve_net_path(game: Game, net: str | None) -> Path | None:
    """The net file the window will use: ``net`` if given, else the shipped net (None if there is none)."""
    if net:
        return Path(net).expanduser()

    return default_net_path(game.name, game.size)


def build_engine(game: Game, net: str | None, visits: int) -> Engine:
    """Load the net (or fall back to a uniform prior) and wrap it in a SearchPlayer.

    Raises NetMismatch or ValueError (naming the file) when ``net`` cannot be used.
    """

    path = resolve_net_path(game, net)
    if path is None:
        player = NetSource(None).player(game, play=PlayConfig(visits=visits))
        return Engine(player, UNIFORM_NOTICE, True, None, player.evaluator)
    try:
        check_net_file(path)  # absent, a folder, a pipe, a device, empty or too large: named at once
    except (OSError, ValueError) as e:
        raise ValueError(str(e)) from e

    try:
        source = NetSource(path, device="cpu")
    except Exception as e:  # a corrupt or foreign file: say which one, whatever the loader raised
        raise ValueError(f"cannot load net {path}: {e}") from e
    source.check(game)  # NetMismatch naming the file, before anything is built on the net
    config = getattr(source.net, "config", {})
    shape = f" ({config['blocks']}x{config['filters']})" if "blocks" in config and "filters" in config else ""
    analyser = make_evaluator(source.net) if game.name == "go" else source.evaluator(game)
    player = source.player(game, play=PlayConfig(visits=visits))
    return Engine(player, f"net {path.name}{shape}", False, path, analyser, source.net)


@dataclass
class Result:
    kind: str  # the job's kind: 'engine', 'move', 'hint', 'eval', 'analyze'
    tag: Any  # what it is about (a position), so stale results can be dropped
    value: Any = None
    error: str = ""
    progress: bool = False  # True for live updates posted while the job runs
    cancelled: bool = False  # the job was asked to stop early (its value is partial)


Job = Callable[[Callable[[Any], None]], Any]  # job(progress) -> value


@dataclass
class _Submitted:
    kind: str
    tag: Any
    job: Job
    cancel: Callable[[], None] | None
    cancelled: bool = False


class Worker:
    """Runs one job at a time on a daemon thread; results come back through :meth:`poll`."""

    def __init__(self) -> None:
        self._results: queue.Queue[Result] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._running: _Submitted | None = None
        self._pending: _Submitted | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def running(self) -> tuple[str, Any] | None:
        """(kind, tag) of the job on the thread, if any."""
        r = self._running
        return (r.kind, r.tag) if r is not None and self.busy else None

    @property
    def pending(self) -> tuple[str, Any] | None:
        p = self._pending
        return (p.kind, p.tag) if p is not None else None

    def submit(self, kind: str, tag: Any, job: Job, cancel: Callable[[], None] | None = None) -> None:
        """Run ``job`` next. A running job is asked to cancel; an older pending job is replaced."""
        self._pending = _Submitted(kind, tag, job, cancel)
        self.cancel_running()
        self._start_pending()

    def cancel_running(self) -> None:
        if self.busy and self._running is not None and self._running.cancel is not None:
            self._running.cancelled = True
            self._running.cancel()

    def drop_pending(self) -> None:
        self._pending = None

    def poll(self) -> list[Result]:
        """Results (and progress) that arrived since the last poll; starts the pending job when free."""
        self._start_pending()
        out = []
        while True:
            try:
                out.append(self._results.get_nowait())
            except queue.Empty:
                return out

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until the thread is done (for shutdown and tests only; the event loop never calls it)."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.busy

    def _start_pending(self) -> None:
        if self.busy or self._pending is None:
            return
        self._running, self._pending = self._pending, None
        self._thread = threading.Thread(
            target=self._run, args=(self._running,), daemon=True, name=f"zero9-gui-{self._running.kind}"
        )
        self._thread.start()

    def _run(self, sub: _Submitted) -> None:
        def progress(value: Any) -> None:
            self._results.put(Result(sub.kind, sub.tag, value, progress=True))

        try:
            value = sub.job(progress)
            self._results.put(Result(sub.kind, sub.tag, value, cancelled=sub.cancelled))
        except Exception as e:  # shown in the window: the loop must survive a failing job
            message = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
            if not isinstance(e, ValueError):
                traceback.print_exc()
            self._results.put(Result(sub.kind, sub.tag, error=message))
