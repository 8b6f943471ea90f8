"""The index on Chroma's write log: Chroma's own read and purge queries use it once it exists."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memq.pipeline.adapters.chroma_log import INDEX, ensure_log_index, main

# Chroma 1.x's log table (chromadb/migrations/embeddings_queue/00001-embeddings.sqlite.sql)
QUEUE = """CREATE TABLE embeddings_queue (
    seq_id INTEGER PRIMARY KEY,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    operation INTEGER NOT NULL,
    topic TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB,
    encoding TEXT,
    metadata TEXT)"""
# the statements each write runs (rust/log/src/sqlite_log.rs: read, purge_logs)
READ = ("SELECT seq_id, id, operation, vector, encoding, metadata FROM embeddings_queue "
        "WHERE topic = ? AND seq_id > ? "
        "AND CAST(strftime('%s', created_at) AS INTEGER) <= (? / 1000000000) ORDER BY seq_id ASC")
PURGE = "DELETE FROM embeddings_queue WHERE topic = ? AND seq_id < ?"


def _store(tmp_path: Path, *, table: bool = True) -> Path:
    db_file = tmp_path / "chroma.sqlite3"
    with closing(sqlite3.connect(db_file)) as db, db:
        db.execute("CREATE TABLE migrations (dir TEXT)")
        if table:
            db.execute(QUEUE)
            db.executemany("INSERT INTO embeddings_queue (operation, topic, id) VALUES (0, ?, ?)",
                           [(f"persistent://t/d/c{i % 50}", f"r{i}") for i in range(2000)])
    return db_file


def _plan(db_file: Path, sql: str) -> str:
    with closing(sqlite3.connect(db_file)) as db:
        rows = db.execute(f"EXPLAIN QUERY PLAN {sql}", ("persistent://t/d/c7", 10, 2**62)
                          [: sql.count("?")]).fetchall()
    return " | ".join(str(row[-1]) for row in rows)


def test_chromas_log_queries_walk_the_whole_log_without_it_and_use_it_once_made(
        tmp_path: Path) -> None:
    db_file = _store(tmp_path)
    assert INDEX not in _plan(db_file, READ)
    assert INDEX not in _plan(db_file, PURGE)

    assert ensure_log_index(tmp_path) == "created"  # the data directory, as `chroma run --path`
    assert ensure_log_index(db_file) == "present"  # or the file; a second run changes nothing
    assert INDEX in _plan(db_file, READ)
    assert INDEX in _plan(db_file, PURGE)
    with closing(sqlite3.connect(db_file)) as db:
        assert db.execute("SELECT count(*) FROM embeddings_queue").fetchone() == (2000,)


def test_a_store_chroma_has_not_set_up_is_left_alone(tmp_path: Path) -> None:
    db_file = _store(tmp_path, table=False)
    assert ensure_log_index(tmp_path) == "no log yet"
    with closing(sqlite3.connect(db_file)) as db:
        names = {n for (n,) in db.execute("SELECT name FROM sqlite_master")}
    assert names == {"migrations"}


def test_a_missing_database_is_an_error_and_nothing_is_created(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(FileNotFoundError):
        ensure_log_index(tmp_path / "chroma.sqlite3")
    assert main([str(tmp_path)]) == 1
    assert "no Chroma database" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_scrub_blanks_deleted_records_and_leaves_their_words_nowhere_in_the_file(
        tmp_path: Path) -> None:
    from memq.pipeline.adapters.chroma_log import scrub

    db_file = tmp_path / "chroma.sqlite3"
    marker = "Zq7-locker-code"
    with closing(sqlite3.connect(db_file)) as db, db:
        db.execute(QUEUE)
        rows = [  # (operation, topic, id, metadata): 2 upsert, 3 delete
            (2, "t1", "gone", f'{{"record": "{marker} one"}}'),
            (2, "t1", "gone", f'{{"record": "{marker} two"}}'),
            (2, "t1", "kept", '{"record": "I like tea."}'),
            (3, "t1", "gone", None),
            (2, "t1", "back", f'{{"record": "{marker} said before"}}'),
            (3, "t1", "back", None),
            (2, "t1", "back", '{"record": "said again after its delete"}'),
            (2, "t2", "gone", '{"record": "another collection, same id"}'),
        ]
        db.executemany("INSERT INTO embeddings_queue (operation, topic, id, vector, metadata) "
                       "VALUES (?, ?, ?, x'00', ?)", rows)
    assert marker.encode() in db_file.read_bytes()
    assert scrub(tmp_path) == 3
    with closing(sqlite3.connect(db_file)) as db:
        left = db.execute("SELECT topic, id, operation, metadata IS NULL, vector IS NULL "
                          "FROM embeddings_queue ORDER BY seq_id").fetchall()
    # every row stays (a replay reaches the same state), vectors too; the words go
    assert left == [("t1", "gone", 2, 1, 0), ("t1", "gone", 2, 1, 0), ("t1", "kept", 2, 0, 0),
                    ("t1", "gone", 3, 1, 0), ("t1", "back", 2, 1, 0), ("t1", "back", 3, 1, 0),
                    ("t1", "back", 2, 0, 0), ("t2", "gone", 2, 0, 0)]
    assert marker.encode() not in db_file.read_bytes()  # nor in a free page
    assert scrub(tmp_path) == 0  # idempotent
