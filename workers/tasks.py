"""The pipeline's two tasks. Messages carry ids only (schemas.StageMessage).

    memq.extract(delivery)  any worker, users in parallel, no per-user section: episodes, the
                            LLM or rules, the gate, embeddings; the result is posted to the
                            user's mailbox (Redis), and the user claimed if nobody has.
    memq.apply(user)        the claimant drains the user's mailbox: every waiting delivery,
                            coalesced into one pass of
                              dedupe -> merge -> upsert_graph (fenced) -> upsert_chroma
                            repeated until the mailbox is empty, then lets go.

Why the per-user stages are one task and not four: between reading a user's state and
writing the plan made from it, every broker hop is time in which the plan can go stale; with
the version fence a stale plan is refused rather than applied, but each refusal is a wasted
hop and a re-plan. In one task the window is milliseconds and a whole backlog of the user
coalesces into one plan. The stages still log under their names (``stage=memq.dedupe``...).

Transient errors retry with backoff (extract: up to ``task_retries``, then dead-letter;
apply: until the stores are back, the mailbox keeps the work in order); anything else
dead-letters the deliveries involved with the reason.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import redis
import structlog
from celery import Task
from pydantic import ValidationError

from ..pipeline import service
from ..pipeline.errors import InvalidMessage, PermanentError, TransientError
from ..schemas import ExtractedBatch, IngestBatch, StageMessage
from . import (
    counters,
    deadletters,
    event_stream,
    failpoints,
    forgotten,
    mailbox,
    outbox,
    section,
    tracing,
    wiring,
)
from .app import STRATEGY, app
from .coord import Coord
from .outbox import Delivery
from .publish import publish_apply, publish_extract

log = structlog.get_logger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


def _backoff(attempt: int) -> float:
    """2^attempt seconds, capped at 60, less up to a quarter of jitter: with the default 26
    retries an outage is waited out for at least 15 minutes."""
    return min(60.0, 2.0**attempt) * random.uniform(0.75, 1.0)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` arose while handling a SystemExit or KeyboardInterrupt (the process
    being stopped), anywhere in its chain of causes and contexts."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, SystemExit | KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def message(raw: Any) -> StageMessage:
    try:
        return StageMessage.model_validate(raw)
    except ValidationError as exc:
        raise InvalidMessage(f"not a StageMessage v1: {exc.error_count()} error(s): "
                             f"{exc.errors()[0]['msg']}") from exc


class Stage(Task):  # type: ignore[misc]
    abstract = True
    Strategy = STRATEGY
    max_retries = None  # counted by ``guard``
    acks_late = True
    reject_on_worker_lost = True
    retry_forever = False  # apply: a store outage is waited out, the mailbox keeps the order

    @contextmanager
    def guard(self, msg: StageMessage) -> Iterator[None]:
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(stage=self.name, user_id=msg.user_id,
                                               delivery_id=msg.delivery_id)
        s = wiring.settings()
        failpoints.at(self.name)
        try:
            try:
                with wiring.metrics().batched(), \
                        wiring.metrics().timed("memq_stage_seconds", stage=self.name):
                    yield
            except redis.RedisError as exc:  # Redis restarting: like any store outage
                raise TransientError(f"redis unavailable: {exc}") from exc
            except Exception as exc:
                if _interrupted(exc):
                    # The process is being stopped (a warm shutdown's SystemExit came in the
                    # middle of a store call, whose cleanup then raised something else): an
                    # interruption, not a failure. SystemExit lets the process go as Celery
                    # expects; the message is redelivered (acks_late, reject_on_worker_lost).
                    log.warning("interrupted by the process stopping", error=type(exc).__name__)
                    raise SystemExit(1) from exc
                raise
        except TransientError as exc:
            wiring.metrics().inc("memq_retries_total", stage=self.name)
            attempt = self.request.retries
            if not self.retry_forever and attempt >= s.task_retries:
                raise
            wait = _backoff(attempt)
            if msg.delivery_id:  # not re-published by the reaper while it waits to retry
                with contextlib.suppress(redis.RedisError):  # (Redis down: the reaper may)
                    outbox.touch(wiring.coord(), msg.delivery_id, time.time() + wait + s.stall_s)
            log.warning("transient error, retrying", attempt=attempt, error=str(exc))
            raise self.retry(exc=exc, countdown=wait) from exc

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...],
                   kwargs: dict[str, Any], einfo: Any) -> None:
        raw = args[0] if args else None
        user = raw.get("user_id") if isinstance(raw, dict) else None
        delivery = raw.get("delivery_id") if isinstance(raw, dict) else None
        reason = f"{type(exc).__name__}: {exc}"
        coord = wiring.coord()
        if delivery or not user:
            record = outbox.delivery(coord, str(delivery)) if delivery else None
            if not deadletters.dead_letter(
                    coord, str(delivery or task_id), user, self.name, reason,
                    {"batch": record.batch if record else None, "raw": raw}):
                log.warning("failed after another run finished the delivery; nothing to record",
                            stage=self.name, delivery_id=delivery, error=type(exc).__name__)
                return
        elif isinstance(raw, dict) and raw.get("token"):
            # A drain: its claim goes, the mailbox stays for the next one (the reaper).
            section.drop(coord, str(user), str(raw["token"]))
        # The reason may quote user text (an LLM's unusable answer): it stays in the dead
        # letter, which forgetting removes; the log line names the error class only.
        log.error("dead-lettered", stage=self.name, delivery_id=delivery,
                  error=type(exc).__name__)


# -- extract -----------------------------------------------------------------------------------
@app.task(bind=True, base=Stage, name="memq.extract")
def extract(self: Stage, raw: Any) -> None:
    msg = message(raw)
    with self.guard(msg):
        assert msg.delivery_id is not None
        run_extract(msg.delivery_id)


def _batch(record: Delivery) -> IngestBatch:
    try:
        return IngestBatch.model_validate_json(record.batch)
    except ValidationError as exc:
        raise InvalidMessage(f"not an IngestBatch v1: {exc.error_count()} error(s): "
                             f"{exc.errors()[0]['msg']}") from exc


def run_extract(delivery_id: str) -> None:
    coord = wiring.coord()
    record = outbox.delivery(coord, delivery_id)
    if record is None or not record.trace:
        _extract(coord, delivery_id, record)
        return
    with tracing.span("memq.extract", record.trace, delivery_id=delivery_id):
        _extract(coord, delivery_id, record)


def _extract(coord: Coord, delivery_id: str, record: Delivery | None) -> None:
    s = wiring.settings()
    if record is None:
        log.info("delivery already done (or forgotten); nothing to do")
        return
    if record.state == "extracted":  # a redelivery after the post: make sure it is drained
        if token := section.claim(coord, record.user_id, s.claim_s):
            publish_apply(record.user_id, token)
        return
    batch = _batch(record)
    user = batch.user_id
    if forgotten.is_forgotten(coord, user, record.enqueued_at):
        log.info("user forgotten after this batch was enqueued; dropping it")
        mailbox.finish(coord, user, [delivery_id])
        return
    outbox.start(coord, delivery_id, time.time() + s.stall_s)
    fresh = mailbox.unprocessed(coord, user, batch.refs())
    turns = [t for t, ref in zip(batch.turns, batch.refs(), strict=True) if ref in fresh]
    if not turns:
        log.info("every turn applied before; nothing to do", turns=len(batch.turns))
        mailbox.finish(coord, user, [delivery_id])
        return
    batch = batch.model_copy(update={"turns": turns})
    llm_before = wiring.llm_usage()
    with outbox.heartbeat(coord, delivery_id, s.stall_s):
        where = wiring.shard_map().place(user)  # a new user's first write places it
        out = service.extract(wiring.ports_at(user, where), user, batch.session_id, turns,
                              thresholds=s.thresholds(), now=_now())
    _count_extract(len(turns), llm_before, wiring.llm_usage())
    fresh_since([record.enqueued_at], "searchable")  # its episodes are in both stores now
    found = ExtractedBatch(batch_id=batch.batch_id, session_id=batch.session_id,
                           refs=batch.refs(), candidates=out.candidates,
                           vectors=[service.pack(v) for v in out.vectors])
    posted = mailbox.post(coord, user, delivery_id, record.enqueued_at,
                          turns[0].timestamp.timestamp(), found.model_dump_json(),
                          s.extracted_ttl_s, s.claim_s, section.new_token(),
                          shard_epoch=where.epoch if wiring.shard_map().sharded else None)
    if posted.moved:  # its episodes went to the shard the user had: write them where it is
        raise TransientError("the user moved store shards while this batch was extracted; "
                             "extracting again")
    if posted.forgotten:  # forgotten while we wrote episodes: take them back
        wiring.chroma_for(user).delete_episodes(user, batch.refs())
        wiring.graph_for(user).delete_episodes(user, batch.refs())
        mailbox.finish(coord, user, [delivery_id])
        log.info("user forgotten while this batch was extracted; its episodes taken back")
        return
    log.info("extracted", turns=len(turns), episodes=out.episodes, chunks=out.chunks,
             candidates=len(out.candidates), below_gate=out.below_gate,
             posted=posted.posted, claimed=posted.token is not None)
    if posted.token is not None:
        publish_apply(user, posted.token)
    elif posted.posted:
        wiring.metrics().inc("memq_mailbox_waits_total")


def fresh_since(enqueued: list[float], stage: str) -> None:
    """Freshness (workers.metrics): seconds since each delivery was enqueued, by this host's
    clock against the client's (0 when the client's runs ahead), written at once (with what
    the task recorded so far): readable before the deliveries are announced done."""
    m, now = wiring.metrics(), time.time()
    for at in enqueued:
        m.observe("memq_freshness_seconds", max(0.0, now - at), stage=stage)
    m.flush()


def _count_extract(turns: int, before: dict[str, int], after: dict[str, int]) -> None:
    m = wiring.metrics()
    m.inc("memq_turns_total", turns)
    m.inc("memq_llm_calls_total", after["calls"] - before["calls"])
    for kind in ("prompt", "completion"):
        m.inc("memq_llm_tokens_total", after[f"{kind}_tokens"] - before[f"{kind}_tokens"],
              kind=kind)


# -- apply: drain a user's mailbox -----------------------------------------------------------
class Apply(Stage):
    abstract = True
    retry_forever = True


@app.task(bind=True, base=Apply, name="memq.apply")
def apply(self: Stage, raw: Any) -> None:
    msg = message(raw)
    with self.guard(msg):
        if not msg.token:
            raise InvalidMessage("memq.apply needs the claim token")
        drain(msg.user_id, msg.token)


def drain(user_id: str, token: str) -> None:
    """The claimant's drain of the user's mailbox (workers.section.drain), a round at a time."""
    s = wiring.settings()
    section.drain(wiring.coord(), user_id, token, s.claim_s, take=s.coalesce_max,
                  turns=s.drain_rounds, run_round=drain_round, handoff=publish_apply)


def drain_round(user_id: str, waiting: list[str]) -> None:
    """One coalesced pass over the deliveries waiting in the mailbox."""
    coord, s = wiring.coord(), wiring.settings()
    records = outbox.deliveries(coord, waiting)
    gone = [d for d, r in zip(waiting, records, strict=True) if r is None]
    if gone:  # finished by another drain, or forgotten
        mailbox.finish(coord, user_id, gone)
    # (no forgotten check here: a delivery is posted only if its user was not forgotten
    # since, atomically, and forget empties the mailbox holding the claim: see mailbox.post)
    live = [r for r in records if r is not None]
    found: list[tuple[Delivery, ExtractedBatch]] = []
    expired = []
    for r, raw in zip(live, mailbox.extracted(coord, [r.delivery_id for r in live]),
                      strict=True):
        if raw is None:
            expired.append(r)
            continue
        try:
            found.append((r, ExtractedBatch.model_validate_json(raw)))
        except ValidationError as exc:
            deadletters.dead_letter(coord, r.delivery_id, user_id, "memq.apply",
                                    "InvalidMessage: extracted data unreadable: "
                                    f"{exc.error_count()} error(s)", {"batch": r.batch})
    if expired:  # extracted too long ago: extract again
        mailbox.requeue(coord, user_id, [r.delivery_id for r in expired],
                        time.time() + s.stall_s)
        for r in expired:
            publish_extract(r.delivery_id, user_id)
    if not found:
        return
    try:
        _apply(user_id, found)
    except PermanentError as exc:
        reason = f"{type(exc).__name__}: {exc}"
        for r, _ in found:
            deadletters.dead_letter(coord, r.delivery_id, user_id, "memq.apply", reason,
                                    {"batch": r.batch})
        log.error("dead-lettered", deliveries=len(found), error=type(exc).__name__)


def _apply(user_id: str, found: list[tuple[Delivery, ExtractedBatch]]) -> None:
    coord, s, metrics = wiring.coord(), wiring.settings(), wiring.metrics()
    log_ = log.bind(deliveries=len(found))
    took: dict[str, float] = {}

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        if name == "memq.upsert":
            failpoints.at("memq.upsert_graph")
        started = time.perf_counter()
        with metrics.timed("memq_stage_seconds", stage=name), tracing.span(name):
            yield
        took[name] = round(1000 * (time.perf_counter() - started), 1)

    traces = [r.trace for r, _ in found if r.trace]
    with tracing.span("memq.apply", traces[0] if traces else None, links=traces[1:],
                      deliveries=len(found)):
        done = service.apply_round(wiring.ports_for(user_id), user_id,
                                   [e for _, e in found], thresholds=s.thresholds(),
                                   predicates=wiring.predicates(), now=_now(), stage=stage)
    ops: dict[str, int] = {}
    for entry in done.plan.audit:
        ops[str(entry.operation)] = ops.get(str(entry.operation), 0) + 1
    log_.info("planned", stage="memq.merge", version=done.version, candidates=done.candidates,
              skipped_batches=len(done.skipped), writes=len(done.plan.writes),
              dedupe_ms=took.get("memq.dedupe"), merge_ms=took.get("memq.merge"), **ops)
    if done.stale:
        # Another writer committed since we read: nothing was written; the drain loop plans
        # these deliveries again from the new state.
        log_.info("stale plan refused; planning again", stage="memq.upsert_graph")
        counters.count(coord, "replans")
        metrics.inc("memq_replans_total")
        return
    if done.committed is not None:
        for operation, n in ops.items():
            metrics.inc("memq_memories_written_total", n, operation=operation)
        event_stream.memory_events(coord, user_id, done.plan.audit)
        log_.info("stored", stage="memq.upsert_chroma", version=done.committed,
                  writes=len(done.plan.writes), audit=len(done.plan.audit),
                  ms=took.get("memq.upsert"))
    # committed (or nothing to change): their memories are current
    fresh_since([r.enqueued_at for r, _ in found], "current")
    mailbox.finish(coord, user_id, [r.delivery_id for r, _ in found],
                   refs=[ref for _, e in found for ref in e.refs])
