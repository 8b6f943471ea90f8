"""Enqueue, for agents: validate turns, group them into per-session batches, publish.

Publishing never waits on the pipeline: one Redis round trip records the batches (the
outbox), then one small broker message per batch carries its delivery id. Python agents call
:func:`enqueue`; any other producer uses ``memq enqueue``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
        ordered = sorted(turns.values(), key=lambda t: t.timestamp)  # ties: input order
        for start in range(0, len(ordered), MAX_BATCH_TURNS):  # long sessions: several batches
            batches.append(IngestBatch(user_id=user_id, session_id=session_id,
                                       turns=ordered[start : start + MAX_BATCH_TURNS]))
    return batches, errors


def enqueue(batches: Sequence[IngestBatch]) -> list[Published]:
    """Record each batch in the outbox (Redis, one round trip for all), then publish an
    extract message carrying its delivery id only. A batch whose message is lost (a broker
    hiccup, a worker killed as it popped it) is published again by the reaper."""
    from workers import tasks, wiring  # noqa: PLC0415  (the app is only needed to publish)

    if not batches:
        return []
    coord, s = wiring.coord(), wiring.settings()
    now = time.time()
    rows = [(uuid.uuid4().hex, b) for b in batches]
    coord.accept([(d, b.user_id, b.model_dump_json()) for d, b in rows], now, now + s.stall_s)
    published = []
    for delivery_id, batch in rows:
        tasks.publish_extract(delivery_id, batch.user_id)
        published.append(Published(delivery_id, batch.batch_id, batch.user_id,
                                   batch.session_id, len(batch.turns)))
    return published
