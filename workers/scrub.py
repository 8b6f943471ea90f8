"""Erasure at rest: after a forget, the user's words leave the stores' files, not only their
answers.

Deleting is not erasing. Each store keeps what it deleted on disk for a while:

- **Redis** appends every write to its append-only file, the forgotten batches included,
  until the file is rewritten (``BGREWRITEAOF``: the new file holds only what is there now).
- **Neo4j** logs every transaction, and a delete logs what it deleted. A log file is pruned
  at a checkpoint once a newer file exists and the server keeps only the newest
  (Neo4jLauncher: retention false, 1 MiB files, a checkpoint a minute), so a filler as large
  as a file pushes the forget into a prunable one (:meth:`Neo4jGraph.push_log`).
- **Chroma** is never sent a user's words (its records hold ids, times, a role and vectors:
  pipeline/adapters/chroma_records.py says why). Records written by a build before that may
  still hold them, in its SQLite log until it persists the collection's index and in free pages
  after: :func:`chroma_log.scrub` blanks deleted records' log rows and rebuilds the file,
  where the workers can reach it (``MEMQ_CHROMA_PATH``).

A forget that removed anything asks for a scrub (:func:`request`): a ``memq.scrub`` task,
``MEMQ_SCRUB_DELAY_S`` later, carrying when the forget was (Redis's clock). The first such
task to start scrubs; those of forgets before its start find it done and do nothing. (A
shared "queued" flag lost its task with a killed worker, and held every later forget's
scrub back until the flag expired.) ``memq scrub`` runs one now and waits for Redis's
rewrite. What stays the operator's: backups and snapshots, Redis
replicas' own files, Neo4j's store files (a deleted record's bytes stay until the space is
reused), and a Chroma whose folder the workers cannot reach.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import redis
import structlog

from ..pipeline.adapters import chroma_log
from . import wiring

log = structlog.get_logger(__name__)

STARTED = "memq:scrub:started:"  # + what it scrubs: when the newest such scrub started
REWRITE_WAIT_S = 120.0


@dataclass
class ScrubReport:
    redis: list[str] = field(default_factory=list)  # per Redis: "rewritten", "off", an error
    neo4j_filler_bytes: int = 0
    neo4j_skipped: int = 0  # servers rotating larger files than push_log writes
    chroma_rows: int | None = None  # None: no Chroma folder this host can reach

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        chroma = ("Chroma not reachable from here (MEMQ_CHROMA_PATH unset)"
                  if self.chroma_rows is None
                  else f"Chroma log: {self.chroma_rows} row(s) blanked, file rebuilt")
        neo = (f"Neo4j log pushed ({self.neo4j_filler_bytes} bytes of filler)"
               + (f", {self.neo4j_skipped} server(s) rotate larger files than the filler "
                  "may be (db.tx_log.rotation.size): not pushed" if self.neo4j_skipped else ""))
        return f"scrubbed: Redis {', '.join(self.redis) or 'none'}; {neo}; {chroma}"


def _clock(client: redis.Redis) -> float:
    seconds, micros = client.time()
    return seconds + micros / 1e6


def request(client: redis.Redis, delay_s: float | None = None) -> None:
    """Ask for a scrub of what a forget just deleted."""
    from .app import app  # noqa: PLC0415  (the Celery app: a task to send)

    delay = wiring.settings().scrub_delay_s if delay_s is None else delay_s
    app.send_task("memq.scrub", args=(_clock(client),), countdown=delay)


def _rewrite(client: redis.Redis, wait_s: float) -> str:
    """Rewrite one Redis's append-only file; wait for it when ``wait_s``."""
    try:
        if cast(dict[str, str], client.config_get("appendonly")).get("appendonly") == "no":
            return "off (no append-only file)"
    except redis.ResponseError:
        pass  # CONFIG renamed away (a managed Redis): try the rewrite all the same
    deadline = time.monotonic() + max(wait_s, 10.0)
    while True:  # a rewrite already running may have started before the forget: wait, again
        try:
            client.bgrewriteaof()
            break
        except redis.ResponseError as exc:
            if "in progress" not in str(exc) or time.monotonic() > deadline:
                return f"not rewritten ({str(exc)[:80]})"
            time.sleep(0.2)
    while wait_s and time.monotonic() < deadline:
        info = client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            status = str(info.get("aof_last_bgrewrite_status", "ok"))
            return "rewritten" if status == "ok" else f"rewrite {status}"
        time.sleep(0.1)
    return "rewriting" if not wait_s else "rewrite still running"


def _redises() -> list[redis.Redis]:
    s = wiring.settings()
    urls = [s.redis_url] + ([s.state_url] if s.state_url != s.redis_url else [])
    out: list[redis.Redis] = []
    for url in urls:
        if s.state_cluster and url == s.state_url:
            out.extend(cast(Any, wiring.coord().r).get_redis_connection(node)
                       for node in cast(Any, wiring.coord().r).get_primaries())
        else:
            out.append(redis.Redis.from_url(url, decode_responses=True))
    return out


def scrub(*, wait_s: float = REWRITE_WAIT_S) -> ScrubReport:
    """Scrub every store now (see the module docstring)."""
    s = wiring.settings()
    report = ScrubReport()
    for graph in wiring.graphs():
        pushed = graph.push_log()
        report.neo4j_filler_bytes += pushed
        report.neo4j_skipped += pushed == 0
    if s.chroma_path:
        report.chroma_rows = chroma_log.scrub(Path(s.chroma_path))
    # last: the steps above wrote nothing to Redis, and the rewrite takes what is there now
    report.redis = [_rewrite(client, wait_s) for client in _redises()]
    log.info("scrubbed", **report.to_json())
    return report


def run_requested(forgot_at: float | None) -> ScrubReport | None:
    """The task's body: scrub, unless a scrub started after the forget at ``forgot_at``
    (then None)."""
    client = wiring.coord().r
    # a worker that reaches Chroma's folder scrubs more than one that does not: only a scrub
    # of the same reach stands for this one
    reach = STARTED + hashlib.sha256(wiring.settings().chroma_path.encode()).hexdigest()[:16]
    started = cast(str | None, client.get(reach))
    if forgot_at is not None and started is not None and float(started) >= forgot_at:
        return None
    client.set(reach, repr(_clock(client)), ex=30 * 24 * 3600)
    return scrub(wait_s=0)
