"""Where a statement of a single-valued fact goes on that slot's timeline. Pure.

A single-valued slot (``user``/``production_environment``) holds one object at a time. Its
memories form a timeline of spans ``[valid_at, invalid_at)`` in world time; the last one is
open (current). A new statement ``(object, t)`` is placed by event time, not arrival time, so
the timeline comes out the same whatever order the statements arrive in:

- inside a span with the same object: a duplicate;
- inside a span with another object: it splits that span at ``t`` (the earlier part is
  superseded at ``t``); if the next span already states the same object, that span is
  extended back to ``t`` instead of adding a second one;
- before every span: the same, against the first span;
- no span yet: a new, current memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from ..schemas import Status, StoredMemory, Triple


class Action(StrEnum):
    NEW = "new"  # first statement of the slot
    DUPLICATE = "duplicate"  # ``target`` already says it at t
    EXTEND = "extend"  # ``target`` (same object) now starts at t
    INSERT = "insert"  # a new span [t, next.valid_at or open)


@dataclass(frozen=True)
class Placement:
    action: Action
    target: StoredMemory | None = None  # DUPLICATE / EXTEND
    cut: StoredMemory | None = None  # the span containing t, to be closed at t
    following: StoredMemory | None = None  # INSERT: the span after the new one (None: current)


def _holds(memory: StoredMemory, triple: Triple) -> str | None:
    for held in memory.triples:
        if held.slot == triple.slot:
            return held.object.casefold()
    return None


def place(memories: Sequence[StoredMemory], triple: Triple, t: datetime) -> Placement:
    spans = sorted((m for m in memories
                    if m.status is not Status.ARCHIVED and _holds(m, triple) is not None),
                   key=lambda m: (m.valid_at, m.id))
    if not spans:
        return Placement(Action.NEW)
    obj = triple.object.casefold()
    earlier = [m for m in spans if m.valid_at <= t]
    containing = earlier[-1] if earlier else None
    if containing is not None and containing.invalid_at is not None \
            and containing.invalid_at <= t:
        containing = None  # a gap (an archived span): nothing to cut
    later = [m for m in spans if m.valid_at > t]
    following = later[0] if later else None
    if containing is not None and _holds(containing, triple) == obj:
        return Placement(Action.DUPLICATE, target=containing)
    if following is not None and _holds(following, triple) == obj:
        return Placement(Action.EXTEND, target=following, cut=containing)
    return Placement(Action.INSERT, cut=containing, following=following)
