"""Chroma's local write log: the one index it lacks, and the scrub that takes deleted
records' words out of it (:func:`scrub`, run by ``memq scrub`` after a forget).

Why: a local ``chroma run`` (1.x, Rust) keeps every write in its SQLite log, the
``embeddings_queue`` table, until the collection's HNSW index is persisted (``sync_threshold``,
1000 unsynced records by default). With a collection per user and kind, most collections stay
below that, so the log holds nearly every record ever written. The table's only index is its
primary key ``seq_id``, but each write runs, for its own collection::

    SELECT ... FROM embeddings_queue WHERE topic = ? AND seq_id > ? ORDER BY seq_id   -- read
    DELETE FROM embeddings_queue WHERE topic = ? AND seq_id < ?                       -- purge

and both walk the other collections' rows too, so every write's cost grows with the whole
log (the measurements: scripts/results/2026-12-07-figures-from-comments.md). An index on
``(topic, seq_id)`` turns both into range lookups, whatever the log's size.

It only adds an index: Chroma's rows, its migrations (checked by file hash) and its
durability are untouched, and ``IF NOT EXISTS`` makes it safe to run at every start. Build it
while Chroma is stopped when the log is large (the build holds SQLite's write lock); on a new
store it takes milliseconds. Since the shared layout (pipeline/adapters/chroma_layout.py: few
collections, persisted every 20 or 100 records) the log stays short without it, and memq no
longer builds it by default: ``MEMQ_CHROMA_LOG_INDEX=on scripts/services up`` or
``memq chroma-index PATH`` for a store written by a release of a collection per user, until
``memq run relocate`` has run.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Literal

INDEX = "memq_embeddings_queue_topic_seq"
CREATE = f"CREATE INDEX IF NOT EXISTS {INDEX} ON embeddings_queue (topic, seq_id)"
DB_FILE = "chroma.sqlite3"

Outcome = Literal["created", "present", "no log yet"]


def database(path: Path) -> Path:
    """Chroma's SQLite file for a ``chroma run --path`` directory, or the file itself."""
    return path / DB_FILE if path.is_dir() else path


def ensure_log_index(path: Path, *, timeout_s: float = 60.0) -> Outcome:
    """Add the index if it is missing. ``path`` is Chroma's data directory or its SQLite file,
    which must exist (nothing is created where Chroma has not been). ``no log yet``: Chroma has
    not made its tables; run again once it has started."""
    db_file = database(path)
    if not db_file.is_file():
        raise FileNotFoundError(f"no Chroma database at {db_file}")
    # mode=rw: never create an empty database in the wrong place
    connection = sqlite3.connect(f"file:{db_file}?mode=rw", uri=True, timeout=timeout_s)
    with closing(connection) as db, db:  # closed after the commit
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        if "embeddings_queue" not in tables:
            return "no log yet"
        if INDEX in tables:
            return "present"
        db.execute(CREATE)
    return "created"


# Chroma's log operations (chromadb's Operation): 3 is a delete.
_DELETE = 3
# Every row of a record that was later deleted keeps its vector (a delete replays on it
# after a restart, from the index's persisted point) but loses its metadata, where memq's
# record, the words, lives. Only the HNSW index replays the log (the metadata segment is
# written with the log), and the record's last operation is its delete, so the state any
# replay reaches is the same.
BLANK = f"""
WITH gone AS (SELECT topic, id, max(seq_id) AS at FROM embeddings_queue
              WHERE operation = {_DELETE} GROUP BY topic, id)
UPDATE embeddings_queue SET metadata = NULL FROM gone
 WHERE embeddings_queue.topic = gone.topic AND embeddings_queue.id = gone.id
   AND embeddings_queue.seq_id < gone.at AND embeddings_queue.metadata IS NOT NULL"""
FTS = "embedding_fulltext_search"


def scrub(path: Path, *, timeout_s: float = 60.0) -> int:
    """Take deleted records' words out of Chroma's SQLite file; the number of log rows blanked.

    Why: Chroma keeps a record's write in its log until the collection's index is persisted,
    which on a quiet collection can be never, and SQLite leaves deleted rows' bytes in free
    pages. So after a forget the words were still in the file. This blanks the log rows of
    deleted records (:data:`BLANK`), merges the full-text index (its segments keep deleted
    tokens), and rebuilds the file (``VACUUM``), which writes no free page. A running Chroma
    is waited for (SQLite's locks); the rebuild holds its writes for as long as it takes."""
    db_file = database(path)
    if not db_file.is_file():
        raise FileNotFoundError(f"no Chroma database at {db_file}")
    connection = sqlite3.connect(f"file:{db_file}?mode=rw", uri=True, timeout=timeout_s,
                                 isolation_level=None)
    with closing(connection) as db:
        tables = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "embeddings_queue" not in tables:
            return 0
        db.execute("PRAGMA secure_delete = ON")  # what this connection frees is zeroed
        db.execute("BEGIN IMMEDIATE")
        try:
            before = db.total_changes  # (a statement opened by WITH has no rowcount)
            db.execute(BLANK)
            blanked = db.total_changes - before
            if FTS in tables:
                db.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('optimize')")
            db.execute("COMMIT")
        except sqlite3.Error:
            db.execute("ROLLBACK")
            raise
        db.execute("VACUUM")
    return blanked


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memq.pipeline.adapters.chroma_log PATH``: one line out, 0 on success."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: chroma_log CHROMA_DATA_DIR", file=sys.stderr)
        return 2
    try:
        outcome = ensure_log_index(Path(args[0]))
    except (OSError, sqlite3.Error) as exc:
        print(f"chroma log index: {exc}", file=sys.stderr)
        return 1
    print(f"chroma log index: {outcome}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
