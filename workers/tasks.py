"""The chain, one thin task per stage: validate -> call pipeline.service -> return the payload.

    memq.extract -> memq.dedupe -> memq.merge -> memq.upsert_chroma -> memq.upsert_graph

The payload is a JSON dict: ``delivery_id``, ``batch`` (the IngestBatch), then what each
stage adds. Transient errors retry with exponential backoff; anything else, or retries run
out, goes to the dead-letter list with the reason (``Stage.on_failure``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import structlog
from celery import Task
from pydantic import ValidationError

from pipeline import service
from pipeline.errors import InvalidMessage, TransientError
from pipeline.merge import BatchContext, Plan, Prepared
from schemas import CandidateMemory, IngestBatch
from workers import wiring
from workers.app import app

log = structlog.get_logger(__name__)
Payload = dict[str, Any]


class LockBusy(TransientError):
    """Another delivery of this user holds the lock: wait, without counting as a failure."""


def _now() -> datetime:
    return datetime.now(UTC)


def _backoff(attempt: int) -> float:
    return min(60.0, 2.0**attempt) * random.uniform(0.5, 1.0)


class Stage(Task):  # type: ignore[misc]
    abstract = True
    max_retries = None  # counted by ``guard``: transient failures and lock waits apart
    acks_late = True
    reject_on_worker_lost = True

    @contextmanager
    def guard(self, payload: Payload, lock_waits: int = 0) -> Iterator[None]:
        structlog.contextvars.clear_contextvars()
        batch = payload.get("batch") or {}
        structlog.contextvars.bind_contextvars(
            stage=self.name, delivery_id=payload.get("delivery_id"),
            user_id=batch.get("user_id"), session_id=batch.get("session_id"))
        s = wiring.settings()
        if s.fault_delay_stage == self.name and s.fault_delay_s > 0:
            log.warning("fault injection: delaying stage", seconds=s.fault_delay_s)
            time.sleep(s.fault_delay_s)
        try:
            yield
        except LockBusy as exc:
            # Backing off keeps a user's many waiting batches from flooding the queue (and
            # delaying the holder's own next stage, which sits in the same queue).
            wait = min(5.0, 0.1 * 1.5**lock_waits) * random.uniform(0.5, 1.5)
            raise self.retry(exc=exc, countdown=wait,
                             kwargs={"lock_waits": lock_waits + 1}) from exc
        except TransientError as exc:
            attempt = self.request.retries - lock_waits
            if attempt >= wiring.settings().task_retries:
                raise
            log.warning("transient error, retrying", attempt=attempt, error=str(exc))
            raise self.retry(exc=exc, countdown=_backoff(attempt),
                             kwargs={"lock_waits": lock_waits}) from exc

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        payload: Payload = args[0] if args and isinstance(args[0], dict) else {}
        delivery_id = str(payload.get("delivery_id") or task_id)
        reason = f"{type(exc).__name__}: {exc}"
        coord = wiring.coord()
        coord.dead_letter(delivery_id, self.name, reason, {"batch": payload.get("batch")})
        user_id = (payload.get("batch") or {}).get("user_id")
        if user_id:
            coord.release(user_id, delivery_id)
        log.error("dead-lettered", stage=self.name, delivery_id=delivery_id, reason=reason)


def _batch(payload: Payload) -> IngestBatch:
    try:
        return IngestBatch.model_validate(payload["batch"])
    except (KeyError, TypeError, ValidationError) as exc:
        raise InvalidMessage(f"not an IngestBatch v1: {exc}") from exc


def _forgotten(payload: Payload, batch: IngestBatch) -> bool:
    """Work for a user forgotten after it was enqueued writes nothing (see workers.forget)."""
    return wiring.coord().is_forgotten(batch.user_id, float(payload.get("enqueued_at", 0.0)))


def _dropped(payload: Payload) -> Payload:
    """The rest of the chain carries no content of a forgotten user."""
    log.info("user forgotten after this batch was enqueued; dropping it")
    return {"delivery_id": payload["delivery_id"], "skip": True,
            "batch": {"user_id": (payload.get("batch") or {}).get("user_id")}}


def _holding_lock(payload: Payload, batch: IngestBatch) -> None:
    s = wiring.settings()
    coord, token = wiring.coord(), payload["delivery_id"]
    # A lease that ran out (a stalled stage) is taken again before the stores are touched.
    if not coord.renew(batch.user_id, token, s.lock_lease_s) and not coord.acquire(
        batch.user_id, token, s.lock_lease_s
    ):
        raise LockBusy(f"lock of user {batch.user_id} lost and held by another delivery")


def _locked_batch(payload: Payload) -> IngestBatch | None:
    """The batch, with its user's lock held; None (lock released) if the user was forgotten
    since it was enqueued."""
    batch = _batch(payload)
    _holding_lock(payload, batch)
    if _forgotten(payload, batch):
        wiring.coord().release(batch.user_id, payload["delivery_id"])
        return None
    return batch


@app.task(bind=True, base=Stage, name="memq.extract")
def extract(self: Stage, payload: Payload, lock_waits: int = 0) -> Payload:
    with self.guard(payload, lock_waits):
        batch = _batch(payload)
        fresh = wiring.coord().unprocessed(batch.user_id, [t.turn_id for t in batch.turns])
        turns = [t for t in batch.turns if t.turn_id in fresh]
        if not turns:
            log.info("every turn processed before; nothing to do", turns=len(batch.turns))
            return {**payload, "skip": True}
        batch = batch.model_copy(update={"turns": turns})
        if _forgotten(payload, batch):
            return _dropped(payload)
        s = wiring.settings()
        out = service.extract(wiring.ports(), batch, turns, thresholds=s.thresholds(), now=_now())
        if _forgotten(payload, batch):  # forgotten while we wrote episodes: take them back
            wiring.chroma().delete_episodes(batch.user_id, [t.turn_id for t in turns])
            return _dropped(payload)
        log.info("extracted", turns=len(turns), episodes=out.episodes, chunks=out.chunks,
                 candidates=len(out.candidates), below_gate=out.below_gate)
        return {**payload, "batch": batch.model_dump(mode="json"),
                "candidates": [c.model_dump(mode="json") for c in out.candidates],
                "vectors": out.vectors}


@app.task(bind=True, base=Stage, name="memq.dedupe")
def dedupe(self: Stage, payload: Payload, lock_waits: int = 0) -> Payload:
    with self.guard(payload, lock_waits):
        if payload.get("skip"):
            return payload
        batch = _batch(payload)
        s = wiring.settings()
        coord = wiring.coord()
        if not coord.acquire(batch.user_id, payload["delivery_id"], s.lock_lease_s):
            raise LockBusy(f"user {batch.user_id} is being merged by another delivery")
        if _forgotten(payload, batch):
            coord.release(batch.user_id, payload["delivery_id"])
            return _dropped(payload)
        if not coord.unprocessed(batch.user_id, [t.turn_id for t in batch.turns]):
            # Another delivery of the same turns finished while this one waited for the lock.
            # Re-applying its plan now could undo what later batches changed: nothing to do.
            coord.release(batch.user_id, payload["delivery_id"])
            log.info("turns processed by another delivery meanwhile; nothing to do")
            return {**payload, "skip": True}
        if coord.load_plan(batch.batch_id) is not None:
            return {**payload, "prepared": None}  # planned before: merge reuses that plan
        candidates = [CandidateMemory.model_validate(c) for c in payload["candidates"]]
        prepared = service.prepare(wiring.ports(), batch.user_id, candidates, payload["vectors"],
                                   thresholds=s.thresholds(), predicates=wiring.predicates())
        return {**payload, "vectors": None,
                "prepared": [p.model_dump(mode="json") for p in prepared]}


@app.task(bind=True, base=Stage, name="memq.merge")
def merge(self: Stage, payload: Payload, lock_waits: int = 0) -> Payload:
    with self.guard(payload, lock_waits):
        if payload.get("skip"):
            return payload
        batch = _locked_batch(payload)
        if batch is None:
            return _dropped(payload)
        coord, s, ports = wiring.coord(), wiring.settings(), wiring.ports()
        cached = coord.load_plan(batch.batch_id)
        if cached is None:
            ctx = BatchContext(user_id=batch.user_id, batch_id=batch.batch_id,
                               model_id=ports.embedder.model_id, extractor=ports.extractor.name,
                               prompt_version=ports.extractor.prompt_version, now=_now(),
                               session_id=batch.session_id)
            prepared = [Prepared.model_validate(p) for p in payload["prepared"] or []]
            plan = service.merge(ports, prepared, ctx, thresholds=s.thresholds(),
                                 predicates=wiring.predicates())
            plan_json = plan.model_dump_json()
            cached = coord.save_plan(batch.user_id, batch.batch_id, plan_json, s.plan_ttl_s)
            if cached != plan_json:
                log.info("another delivery planned this batch first; using its plan")
        plan = Plan.model_validate_json(cached)
        ops: dict[str, int] = {}
        for entry in plan.audit:
            ops[entry.operation] = ops.get(entry.operation, 0) + 1
        log.info("planned", writes=len(plan.writes), **ops)
        return {**payload, "prepared": None, "candidates": None, "plan_batch_id": batch.batch_id}


def _plan(payload: Payload) -> Plan:
    cached = wiring.coord().load_plan(payload["plan_batch_id"])
    if cached is None:
        raise InvalidMessage(f"plan {payload['plan_batch_id']} expired before it was applied")
    return Plan.model_validate_json(cached)


@app.task(bind=True, base=Stage, name="memq.upsert_chroma")
def upsert_chroma(self: Stage, payload: Payload, lock_waits: int = 0) -> Payload:
    with self.guard(payload, lock_waits):
        if payload.get("skip"):
            return payload
        if _locked_batch(payload) is None:
            return _dropped(payload)
        service.upsert_vectors(wiring.ports(), _plan(payload))
        return payload


@app.task(bind=True, base=Stage, name="memq.upsert_graph")
def upsert_graph(self: Stage, payload: Payload, lock_waits: int = 0) -> Payload:
    with self.guard(payload, lock_waits):
        coord = wiring.coord()
        if not payload.get("skip"):
            batch = _locked_batch(payload)
            if batch is None:
                coord.finish(payload["delivery_id"])
                return _dropped(payload)
            plan = _plan(payload)
            service.upsert_graph(wiring.ports(), plan, plan.audit[0].at if plan.audit else _now())
            coord.mark_processed(batch.user_id, [t.turn_id for t in batch.turns])
            coord.release(batch.user_id, payload["delivery_id"])
            log.info("stored", writes=len(plan.writes), audit=len(plan.audit))
        coord.finish(payload["delivery_id"])
        return {"delivery_id": payload["delivery_id"], "done": True}
