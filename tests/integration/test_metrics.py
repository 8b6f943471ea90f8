"""Metrics on the real Redis: a task's events are added up while it runs and written in one
round trip when it ends (``Metrics.batched``); outside a task each event is written at once."""

from __future__ import annotations

import uuid

import redis

from memq.workers.metrics import KEY, Metrics, read

from .conftest import REDIS_URL


def _series(r: redis.Redis, stage: str) -> dict[str, float]:
    return {name + suffix: value for name, by_labels in read(r).items()
            for labels, fields in by_labels.items() if dict(labels).get("stage") == stage
            for suffix, value in fields.items()}


def test_a_tasks_events_are_written_together_when_it_ends(services: None) -> None:
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    m, stage = Metrics(r), f"test-{uuid.uuid4().hex[:8]}"
    m.inc("memq_retries_total", stage=stage)
    assert _series(r, stage) == {"memq_retries_total": 1}  # outside a task: at once
    with m.batched():
        m.inc("memq_retries_total", stage=stage)
        with Metrics(r).batched():  # nested, another instance: the outermost writes
            m.inc("memq_retries_total", 2, stage=stage)
            m.observe("memq_stage_seconds", 0.25, stage=stage)
        m.observe("memq_stage_seconds", 0.5, stage=stage)
        assert _series(r, stage) == {"memq_retries_total": 1}  # nothing written yet
    assert _series(r, stage) == {
        "memq_retries_total": 4, "memq_stage_secondscount": 2,
        "memq_stage_secondssum": 0.75, "memq_stage_secondsle=0.25": 1,
        "memq_stage_secondsle=0.5": 1}
    with m.batched():  # a time of a whole number of seconds is still a time (HINCRBYFLOAT)
        m.observe("memq_stage_seconds", 2.0, stage=stage)
    assert _series(r, stage)["memq_stage_secondssum"] == 2.75
    for field in [f for f in r.hkeys(KEY) if f"stage={stage}" in f]:
        r.hdel(KEY, field)
