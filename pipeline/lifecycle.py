"""Memory lifecycle, pure: decay, recall boost, expiry, capacity and consolidation clusters.

Every job is a function of (memories, now, policy) that returns the changes to make; none
reads the clock or a store. Decay is computed, never stored: ``importance`` is the value at
the last access, and the effective importance is ``importance x rate^days since access``.
So a job run twice finds nothing to do the second time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from ..schemas import AuditEntry, Kind, Operation, Status, StoredMemory
from . import ids
from .ports import Vector

DAY_S = 86_400.0


@dataclass(frozen=True)
class Policy:
    decay_rate: float = 0.95  # per day since last access (seeds: importance x 0.95^days)
    floor: float = 0.1  # below: archived
    boost: float = 0.1  # added when recalled, capped at 1.0
    ttl: dict[Kind, timedelta | None] = field(default_factory=lambda: {
        Kind.EVENT: timedelta(days=30)})  # kinds not listed never expire
    session_grace: timedelta = timedelta(days=1)  # session-scoped: session end + grace
    capacity: int = 10_000  # current memories per user
    cluster_similarity: float = 0.8  # consolidation: members this close to the seed
    cluster_min: int = 3
    consolidated_factor: float = 0.3  # sources' importance after consolidation
    profile_similarity: float = 0.6  # profiles: a topic's members this close (name left out)
    profile_max: int = 6  # members per profile, those closest to the topic's centre
    profile_pool: int = 2000  # a person's newest memories a profile is drawn from


@dataclass(frozen=True)
class Change:
    """A memory's new state and why (one audit entry each)."""

    before: StoredMemory
    after: StoredMemory
    reason: str


def decayed(memory: StoredMemory, now: datetime, policy: Policy) -> float:
    since = memory.last_accessed_at or memory.created_at
    days = max(0.0, (now - since).total_seconds() / DAY_S)
    return float(memory.importance * policy.decay_rate**days)


def recall_score(similarity: float, memory: StoredMemory, now: datetime, policy: Policy) -> float:
    """The seeds' ranking: similarity x decay x confidence."""
    return similarity * decayed(memory, now, policy) * memory.confidence


def recalled(memory: StoredMemory, now: datetime, policy: Policy) -> StoredMemory:
    """A recall refreshes the clock and boosts what is left of the importance."""
    boosted = min(1.0, decayed(memory, now, policy) + policy.boost)
    return memory.with_changes(importance=boosted, last_accessed_at=now)


def recall_audit(before: StoredMemory, after: StoredMemory, now: datetime) -> AuditEntry:
    """The audit entry of a recorded recall: only what it changed (importance, last access).
    One per memory and instant: recording the same recall twice writes it once."""
    batch_id = f"recall:{now.isoformat()}"

    def fields(m: StoredMemory) -> dict[str, object]:
        return {"importance": m.importance, "last_accessed_at":
                m.last_accessed_at.isoformat() if m.last_accessed_at else None}

    return AuditEntry(
        id=ids.audit_id(batch_id, before.id, str(Operation.RECALL)), user_id=before.user_id,
        memory_id=before.id, operation=Operation.RECALL, before=fields(before),
        after=fields(after), reason=f"recalled: importance {before.importance:.3f} -> "
        f"{after.importance:.3f}", source_turn_ids=[], batch_id=batch_id,
        extractor="recall", at=now)


def _archive(memory: StoredMemory, now: datetime, reason: str) -> Change:
    return Change(memory, memory.with_changes(status=Status.ARCHIVED, updated_at=now), reason)


def decay(memories: Sequence[StoredMemory], now: datetime, policy: Policy) -> list[Change]:
    out = []
    for m in memories:
        if m.is_current and (value := decayed(m, now, policy)) < policy.floor:
            out.append(_archive(m, now, f"decayed to {value:.3f} < floor {policy.floor}"))
    return out


def expiry_time(memory: StoredMemory, policy: Policy) -> datetime | None:
    if memory.expires_at is not None:
        return memory.expires_at
    if memory.scope == "session":  # the session's last word is its valid time at the latest
        return memory.valid_at + policy.session_grace
    ttl = policy.ttl.get(memory.kind)
    return memory.valid_at + ttl if ttl is not None else None


def expire(memories: Sequence[StoredMemory], now: datetime, policy: Policy) -> list[Change]:
    out = []
    for m in memories:
        end = expiry_time(m, policy)
        if m.is_current and end is not None and end <= now:
            out.append(_archive(m, now, f"expired at {end.isoformat()} ({m.kind}, {m.scope})"))
    return out


def over_capacity(memories: Sequence[StoredMemory], now: datetime,
                  policy: Policy) -> list[Change]:
    current = [m for m in memories if m.is_current]
    excess = len(current) - policy.capacity
    if excess <= 0:
        return []
    ranked = sorted(current, key=lambda m: (decayed(m, now, policy) * m.confidence, m.id))
    return [_archive(m, now, f"over capacity {policy.capacity}: among the {excess} lowest")
            for m in ranked[:excess]]


def clusters(items: Sequence[tuple[str, Vector]], *, similarity: float,
             min_size: int) -> list[list[str]]:
    """Leader clustering, deterministic: the unassigned item with the most unassigned
    neighbours at >= ``similarity`` (ties: smallest id) leads a cluster of itself and those
    neighbours; repeat while a cluster of at least ``min_size`` can form."""
    if not items:
        return []
    ordered = sorted(items, key=lambda kv: kv[0])
    keys = [k for k, _ in ordered]
    matrix = np.asarray([v for _, v in ordered], dtype=np.float32)
    matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
    close = (matrix @ matrix.T) >= similarity
    free = np.ones(len(keys), dtype=bool)
    found: list[list[str]] = []
    while True:
        degree = (close & free[None, :]).sum(axis=1) * free  # counts itself
        leader = int(np.argmax(degree))  # first maximum: the smallest id
        if degree[leader] < min_size:
            return found
        members = np.flatnonzero(close[leader] & free)
        free[members] = False
        found.append([keys[j] for j in members])
