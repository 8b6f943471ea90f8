"""Enqueue, for agents: validate turns, group them into per-session batches, publish.

Publishing never waits on the pipeline: one Redis round trip records the batches (the
outbox) and pushes one small broker message per batch, carrying its delivery id. Python agents call
:func:`enqueue`; any other producer uses ``memq enqueue``.
"""

from __future__ import annotations

import json
import select
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

from pydantic import ValidationError

from ..schemas import IngestBatch, Turn, TurnLine

MAX_BATCH_TURNS = 500
BATCH_BYTES = 256 * 1024  # text per batch: one extraction pass stays small


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


class FutureTurn(ValueError):
    """A turn dated later than the server's clock allows (``MEMQ_MAX_CLOCK_SKEW_S``)."""


def _skew_s() -> float:
    from .wiring import settings  # noqa: PLC0415

    return float(settings().max_clock_skew_s)


def too_late(when: datetime, now: datetime, skew_s: float) -> str | None:
    """Why a turn said at ``when`` is refused, received at ``now``: None when it is not later
    than ``now`` plus the allowed skew."""
    if when <= now + timedelta(seconds=skew_s):
        return None
    return (f"timestamp {when.isoformat()} is later than the server's clock allows "
            f"({now.isoformat(timespec='seconds')} + {skew_s:g} s, MEMQ_MAX_CLOCK_SKEW_S)")


def check_times(batches: Sequence[IngestBatch], now: datetime | None = None,
                skew_s: float | None = None) -> None:
    """Raise :class:`FutureTurn` (one line) for the first turn dated in the future; nothing is
    published then."""
    now = now or datetime.now(UTC)
    skew = _skew_s() if skew_s is None else skew_s
    for batch in batches:
        for turn in batch.turns:
            if reason := too_late(turn.timestamp, now, skew):
                raise FutureTurn(f"turn {turn.turn_id!r} of session {batch.session_id!r}: "
                                 f"{reason}; nothing was published")


def _decode(raw: str | bytes) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else raw


def parse_lines(lines: Iterable[str | bytes], start: int = 1
                ) -> tuple[list[IngestBatch], list[LineError]]:
    """JSON Lines of turns -> per-session batches; each bad line gets its reason and is not
    published, the good ones are. Never raises on input: not UTF-8, not JSON, nested too
    deep, numbers too long, off-contract -- each is a line's verdict. ``start``: the number
    of the first line (a stream parsed a chunk at a time)."""
    groups: dict[tuple[str, str], dict[str, Turn]] = defaultdict(dict)
    errors: list[LineError] = []
    now, skew = datetime.now(UTC), _skew_s()
    for number, raw in enumerate(lines, start=start):
        try:
            text = _decode(raw)
            if not text.strip():
                continue
            line = TurnLine.model_validate(json.loads(text))
        except UnicodeDecodeError as exc:
            errors.append(LineError(number, f"not UTF-8: byte {exc.start}"))
            continue
        except json.JSONDecodeError as exc:
            errors.append(LineError(number, f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        except RecursionError:
            errors.append(LineError(number, "not JSON memq can take: nested too deep"))
            continue
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            errors.append(LineError(number, problems))
            continue
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            errors.append(LineError(number, f"not JSON memq can take: {str(exc)[:120]}"))
            continue
        if reason := too_late(line.timestamp, now, skew):
            errors.append(LineError(number, reason))
            continue
        turns = groups[(line.user_id, line.session_id)]
        if line.turn_id in turns and turns[line.turn_id] != line.turn():
            errors.append(LineError(number, f"turn_id {line.turn_id!r} repeated in session "
                                            f"{line.session_id!r} with other content"))
            continue
        turns[line.turn_id] = line.turn()
    batches = []
    for (user_id, session_id), turns in groups.items():
        batches += chunk_batches(user_id, session_id, list(turns.values()))
    return batches, errors


def line_chunks(stream: BinaryIO, max_lines: int = 500, idle_s: float = 0.2
                ) -> Iterator[list[bytes]]:
    """A stream of lines in chunks, each as soon as it holds ``max_lines`` or the stream has
    been quiet for ``idle_s`` (a producer that writes a turn at a time is published a turn at
    a time, not at the end of its input)."""
    chunk: list[bytes] = []
    fd = stream.fileno()
    while True:
        if chunk and not select.select([fd], [], [], idle_s)[0]:
            yield chunk
            chunk = []
            continue
        line = stream.readline()
        if not line:
            break
        chunk.append(line)
        if len(chunk) >= max_lines:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def chunk_batches(user_id: str, session_id: str, turns: Sequence[Turn]) -> list[IngestBatch]:
    """One session's turns in time order (ties: input order) as batches; a long session
    becomes several."""
    ordered = sorted(turns, key=lambda t: t.timestamp)
    return [IngestBatch(user_id=user_id, session_id=session_id, turns=chunk)
            for chunk in _chunks(ordered)]


def _chunks(turns: list[Turn]) -> Iterable[list[Turn]]:
    """Consecutive runs of at most MAX_BATCH_TURNS turns and BATCH_BYTES of text."""
    chunk: list[Turn] = []
    size = 0
    for turn in turns:
        cost = len(turn.content.encode())
        if chunk and (len(chunk) >= MAX_BATCH_TURNS or size + cost > BATCH_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(turn)
        size += cost
    if chunk:
        yield chunk


def enqueue(batches: Sequence[IngestBatch]) -> list[Published]:
    """Record each batch in the outbox and publish an extract message carrying its delivery id
    only, all in one Redis round trip. A batch whose message is lost (a worker killed as it
    popped it) is published again by the reaper."""
    from ..schemas import StageMessage  # noqa: PLC0415
    from . import wiring  # noqa: PLC0415

    check_times(batches)
    from . import outbox  # noqa: PLC0415
    from .layout import new_delivery_id  # noqa: PLC0415
    from .wire import task_message  # noqa: PLC0415

    if not batches:
        return []
    coord, s = wiring.coord(), wiring.settings()
    now = time.time()
    rows = [(new_delivery_id(b.user_id), b) for b in batches]  # in the user's bucket
    messages = [task_message("memq.extract", [StageMessage(
        user_id=b.user_id, delivery_id=d).model_dump()]) for d, b in rows]
    if s.otel_endpoint:  # traced: the span's context goes on the records, not on the broker
        from . import tracing  # noqa: PLC0415

        with tracing.span("memq.enqueue", deliveries=len(rows),
                          turns=sum(len(b.turns) for b in batches)) as trace:
            outbox.accept(coord, [(d, b.user_id, b.model_dump_json()) for d, b in rows], now,
                          now + s.stall_s, messages, trace=trace)
    else:
        outbox.accept(coord, [(d, b.user_id, b.model_dump_json()) for d, b in rows], now,
                      now + s.stall_s, messages)
    return [Published(d, b.batch_id, b.user_id, b.session_id, len(b.turns)) for d, b in rows]
