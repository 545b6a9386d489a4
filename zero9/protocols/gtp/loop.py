"""The command loop of ``zero9 gtp``: lines in, replies out, and the streams that run between them.

Vocabulary:

- **command line**: one line of input: an optional numeric **id**, a command name and
  its **arguments**. Comments (``#`` to the end of the line), control characters and
  a trailing CR are removed first; an empty line is ignored.
- **reply**: ``=id text`` on success, ``?id message`` on failure, then an empty line.
- **overlong line**: more than :data:`MAX_LINE_CHARS` characters without a newline. The
  loop never holds more than that: it reads the line in pieces of that size, drops them up
  to the newline, and answers one ``?`` reply, so the client and the engine stay in step
  (one reply per line) and memory stays bounded whatever a client sends.
- **stream command** (:class:`Reply` with a ``stream``): the reply's ``=id`` goes out at
  once, then the stream writes its lines from a thread. An **interruptible** stream
  (``lz-analyze``, ``kata-analyze``) runs until the next input line arrives, as in Leela
  Zero and KataGo; the empty line that ends its reply goes out when it stops, and the
  line that stopped it is then executed as usual.
- **engine**: anything with ``execute(line) -> Reply | None`` and a ``quit`` flag
  (:class:`zero9.protocols.gtp.GTPEngine`); this module knows no command.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

log = logging.getLogger(__name__)

MAX_LINE_CHARS = 1 << 20  # 1 MiB: a GTP command is a few words; setup lists stay far below this


Stream = Callable[[Callable[[str], None], threading.Event], None]  # (write, stop) -> None


@dataclass
class Reply:
    """What one command line produced: a finished reply, or a stream to run."""

    text: str = ""
    stream: Stream | None = None
    interruptible: bool = False  # lz-analyze: stopped by the next input line


def clean_line(line: str) -> str:
    """The command text of a raw line: no comment, no control characters, tabs as spaces."""
    line = line.split("#", 1)[0]
    line = "".join(" " if c == "\t" else c for c in line if c == "\t" or ord(c) >= 32 and ord(c) != 127)
    return line.strip()


def parse_command(line: str) -> tuple[str, str, list[str]] | None:
    """(id text, command name, arguments) of a raw line; None for an empty or comment line."""
    words = clean_line(line).split()
    if not words:
        return None
    ident = ""
    if words[0].isdigit():
        ident, words = words[0], words[1:]
    if not words:
        return ident, "", []
    return ident, words[0].lower(), words[1:]


@dataclass
class InputLine:
    """One line read by :func:`read_line`: its text ("" at end of input) or the start of an overlong one."""

    text: str
    overlong: bool = False

    @property
    def eof(self) -> bool:
        return self.text == "" and not self.overlong


def read_line(inp: TextIO, limit: int = MAX_LINE_CHARS) -> InputLine:
    """The next line of ``inp``, holding at most ``limit`` characters of it in memory (see overlong line)."""
    line = inp.readline(limit + 1)
    if len(line) <= limit or line.endswith("\n"):
        return InputLine(line)
    head = line[:64]
    while line and not line.endswith("\n"):  # drop the rest of the line, a piece at a time
        line = inp.readline(limit)
    return InputLine(head, overlong=True)


def overlong_reply(head: str, limit: int = MAX_LINE_CHARS) -> Reply:
    """The one ``?`` reply to an overlong line (its id, if it starts with one, is kept)."""
    words = head.split()
    ident = words[0] if words and words[0].isdigit() and len(words) > 1 else ""
    return Reply(f"?{ident} line too long: more than {limit:,} characters without a newline "
                 f"(the line was skipped)\n\n")


class _Writer:
    """Whole replies to the output, one at a time (the analysis thread writes too)."""

    def __init__(self, out: TextIO, transcript: TextIO | None = None):
        self.out = out
        self.transcript = transcript
        self.lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self.lock:
            try:
                self.out.write(text)
                self.out.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client went away; the loop ends at EOF
            self.log(text)

    def log(self, text: str) -> None:
        """-l FILE: everything in and out, flushed at once (Leela Zero reopens its log per command)."""
        if self.transcript is not None:
            self.transcript.write(text)
            self.transcript.flush()


def _reply_to(engine, line: InputLine, limit: int) -> Reply | None:
    if line.overlong:
        return overlong_reply(line.text, limit)
    try:
        return engine.execute(line.text)
    except Exception as e:  # a bug must not kill a GUI's engine: report it and go on
        ident = (parse_command(line.text) or ("", "", []))[0]
        return Reply(f"?{ident} internal error: {type(e).__name__}: {e}\n\n")


def serve(engine, inp: TextIO, out: TextIO, transcript: TextIO | None = None,
          limit: int = MAX_LINE_CHARS) -> int:
    """Read commands until ``quit`` or EOF; returns the exit status. ``transcript`` logs both ways."""
    write = _Writer(out, transcript)
    pending: InputLine | None = None
    while not engine.quit:
        line = pending if pending is not None else read_line(inp, limit)
        pending = None
        if line.eof:
            break
        text = line.text + (" ..." if line.overlong else "")
        write.log(text if text.endswith("\n") else text + "\n")
        reply = _reply_to(engine, line, limit)
        if reply is None:
            continue
        write(reply.text)
        if reply.stream is None:
            continue
        stop = threading.Event()
        worker = threading.Thread(target=_run_stream, args=(reply.stream, write, stop), daemon=True)
        worker.start()
        if reply.interruptible:
            pending = read_line(inp, limit)  # any input stops the analysis
            stop.set()
        worker.join()
        if pending is not None and pending.eof:
            break
    return 0


def _run_stream(stream: Stream, write: Callable[[str], None], stop: threading.Event) -> None:
    """Run a stream command; the empty line that ends its reply goes out as soon as it is done."""
    try:
        stream(write, stop)
    except Exception as e:
        log.error("zero9: analysis failed: %s: %s", type(e).__name__, e)
    write("\n")
