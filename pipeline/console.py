"""What the console (``memq serve`` at ``/ui``) shows, as pure functions over plain values.

The shell (``workers.console``) reads the stores and renders templates; everything it shows
that takes a decision is computed here, from memories, audit entries and metric samples, and
unit-tested without a store:

- :func:`memory_groups`: a user's memories by person and kind, with the status a person
  would use (an archived memory past its end reads *expired*) and the importance left after
  decay;
- :func:`timelines`: per single slot (subject, predicate), the values over valid time as
  bands, each with when it was recorded and, when closed, when and why (the audit entry) and
  by which turns; :func:`value_at` and :func:`believed_at` answer "as of" a date in valid
  and in transaction time; :func:`band_layout` places the bands on an axis;
- :func:`filter_audit`, :func:`rates` and :func:`polyline` for the audit and the charts.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise

from ..schemas import AuditEntry, Operation, Status, StoredMemory
from . import lifecycle
from .lifecycle import Policy

USER = "the user"  # the person of a memory about the user (subject "user", or none named)
KIND_ORDER = ("profile", "fact", "preference", "event", "instruction")
STATUS_ORDER = ("current", "superseded", "expired", "archived")


@dataclass(frozen=True)
class MemoryRow:
    id: str
    content: str
    kind: str
    status: str  # current, superseded, archived or expired
    confidence: float
    importance: float  # after decay, now
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    source_turn_ids: tuple[str, ...]
    superseded_by: str | None


@dataclass(frozen=True)
class Group:
    person: str
    kind: str
    rows: tuple[MemoryRow, ...]


def person_of(memory: StoredMemory) -> str:
    """Whom a memory is about: its first triple's subject, else its first entity."""
    named = memory.triples[0].subject if memory.triples else (
        memory.entities[0] if memory.entities else "user")
    return USER if named.casefold() in {"user", "i", "me", "我"} else named


def display_status(memory: StoredMemory, now: datetime) -> str:
    """The status as a person reads it: an archived memory whose end has passed is expired."""
    if memory.status is Status.ARCHIVED and memory.expires_at is not None \
            and memory.expires_at <= now:
        return "expired"
    return str(memory.status)


def memory_row(memory: StoredMemory, now: datetime, policy: Policy) -> MemoryRow:
    return MemoryRow(
        id=memory.id, content=memory.content, kind=str(memory.kind),
        status=display_status(memory, now), confidence=memory.confidence,
        importance=round(lifecycle.decayed(memory, now, policy), 4)
        if memory.is_current else round(memory.importance, 4),
        valid_at=memory.valid_at, invalid_at=memory.invalid_at, created_at=memory.created_at,
        source_turn_ids=tuple(memory.source_turn_ids), superseded_by=memory.superseded_by)


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def memory_groups(memories: Sequence[StoredMemory], now: datetime, policy: Policy, *,
                  statuses: Sequence[str] | None = None) -> list[Group]:
    """The memories by person (the user first, then by name) and kind; in a group the
    current ones first, newest first. ``statuses``: only these (None: every status)."""
    groups: dict[tuple[str, str], list[MemoryRow]] = defaultdict(list)
    for m in memories:
        row = memory_row(m, now, policy)
        if statuses is None or row.status in statuses:
            groups[(person_of(m), row.kind)].append(row)

    def rank(row: MemoryRow) -> tuple[int, float, str]:
        status = STATUS_ORDER.index(row.status) if row.status in STATUS_ORDER else 9
        return (status, -row.valid_at.timestamp(), row.id)

    order = sorted(groups, key=lambda g: (g[0] != USER, g[0].casefold(), _kind_rank(g[1])))
    return [Group(person, kind, tuple(sorted(groups[(person, kind)], key=rank)))
            for person, kind in order]


@dataclass(frozen=True)
class Band:
    """One value of a slot: true over [valid_from, valid_to) in the world, recorded by memq
    at ``recorded_at`` and, when closed, closed at ``closed_at`` for ``reason``."""

    memory_id: str
    value: str
    content: str
    status: str
    valid_from: datetime
    valid_to: datetime | None  # None: still true
    recorded_at: datetime
    closed_at: datetime | None  # when memq learned it no longer held
    reason: str | None  # the audit's reason for the close
    closed_by_turns: tuple[str, ...]  # the turns that superseded it
    superseded_by: str | None
    source_turn_ids: tuple[str, ...]


@dataclass(frozen=True)
class Timeline:
    key: str  # stable, for links (no user text in a URL)
    subject: str
    predicate: str
    bands: tuple[Band, ...]

    @property
    def changes(self) -> int:
        return max(0, len(self.bands) - 1)


def slot_key(subject: str, predicate: str) -> str:
    return hashlib.sha256(f"{subject.casefold()}\x1f{predicate}".encode()).hexdigest()[:12]


def _closing(audit: Sequence[AuditEntry]) -> dict[str, AuditEntry]:
    """Per memory, the entry that closed it as it now stands: the last supersede or archive
    recorded (a late arrival closes a memory again, at its own start: that entry says why
    the memory ends where it ends). Entries of one time keep the trail's order."""
    closing: dict[str, AuditEntry] = {}
    for entry in sorted(audit, key=lambda e: e.at):
        if entry.operation in (Operation.SUPERSEDE, Operation.ARCHIVE):
            closing[entry.memory_id] = entry
    return closing


def timelines(memories: Sequence[StoredMemory], audit: Sequence[AuditEntry], *,
              min_bands: int = 1) -> list[Timeline]:
    """Every slot the memories state a triple of, its values as bands (one per memory: a
    value said again later, after another, is a band of its own), by valid time. The slots
    with the most changes first. ``min_bands``: leave out slots with fewer bands."""
    closing = _closing(audit)
    slots: dict[tuple[str, str], dict[str, Band]] = defaultdict(dict)
    names: dict[tuple[str, str], str] = {}
    for m in memories:
        for t in m.triples:
            slot = t.slot
            names.setdefault(slot, t.subject)
            closed = closing.get(m.id)
            ended = m.status is not Status.CURRENT
            slots[slot].setdefault(m.id, Band(
                memory_id=m.id, value=t.object, content=m.content, status=str(m.status),
                valid_from=m.valid_at, valid_to=m.invalid_at, recorded_at=m.created_at,
                closed_at=(closed.at if closed else m.updated_at) if ended else None,
                reason=closed.reason if closed and ended else None,
                closed_by_turns=tuple(closed.source_turn_ids) if closed and ended else (),
                superseded_by=m.superseded_by, source_turn_ids=tuple(m.source_turn_ids)))
    out = [Timeline(key=slot_key(names[slot], slot[1]), subject=names[slot], predicate=slot[1],
                    bands=tuple(sorted(bands.values(),
                                       key=lambda b: (b.valid_from, b.recorded_at, b.memory_id))))
           for slot, bands in slots.items() if len(bands) >= min_bands]
    return sorted(out, key=lambda t: (-t.changes, t.subject.casefold(), t.predicate))


def value_at(timeline: Timeline, when: datetime) -> Band | None:
    """What was true at ``when`` (valid time), as memq knows it now."""
    found = [b for b in timeline.bands
             if b.valid_from <= when and (b.valid_to is None or when < b.valid_to)]
    return found[-1] if found else None


def believed_at(timeline: Timeline, when: datetime) -> Band | None:
    """What memq held to be current at ``when`` (transaction time): recorded by then and not
    yet closed then; the latest by valid time."""
    found = [b for b in timeline.bands
             if b.recorded_at <= when and (b.closed_at is None or when < b.closed_at)]
    return found[-1] if found else None


@dataclass(frozen=True)
class Placed:
    band: Band
    x: float  # left edge, in [0, width]
    width: float
    recorded_x: float  # the mark of when it was recorded


@dataclass(frozen=True)
class Axis:
    start: datetime
    end: datetime

    def x(self, when: datetime, width: float) -> float:
        span = (self.end - self.start).total_seconds()
        if span <= 0:
            return 0.0
        at = (when - self.start).total_seconds() / span
        return round(width * min(1.0, max(0.0, at)), 2)


def axis(timeline: Timeline, now: datetime) -> Axis:
    """From the first value's start to ``now`` (or the latest time the timeline names)."""
    times = [t for b in timeline.bands
             for t in (b.valid_from, b.valid_to, b.recorded_at, b.closed_at) if t is not None]
    start = min(times, default=now)
    end = max([*times, now])
    return Axis(start, end if end > start else start + timedelta(days=1))


def band_layout(timeline: Timeline, scale: Axis, width: float) -> list[Placed]:
    out = []
    for b in timeline.bands:
        x0 = scale.x(b.valid_from, width)
        x1 = scale.x(b.valid_to, width) if b.valid_to is not None else width
        out.append(Placed(b, x0, max(2.0, x1 - x0), scale.x(b.recorded_at, width)))
    return out


def filter_audit(entries: Sequence[AuditEntry], *, memory_id: str | None = None,
                 operation: str | None = None) -> list[AuditEntry]:
    """Newest first, of one memory and/or one operation."""
    kept = [e for e in entries
            if (not memory_id or e.memory_id == memory_id)
            and (not operation or str(e.operation) == operation)]
    return sorted(kept, key=lambda e: (e.at, e.id), reverse=True)


def rates(samples: Sequence[Mapping[str, float]], field: str) -> list[tuple[float, float]]:
    """A counter's rate per second between consecutive samples (``t``: their Unix time); a
    counter that went down (metrics reset) starts again from 0."""
    out = []
    for before, after in pairwise(samples):
        dt = after["t"] - before["t"]
        if dt <= 0:
            continue
        gained = after.get(field, 0.0) - before.get(field, 0.0)
        out.append((after["t"], max(0.0, gained if gained >= 0 else after.get(field, 0.0)) / dt))
    return out


def series(samples: Sequence[Mapping[str, float]], field: str) -> list[tuple[float, float]]:
    return [(s["t"], float(s.get(field, 0.0))) for s in samples]


def polyline(points: Sequence[tuple[float, float]], width: float, height: float, *,
             fmt: Callable[[float], str] = lambda v: f"{v:.1f}") -> tuple[str, str]:
    """SVG ``points`` for a line chart of (t, value) in a ``width`` x ``height`` box (the
    highest value at the top), and the label of that highest value."""
    if not points:
        return "", fmt(0.0)
    t0, t1 = points[0][0], points[-1][0]
    top = max(v for _, v in points) or 1.0
    span = (t1 - t0) or 1.0
    coords = " ".join(f"{width * (t - t0) / span:.1f},{height - height * v / top:.1f}"
                      for t, v in points)
    return coords, fmt(top)
