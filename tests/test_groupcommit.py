"""The group commit (zero9.distributed.groupcommit) with a real SQLite database and real files.

Many threads commit at once: each must hear success only for what is on disk and in the
database; two answers to one task race and exactly one wins, the other leaves no file; one
failing entry in a batch fails only itself.
"""

from __future__ import annotations

import os
import threading

import pytest

pytest.importorskip("sqlalchemy", reason="the server extra: pip install '.[server]'")

from zero9.distributed import db  # noqa: E402
from zero9.distributed.groupcommit import GroupCommit  # noqa: E402


def game_row(seed: int, name: str) -> dict:
    return dict(seed=seed, net="n" * 64, client="test", client_version="18", moves=3, winner="black",
                positions=3, sgf_file=f"sgf/{name}", chunk_file=f"chunks/{name}", submitted=1.0)


@pytest.fixture
def writer(tmp_path):
    for folder in ("sgf", "chunks"):
        (tmp_path / folder).mkdir()
    engine = db.connect(f"sqlite:///{tmp_path / 'server.db'}")
    with db.transaction(engine) as c:
        c.execute(db.networks.insert().values(hash="n" * 64, gzip_hash="g" * 64, number=0, blocks=1,
                                              filters=8, training_steps=0, created=1.0))
    return GroupCommit(engine, tmp_path)


def rows(writer: GroupCommit) -> dict[int, str]:
    with writer.engine.connect() as c:
        return {r.seed: r.sgf_file for r in c.execute(db.select(db.games.c.seed, db.games.c.sgf_file))}


def test_concurrent_commits_are_batched_and_all_kept(writer, tmp_path):
    done: list[int] = []

    def upload(seed: int) -> None:
        name = f"game-{seed}"
        writer.commit({f"sgf/{name}": f"sgf {seed}".encode(), f"chunks/{name}": os.urandom(500)},
                      [(db.games, game_row(seed, name))])
        done.append(seed)

    threads = [threading.Thread(target=upload, args=(seed,)) for seed in range(1, 201)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(done) == list(range(1, 201))
    stored = rows(writer)
    assert set(stored) == set(done)
    for seed, sgf_file in stored.items():
        assert (tmp_path / sgf_file).read_bytes() == f"sgf {seed}".encode()
    assert writer.entries == 200 and writer.batches < 200  # 200 waiting threads: some batches held several
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_racing_answers_to_one_task_one_wins_and_the_other_leaves_nothing(writer, tmp_path):
    """Both are queued before either commits: whichever comes second trips the unique seed, is
    retried alone, fails, and its files are removed; the first is untouched."""
    first = writer.submit({"sgf/a": b"a", "chunks/a": b"a"}, [(db.games, game_row(7, "a"))])
    second = writer.submit({"sgf/b": b"b", "chunks/b": b"b"}, [(db.games, game_row(7, "b"))])
    other = writer.submit({"sgf/c": b"c", "chunks/c": b"c"}, [(db.games, game_row(8, "c"))])
    assert first.result(30) is None and other.result(30) is None
    with pytest.raises(db.IntegrityError):
        second.result(30)
    assert rows(writer) == {7: "sgf/a", 8: "sgf/c"}
    assert sorted(p.name for p in (tmp_path / "sgf").iterdir()) == ["a", "c"]
    assert sorted(p.name for p in (tmp_path / "chunks").iterdir()) == ["a", "c"]


def test_a_failed_write_fails_only_its_own_entry(writer, tmp_path):
    (tmp_path / "sgf" / "taken").mkdir()  # a folder where a file should go: that entry cannot be written
    bad = writer.submit({"sgf/taken": b"x"}, [(db.games, game_row(9, "taken"))])
    good = writer.submit({"sgf/fine": b"y", "chunks/fine": b"y"}, [(db.games, game_row(10, "fine"))])
    assert good.result(30) is None
    with pytest.raises(OSError, match="not a regular file"):
        bad.result(30)
    assert rows(writer) == {10: "sgf/fine"}
