"""Lifecycle on the beat scheduler: fan-out per user, each user's job under its claim.

    beat -> memq.lifecycle.fanout(job) -> memq.lifecycle.chunk(job, users) -> memq.lifecycle.run

``memq run JOB [--user U] [--now T]`` runs the same per-user function in-process. Jobs are
idempotent (see pipeline.jobs), so a killed run is simply run again (acks_late redelivers it).
"""

from __future__ import annotations

import dataclasses
import functools
import random
import time
from datetime import UTC, datetime, timedelta

import structlog
from celery import Task

from ..pipeline import jobs
from ..pipeline.adapters.chroma import Words
from ..pipeline.errors import TransientError, UserBusy
from ..schemas import IngestBatch, Kind, Turn, turn_ref
from . import mailbox, section, wiring
from .app import STRATEGY, app
from .publish import publish_apply
from .settings import policy

log = structlog.get_logger(__name__)


class Job(Task):  # type: ignore[misc]
    abstract = True
    Strategy = STRATEGY
    acks_late = True
    reject_on_worker_lost = True
    max_retries = 30

    def retry_later(self, exc: TransientError) -> None:
        wait = min(60.0, 2.0 ** min(self.request.retries, 6)) * random.uniform(0.5, 1.0)
        raise self.retry(exc=exc, countdown=wait) from exc
JOBS = ("decay", "expire", "consolidate", "capacity", "reembed", "relocate")
REEXTRACT_AFTER = timedelta(minutes=10)  # an unprocessed episode older than this: failed


def reextract_failed(user_id: str, now: datetime) -> int:
    """Episodes whose extraction never completed (LLM down, dead-lettered) go round again."""
    coord = wiring.coord()
    rows = wiring.chroma_for(user_id).episode_refs(user_id)
    stale = {turn_ref(sid, turn_id): (sid, turn_id)
             for sid, turn_id, created in rows if created < now - REEXTRACT_AFTER}
    pending = mailbox.unprocessed(coord, user_id, list(stale))
    if not pending:
        return 0
    # the turns' words are the graph's (Chroma holds none)
    graph = wiring.graph_for(user_id)
    refs = sorted(pending)
    metadata = graph.turn_metadata(user_id, refs)
    sessions: dict[str, list[Turn]] = {}
    for hit in graph.episodes(user_id, refs):
        ref = hit.source_turn_ids[0]
        sid, turn_id = stale[ref]
        sessions.setdefault(sid, []).append(Turn.model_validate({
            "turn_id": turn_id, "role": hit.role or "user", "content": hit.content,
            "timestamp": hit.event_at, "metadata": metadata.get(ref, {}),
            "speaker": hit.speaker}))
    if not sessions:
        return 0
    from .client import enqueue  # noqa: PLC0415

    enqueue([IngestBatch(user_id=user_id, session_id=sid, turns=turns)
             for sid, turns in sessions.items()])
    return sum(len(t) for t in sessions.values())


def _words(user_id: str) -> Words:
    """The user's turns' words by episode id, from the graph (Chroma holds none)."""
    return functools.partial(wiring.graph_for(user_id).turns, user_id)


def run_job(job: str, user_id: str, now: datetime) -> jobs.JobResult:
    """One job for one user; the caller holds the user's claim."""
    p = policy(wiring.settings())
    if job == "reembed":  # into the configured model
        target = dataclasses.replace(wiring.ports_for(user_id), embedder=wiring.embedder())
        chroma = wiring.chroma_for(user_id)
        return jobs.reembed(target, user_id, now, migrate=lambda u, embed, model: chroma.migrate(
            u, embed, model, _words(u)))
    if job == "relocate":  # Chroma's placement of the user's records, by their size
        moved = wiring.chroma_for(user_id).relocate(user_id)
        return jobs.JobResult("relocate", user_id, moved, moved)
    ports = wiring.ports_for(user_id)
    if job == "decay":
        return jobs.decay(ports, user_id, now, p)
    if job == "expire":
        return jobs.expire(ports, user_id, now, p)
    if job == "capacity":
        return jobs.capacity(ports, user_id, now, p)
    if job == "consolidate":
        chroma = wiring.chroma_for(user_id)
        fence = jobs.Fence.begin(ports, user_id)
        model = ports.embedder.model_id
        # the candidates, memories and turns, are the graph's (the state of record, which
        # marks what was consolidated); Chroma gives their vectors
        pool = [m for m in ports.graph.read_memories(user_id)
                if m.kind == Kind.EVENT and m.consolidated_into is None]
        vectors = chroma.memory_vectors(user_id, model, [m.id for m in pool])
        memories = [(m, vectors[m.id]) for m in pool if m.id in vectors]
        episodes = jobs.unconsolidated_episodes(ports, user_id, fence)
        result = jobs.consolidate(
            ports, user_id, now, p, memories=memories, episodes=episodes, fence=fence,
            is_single=wiring.predicates().is_single)
        profiled = jobs.profile(ports, user_id, now, p, fence)
        result = dataclasses.replace(result, examined=result.examined + profiled.examined,
                                     changed=result.changed + profiled.changed)
        requeued = reextract_failed(user_id, now)
        if requeued:
            log.info("re-extracting episodes", user_id=user_id, turns=requeued)
        return result
    raise ValueError(f"unknown job {job!r}; one of {', '.join(JOBS)}")


def run_held(job: str, user_id: str, now: datetime, wait_s: float) -> jobs.JobResult:
    s = wiring.settings()
    with section.hold(wiring.coord(), user_id, s.claim_s, wait_s, publish_apply) as token:
        if token is None:
            raise UserBusy(f"user {user_id} is busy; {job} not run")
        return run_job(job, user_id, now)


# -- Celery: beat fan-out ---------------------------------------------------------------------
@app.task(bind=True, base=Job, name="memq.lifecycle.fanout")
def fanout(self: Job, job: str, now_iso: str | None = None) -> int:
    now_iso = now_iso or datetime.now(UTC).isoformat()
    users = wiring.all_users()
    size = wiring.settings().fanout_chunk
    for start in range(0, len(users), size):
        chunk.delay(job, users[start : start + size], now_iso)
    log.info("lifecycle fan-out", job=job, users=len(users))
    return len(users)


@app.task(bind=True, base=Job, name="memq.lifecycle.chunk")
def chunk(self: Job, job: str, users: list[str], now_iso: str) -> None:
    for user_id in users:
        run.delay(job, user_id, now_iso)


@app.task(bind=True, base=Job, name="memq.lifecycle.run")
def run(self: Job, job: str, user_id: str, now_iso: str) -> None:
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(stage=self.name, user_id=user_id, job=job)
    try:
        with wiring.metrics().timed("memq_stage_seconds", stage=f"memq.lifecycle.{job}"):
            result = run_held(job, user_id, datetime.fromisoformat(now_iso), wait_s=0.5)
    except TransientError as exc:  # busy, stale, or a store down: later
        wiring.metrics().inc("memq_retries_total", stage=f"memq.lifecycle.{job}")
        self.retry_later(exc)
        return
    log.info("lifecycle job", examined=result.examined, changed=result.changed)


@app.task(bind=True, base=Job, name="memq.scrub")
def scrub(self: Job, forgot_at: float | None = None) -> None:
    """Erasure at rest after a forget (workers/scrub.py)."""
    import sqlite3  # noqa: PLC0415

    import redis  # noqa: PLC0415

    from . import scrub as at_rest  # noqa: PLC0415

    try:
        at_rest.run_requested(forgot_at)
    except TransientError as exc:
        self.retry_later(exc)
    except (sqlite3.OperationalError, redis.ConnectionError) as exc:  # Chroma busy, Redis away
        self.retry_later(TransientError(f"scrub: {type(exc).__name__}: {str(exc)[:120]}"))


def timed(job: str, user_id: str, now: datetime, wait_s: float) -> tuple[jobs.JobResult, float]:
    started = time.perf_counter()
    result = run_held(job, user_id, now, wait_s)
    return result, time.perf_counter() - started
