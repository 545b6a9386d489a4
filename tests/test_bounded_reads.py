"""Bounded reads: every reader in util/, nn/checkpoint.py, nn/weights.py and learn/rundir.py refuses
what is not a regular file (named pipes, devices, folders) and what is larger than its cap, with a
ValueError naming the file and the limit, before it allocates anything big.

Every attack is a real file: a FIFO made with os.mkfifo, /dev/zero, symlinks, crafted .pt and
.txt.gz files. The memory attacks run in a child process under RLIMIT_AS (its size after imports
plus 512 MiB), so a regression fails there with a MemoryError instead of eating the machine, and
each test has a timeout so a reader that blocks on a pipe fails instead of hanging.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path

import pytest
import torch

from zero9.games import make_game
from zero9.learn.rundir import RunDir, StatusLost
from zero9.nn import checkpoint
from zero9.nn.checkpoint import load_checkpoint, load_net, read_meta, save_checkpoint
from zero9.nn.net import ZeroNet
from zero9.nn.net_limits import MAX_BLOCKS, MAX_FILTERS, MAX_PARAMETERS
from zero9.nn.weights import MAX_LINE_BYTES, MAX_LINES, load_lz_weights, lz_text
from zero9.util.files import (
    TooLargeError,
    read_json,
    read_jsonl,
    read_regular_file,
    read_text_file,
    read_text_lines,
)

ROOT = Path(__file__).resolve().parents[1]
GAME = make_game("gomoku", 6, connect=4)
pytestmark = pytest.mark.timeout(60)


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def special_files(folder: Path, name: str) -> dict[str, tuple[Path, str]]:
    """A named pipe, /dev/zero, a symlink to /dev/zero and a folder, each with the kind its error names."""
    link = folder / f"zero-{name}"
    link.symlink_to("/dev/zero")
    (folder / f"dir-{name}").mkdir()
    return {"fifo": (fifo(folder, f"fifo-{name}"), "named pipe"),
            "dev-zero": (Path("/dev/zero"), "character device"),
            "link": (link, "character device"), "folder": (folder / f"dir-{name}", "folder")}


# --- zero9.util.files ---------------------------------------------------------------------------


def test_every_util_reader_refuses_pipes_devices_and_folders_by_name(tmp_path):
    readers = {
        "read_regular_file": lambda p: read_regular_file(p, 1000, "test file"),
        "read_text_file": lambda p: read_text_file(p, 1000, 1000, "test file"),
        "read_text_lines": lambda p: list(read_text_lines(p, 1000, 1000, 100, "test file")),
        "read_json": read_json,
        "read_jsonl": read_jsonl,
    }
    for reader_name, read in readers.items():
        for kind, (path, words) in special_files(tmp_path, reader_name).items():
            with pytest.raises(ValueError) as refused:
                read(path)
            assert str(path) in str(refused.value), (reader_name, kind, refused.value)
            assert words in str(refused.value) or "Is a directory" in str(refused.value), (reader_name, kind)


def test_size_caps_name_the_file_and_the_limit(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(TooLargeError, match=r"big\.txt is larger than the 1,000 bytes"):
        read_regular_file(big, 1000, "test file")
    bomb = tmp_path / "bomb.txt.gz"  # 10 MB of text in ~10 KB
    bomb.write_bytes(gzip.compress(b"0 " * (5 << 20)))
    assert bomb.stat().st_size < 50_000
    with pytest.raises(TooLargeError, match=r"bomb\.txt\.gz holds more than the 1,000,000 bytes of text"):
        read_text_file(bomb, 100_000, 1_000_000, "test file")
    with pytest.raises(TooLargeError, match=r"bomb\.txt\.gz, line 1: longer than the 4,096 bytes"):
        list(read_text_lines(bomb, 100_000, 10 << 20, 4096, "test file"))
    lines = tmp_path / "lines.txt.gz"
    lines.write_bytes(gzip.compress(b"1 2\n" * 1000))
    with pytest.raises(TooLargeError, match=r"lines\.txt\.gz holds more than the 2,000 bytes"):
        list(read_text_lines(lines, 100_000, 2000, 100, "test file"))
    assert list(read_text_lines(lines, 100_000, 4000, 3, "test file")) == ["1 2"] * 1000
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"pad": "x" * 3000}))
    with pytest.raises(TooLargeError, match=r"status\.json is larger than the 1,000 bytes"):
        read_json(status, max_bytes=1000)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"1\n\xff\n")
    with pytest.raises(ValueError, match=r"binary\.txt: not a text file \(byte 2 is not ASCII\)"):
        read_text_file(binary, 100, 100, "test file")


# --- net files ---------------------------------------------------------------------------------


def test_net_loaders_refuse_pipes_devices_and_folders_as_one_line(tmp_path):
    for loader in (load_net, load_checkpoint, load_lz_weights, read_meta):
        for kind, (path, words) in special_files(tmp_path, loader.__name__).items():
            with pytest.raises(ValueError) as refused:
                loader(path)
            text = str(refused.value)
            assert str(path) in text and "\n" not in text, (loader.__name__, kind, text)
            assert words in text or "Is a directory" in text, (loader.__name__, kind, text)


def crafted_checkpoints(folder: Path) -> dict[str, tuple[Path, str]]:
    """Checkpoints whose config claims a shape zero9 must not build -> the words their error must hold."""
    net = ZeroNet(5, 6, 36, blocks=1, filters=8)
    good = folder / "good.pt"
    save_checkpoint(good, net, {"game": GAME.to_dict()})
    payload = torch.load(good, weights_only=True)
    claims = {"filters": {"filters": 200_000}, "blocks": {"blocks": 10**6}, "size": {"size": 10_000},
              "planes": {"in_planes": 10**5}, "bool": {"blocks": True}, "float": {"filters": 8.0},
              "actions": {"num_actions": 50},
              "parameters": {"blocks": MAX_BLOCKS, "filters": MAX_FILTERS}}  # each in range, together too big
    words = {"filters": "filters=200000 is outside zero9's limits (1 to 512)",
             "blocks": "blocks=1000000 is outside zero9's limits (0 to 80)",
             "size": "size=10000 is outside zero9's limits (2 to 25)",
             "planes": "in_planes=100000 is outside zero9's limits (1 to 64)",
             "bool": "blocks is True, not a whole number", "float": "filters is 8.0, not a whole number",
             "actions": "num_actions=50 fits neither 6x6 Go (37) nor Gomoku (36)",
             "parameters": f"over zero9's limit of {MAX_PARAMETERS:,}"}
    files = {}
    for name, claim in claims.items():
        path = folder / f"{name}.pt"
        torch.save(dict(payload, config=dict(payload["config"], **claim)), path)
        files[name] = (path, words[name])
    return files


MEMORY_SCRIPT = r"""
import json, resource, sys, time
from zero9.nn.checkpoint import load_net
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
out = {}
for path in sys.argv[1:]:
    start = time.monotonic()
    try:
        load_net(path, device="cpu")
        out[path] = ["loaded", time.monotonic() - start]
    except MemoryError:
        out[path] = ["MemoryError", time.monotonic() - start]
    except Exception as e:
        out[path] = [f"{type(e).__name__}: {e}", time.monotonic() - start]
print("RESULT " + json.dumps(out))
"""


def load_under_memory_limit(paths: list[Path]) -> dict[str, tuple[str, float]]:
    """load_net of each path in a child process allowed 512 MiB beyond its size after imports."""
    result = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, *map(str, paths)], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, result.stdout + result.stderr
    return json.loads(line[len("RESULT "):])


def hostile_lz_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Leela Zero text files built to exhaust memory or time -> the words their error must hold."""
    files = {}
    one_line = zlib.compressobj(9, zlib.DEFLATED, 31)  # the file: 204 KB of gzip, one 200 MiB line
    parts = [one_line.compress(b"1\n")] + [one_line.compress(b"0 " * (1 << 20)) for _ in range(100)]
    path = folder / "one-line.txt.gz"
    path.write_bytes(b"".join(parts) + one_line.compress(b"\n") + one_line.flush())
    files["one-line"] = (path, f"line 2: longer than the {MAX_LINE_BYTES:,} bytes a line may hold")
    path = folder / "newlines.txt.gz"  # endless blank lines
    path.write_bytes(gzip.compress(b"1\n" + b"\n" * (50 << 20)))
    files["newlines"] = (path, f"more than {MAX_LINES:,} lines")
    path = folder / "many-lines.txt.gz"  # a tower of a million blocks, line by line
    path.write_bytes(gzip.compress(b"1\n" + b"0.5 0.5\n" * 1_000_000))
    files["many-lines"] = (path, f"more than {MAX_LINES:,} lines")
    path = folder / "wide.txt.gz"  # 100,000 filters claimed by line 3
    path.write_bytes(gzip.compress(b"1\n0.5\n" + b"0.5 " * 100_000 + b"\n"))
    files["wide"] = (path, f"line 3: 100,000 filters, over zero9's limit of {MAX_FILTERS}")
    return files


def test_hostile_net_files_are_refused_before_allocating_under_a_memory_limit(tmp_path):
    cases = {**crafted_checkpoints(tmp_path), **hostile_lz_files(tmp_path)}
    results = load_under_memory_limit([path for path, _ in cases.values()])
    for name, (path, words) in cases.items():
        what, seconds = results[str(path)]
        assert str(path) in what and words in what and "\n" not in what, (name, what)
        assert what.startswith(("ValueError", "TooLargeError")), (name, what)
        assert seconds < 10, (name, seconds)
    assert (tmp_path / "one-line.txt.gz").stat().st_size < 250_000


def test_the_limits_leave_real_nets_alone(tmp_path):
    for name in ("go_9x9_best.pt", "go_9x9_best.txt.gz", "initial_9x9.txt.gz", "gomoku_15x15_best.pt"):
        net, meta = load_net(ROOT / "example-data" / name, device="cpu")
        assert meta["hash"]
    big = ZeroNet(18, 19, 362, blocks=2, filters=256)  # Leela Zero's widest tower, two blocks of it
    path = tmp_path / "wide.txt.gz"
    path.write_bytes(gzip.compress(lz_text(big).encode(), compresslevel=1))
    assert load_lz_weights(path).config == big.config


def test_a_zip_whose_entries_unpack_past_the_cap_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "deflated.pt"  # a small file whose one entry unpacks to 2 MB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data/0", b"\0" * (2 << 20))
    assert path.stat().st_size < 20_000
    monkeypatch.setattr(checkpoint, "MAX_CHECKPOINT_BYTES", 1 << 20)
    with pytest.raises(ValueError, match=r"deflated\.pt: its zip entries unpack to 2,097,152 bytes, over the "
                                         r"1,048,576"):
        load_checkpoint(path)


def test_checkpoint_files_over_the_cap_are_refused_by_size(tmp_path, monkeypatch):
    path = tmp_path / "net.pt"
    save_checkpoint(path, ZeroNet(5, 6, 36, blocks=1, filters=8), {"game": GAME.to_dict()})
    monkeypatch.setattr(checkpoint, "MAX_CHECKPOINT_BYTES", 1000)
    with pytest.raises(ValueError, match=r"net\.pt is larger than the 1,000 bytes zero9 reads"):
        load_net(path, device="cpu")


def test_pickled_code_is_still_refused(tmp_path):
    path = tmp_path / "code.pt"
    buffer = io.BytesIO()
    torch.save({"format": "zero9-checkpoint", "x": Path("/etc/passwd")}, buffer)
    path.write_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="holds Python objects besides tensors"):
        load_net(path, device="cpu")


# --- run directories -----------------------------------------------------------------------------


def test_status_json_that_is_a_pipe_or_device_is_refused_not_read(tmp_path):
    rd = RunDir(tmp_path / "run")
    rd.root.mkdir()
    rd.config_path.write_text("{}")
    rd.events_log.parent.mkdir()
    rd.events_log.write_text('{"event": "created", "net": "abc"}\n')
    os.mkfifo(rd.status_path)
    with pytest.raises(StatusLost, match=r"status\.json is a named pipe, not a regular file.*rebuild-status"):
        rd.status()
    rd.status_path.unlink()
    rd.status_path.symlink_to("/dev/zero")
    with pytest.raises(StatusLost, match="character device"):
        rd.status()


def test_the_child_process_limit_catches_a_reader_that_reads_everything(tmp_path):
    """The memory limit of these tests is real: a 1 GiB read in the child dies with MemoryError."""
    script = textwrap.dedent("""
        import resource
        vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
        try:
            open("/dev/zero", "rb").read(1 << 30)
        except MemoryError:
            print("MemoryError")
        """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "MemoryError", result.stdout + result.stderr
