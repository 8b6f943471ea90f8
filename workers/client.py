"""Enqueue, for agents: validate turns, group them into per-session batches, publish.

Publishing never waits on the pipeline: it is one Redis SADD plus one broker message per
batch. Python agents call :func:`enqueue`; any other producer uses ``memq enqueue``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from celery import chain
from pydantic import ValidationError

from schemas import IngestBatch, Turn, TurnLine

MAX_BATCH_TURNS = 500


@dataclass(frozen=True)
class LineError:
    line: int
    reason: str


@dataclass(frozen=True)
class Published:
    delivery_id: str
    batch_id: str
    user_id: str
    session_id: str
    turns: int


def parse_lines(lines: Iterable[str]) -> tuple[list[IngestBatch], list[LineError]]:
    """JSON Lines of turns -> one batch per (user, session); bad lines reported, not published."""
    groups: dict[tuple[str, str], dict[str, Turn]] = defaultdict(dict)
    errors: list[LineError] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = TurnLine.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            errors.append(LineError(number, f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            errors.append(LineError(number, problems))
            continue
        turns = groups[(line.user_id, line.session_id)]
        if line.turn_id in turns and turns[line.turn_id] != line.turn():
            errors.append(LineError(number, f"turn_id {line.turn_id!r} repeated, other content"))
            continue
        turns[line.turn_id] = line.turn()
    batches = []
    for (user_id, session_id), turns in groups.items():
        ordered = sorted(turns.values(), key=lambda t: (t.timestamp, t.turn_id))
        for start in range(0, len(ordered), MAX_BATCH_TURNS):  # long sessions: several batches
            batches.append(IngestBatch(user_id=user_id, session_id=session_id,
                                       turns=ordered[start : start + MAX_BATCH_TURNS]))
    return batches, errors


def enqueue(batches: Sequence[IngestBatch]) -> list[Published]:
    """Publish each batch as the chain extract -> dedupe -> merge -> upserts."""
    from workers import tasks, wiring  # noqa: PLC0415  (the app is only needed to publish)

    coord = wiring.coord()
    published = []
    for batch in batches:
        delivery_id = uuid.uuid4().hex
        payload = {"delivery_id": delivery_id, "enqueued_at": time.time(),
                   "batch": batch.model_dump(mode="json")}
        coord.track(delivery_id)
        try:
            chain(tasks.extract.s(payload), tasks.dedupe.s(), tasks.merge.s(),
                  tasks.upsert_chroma.s(), tasks.upsert_graph.s()).apply_async()
        except Exception:
            coord.finish(delivery_id)  # not published: `memq wait` must not wait for it
            raise
        published.append(Published(delivery_id, batch.batch_id, batch.user_id,
                                   batch.session_id, len(batch.turns)))
    return published
