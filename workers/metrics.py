"""Pipeline metrics, kept in Redis so every worker on every host adds to one set of series.

Workers record (HINCRBYs in one hash; a task's events together, in one pipelined round trip
when it ends: ``Metrics.batched``); ``memq serve`` exposes
them at ``/metrics`` in the Prometheus format through :class:`RedisCollector`, together with
gauges read at scrape time (queue depths, oldest in-flight delivery, dead letters). No
user text is ever a label: labels are stage, operation and queue names.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, cast

import redis
import structlog

from . import queues
from .coord import Coord
from .layout import (
    METRICS,
    SAMPLES,
    dead_key,
    delivery_key,
    inflight_key,
    mailboxes_key,
    outbox_key,
)
from .wire import QUEUES

KEY = METRICS
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
# Freshness is read for its p95 against targets of 1 s and 5 s: finer around those.
FRESHNESS_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 2.5,
                     3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0, 300.0)
BUCKETS_OF = {"memq_freshness_seconds": FRESHNESS_BUCKETS}

HELP = {
    "memq_stage_seconds": "Time spent in a pipeline stage, per run",
    "memq_retries_total": "Transient failures retried with backoff, per stage",
    "memq_dead_letters_total": "Deliveries or messages dead-lettered, per stage",
    "memq_llm_calls_total": "LLM answers received",
    "memq_llm_tokens_total": "LLM tokens, per kind (prompt, completion)",
    "memq_memories_written_total": "Memory changes committed, per operation (audit)",
    "memq_mailbox_waits_total": "Extracted batches that found their user being drained "
                                "(they wait in the mailbox, coalesced into the next round)",
    "memq_replans_total": "Plans refused by the version fence and made again",
    "memq_turns_total": "Turns extracted",
    "memq_freshness_seconds": "From enqueue (the client's clock) until a delivery's turns are "
                              "searchable (stage=searchable: episodes written) or its memories "
                              "are current (stage=current: the plan committed)",
}

log = structlog.get_logger("memq.metrics")


# a task's events, by field, while it runs (Metrics.batched): (sum, any float in it)
_PENDING: ContextVar[dict[str, tuple[float, bool]] | None] = ContextVar("memq_metrics",
                                                                          default=None)


def _field(name: str, labels: Mapping[str, str], suffix: str = "") -> str:
    parts = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return f"{name}|{parts}|{suffix}"


class Metrics:
    """Recording side. A metrics write that fails (Redis restarting) is logged and dropped:
    it never fails the work it measures."""

    def __init__(self, client: redis.Redis) -> None:
        self.r = client

    def inc(self, name: str, by: float = 1, **labels: str) -> None:
        if by:
            self._write([(_field(name, labels), by)])

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        le = next((b for b in BUCKETS_OF.get(name, BUCKETS) if seconds <= b), None)
        self._write([(_field(name, labels, "count"), 1), (_field(name, labels, "sum"), seconds),
                     (_field(name, labels, f"le={le if le is not None else '+Inf'}"), 1)])

    @contextmanager
    def timed(self, name: str, **labels: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.observe(name, time.perf_counter() - started, **labels)

    @contextmanager
    def batched(self) -> Iterator[None]:
        """Events recorded inside (by any Metrics of this context) are added up and written
        when it ends, in one round trip: a batch's dozen events (stages, turns, LLM calls,
        operations) had each cost a round trip of its own. Nested: the outermost writes. A
        process killed in the middle loses that task's events (a retry records its own)."""
        if _PENDING.get() is not None:
            yield
            return
        pending: dict[str, tuple[float, bool]] = {}
        token = _PENDING.set(pending)
        try:
            yield
        finally:
            _PENDING.reset(token)
            self._send(pending)

    def flush(self) -> None:
        """Inside :meth:`batched`: write what was recorded so far now (the rest at its end).
        For events that must be readable before the work they measure is announced done."""
        pending = _PENDING.get()
        if pending:
            self._send(dict(pending))
            pending.clear()

    def _write(self, fields: list[tuple[str, float]]) -> None:
        pending = _PENDING.get()
        if pending is None:
            self._send({field: (by, isinstance(by, float)) for field, by in fields})
            return
        for field, by in fields:
            total, floats = pending.get(field, (0, False))
            pending[field] = (total + by, floats or isinstance(by, float))

    def _send(self, fields: Mapping[str, tuple[float, bool]]) -> None:
        """HINCRBYFLOAT for what was ever given as a float (times), HINCRBY for counts."""
        if not fields:
            return
        try:
            pipe = self.r.pipeline(transaction=False)
            for field, (by, floats) in fields.items():
                if floats:
                    pipe.hincrbyfloat(KEY, field, by)
                else:
                    pipe.hincrby(KEY, field, int(by))
            pipe.execute()
        except redis.RedisError as exc:
            log.warning("metrics not recorded", error=type(exc).__name__)


def read(client: redis.Redis) -> dict[str, dict[tuple[tuple[str, str], ...], dict[str, float]]]:
    """name -> labels -> {"": counter} or {"count", "sum", "le=…"} as stored."""
    out: dict[str, dict[tuple[tuple[str, str], ...], dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict))
    for field, value in cast(dict[str, str], client.hgetall(KEY)).items():
        name, parts, suffix = field.split("|", 2)
        labels = tuple(tuple(p.split("=", 1)) for p in parts.split(",") if p)
        out[name][cast(tuple[tuple[str, str], ...], labels)][suffix] = float(value)
    return out


def quantile(name: str, values: Mapping[str, float], q: float) -> float | None:
    """The ``q`` quantile of one stored histogram series (:func:`read`'s values), interpolated
    linearly inside its bucket as Prometheus' ``histogram_quantile`` does; None when empty.
    Past the last bucket: that bucket's bound (a floor, as Prometheus gives)."""
    bounds = BUCKETS_OF.get(name, BUCKETS)
    total = values.get("count", 0.0)
    if total <= 0:
        return None
    rank, below, lower = q * total, 0.0, 0.0
    for b in bounds:
        inside = values.get(f"le={b}", 0.0)
        if inside and below + inside >= rank:
            return lower + (b - lower) * (rank - below) / inside
        below, lower = below + inside, b
    return float(bounds[-1])


def minus(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    """One stored series less an earlier reading of it: what was recorded in between."""
    return {k: v - before.get(k, 0.0) for k, v in after.items()}


def freshness(stored: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """p50 / p95 / count of ``memq_freshness_seconds`` per stage, from :func:`read`'s output
    (or a difference of two readings: :func:`minus`)."""
    series = {dict(labels).get("stage", ""): values
              for labels, values in stored.get("memq_freshness_seconds", {}).items()}
    out: dict[str, dict[str, float | None]] = {}
    for stage in ("searchable", "current"):
        values = series.get(stage, {})
        out[stage] = {"p50": quantile("memq_freshness_seconds", values, 0.5),
                      "p95": quantile("memq_freshness_seconds", values, 0.95),
                      "count": values.get("count", 0.0)}
    return out


def gauges(coord: Coord) -> dict[str, Any]:
    """What is waiting now: queue lengths, in flight, oldest in-flight age, dead letters."""
    return {"queues": dict(zip(QUEUES, queues.lengths(coord, QUEUES), strict=True)),
            **backlog(coord, time.time())}


def backlog(coord: Coord, now: float) -> dict[str, Any]:
    """What waits, summed over the buckets in one round trip (plus one for the ages): in
    flight, dead letters, mailboxes with work, the age of the oldest delivery in flight (of
    each bucket's next due, by its record; None when none is)."""
    pipe = coord.r.pipeline(transaction=False)
    for b in coord.buckets():
        pipe.scard(inflight_key(b))
        pipe.llen(dead_key(b))
        pipe.scard(mailboxes_key(b))
        pipe.zrange(outbox_key(b), 0, 0)
    got = pipe.execute()
    firsts = [d for first in got[3::4] for d in first]
    oldest = None
    if firsts:
        pipe = coord.r.pipeline(transaction=False)
        for d in firsts:
            pipe.hget(delivery_key(d), "enqueued_at")
        ats = [float(at) for at in pipe.execute() if at]
        oldest = max(0.0, now - min(ats)) if ats else None
    return {"inflight": sum(got[0::4]), "dead_letters": sum(got[1::4]),
            "mailboxes": sum(got[2::4]), "oldest_inflight_s": oldest}


class RedisCollector:
    """A prometheus_client collector over :func:`read` and :func:`gauges`."""

    def __init__(self, coord: Coord) -> None:
        self.coord, self.r = coord, coord.r

    def describe(self) -> list[Any]:
        return []  # unchecked: the series are only known at scrape time

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (  # noqa: PLC0415  (the server extra)
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        stored = read(self.r)
        for name, help_text in HELP.items():
            series = stored.get(name, {})
            label_names = sorted({k for labels in series for k, _ in labels})
            if name.endswith("_seconds"):
                family: Any = HistogramMetricFamily(name, help_text, labels=label_names)
                for labels, values in series.items():
                    running, buckets = 0.0, []
                    for b in BUCKETS_OF.get(name, BUCKETS):
                        running += values.get(f"le={b}", 0.0)
                        buckets.append((str(b), running))
                    buckets.append(("+Inf", values.get("count", 0.0)))
                    family.add_metric([dict(labels).get(n, "") for n in label_names], buckets,
                                      values.get("sum", 0.0))
            else:
                family = CounterMetricFamily(name, help_text, labels=label_names)
                for labels, values in series.items():
                    family.add_metric([dict(labels).get(n, "") for n in label_names],
                                      values.get("", 0.0))
            yield family
        now = gauges(self.coord)
        depth = GaugeMetricFamily("memq_queue_depth", "Messages waiting on a broker queue",
                                  labels=["queue"])
        for q, n in now["queues"].items():
            depth.add_metric([q], n)
        yield depth
        yield GaugeMetricFamily("memq_inflight_deliveries", "Deliveries accepted, not done",
                                value=now["inflight"])
        yield GaugeMetricFamily("memq_dead_letters", "Entries in the dead-letter list",
                                value=now["dead_letters"])
        yield GaugeMetricFamily("memq_mailboxes", "Users with extracted batches waiting",
                                value=now["mailboxes"])
        yield GaugeMetricFamily("memq_oldest_inflight_seconds",
                                "Age of the oldest delivery not done yet",
                                value=now["oldest_inflight_s"] or 0.0)


SAMPLES_KEPT = 2_880  # at the reaper's 5 s: four hours


def record_sample(coord: Coord, now: float) -> None:
    """One point of the console's charts: the counters (turns extracted, memory changes,
    dead letters) and the gauges, now. The reaper records one per interval (one worker of
    all takes the turn), in a capped list: the charts need a history, the counters alone are
    totals."""
    client = coord.r
    stored = read(client)

    def total(name: str) -> float:
        return sum(v.get("", 0.0) for v in stored.get(name, {}).values())

    now_g = gauges(coord)
    point = {"t": round(now, 3), "turns": total("memq_turns_total"),
             "written": total("memq_memories_written_total"),
             "dead_total": total("memq_dead_letters_total"),
             "queued": sum(now_g["queues"].values()), "inflight": now_g["inflight"],
             "mailboxes": now_g["mailboxes"], "dead_letters": now_g["dead_letters"],
             "oldest_inflight_s": round(now_g["oldest_inflight_s"] or 0.0, 3)}
    pipe = client.pipeline(transaction=False)
    pipe.rpush(SAMPLES, json.dumps(point))
    pipe.ltrim(SAMPLES, -SAMPLES_KEPT, -1)
    pipe.execute()


def samples(client: redis.Redis, since: float = 0.0) -> list[dict[str, float]]:
    """The recorded points, oldest first (those at or after ``since``)."""
    rows = [json.loads(raw) for raw in cast(list[str], client.lrange(SAMPLES, 0, -1))]
    return [row for row in rows if row["t"] >= since]
