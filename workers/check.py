"""``memq check``: compare Chroma and Neo4j memory by memory; ``--repair`` repairs the graph's
side from the audit trail, then rebuilds the user's index (Chroma) from the graph, the state
of record. Each user is checked holding the user's claim, so no drain is between its commit and
its Chroma write while we compare; repairs are fenced writes like every other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from memq.pipeline import service
from memq.pipeline.check import Drift, find_drift, latest_snapshots, plan_repair, unreadable
from memq.workers import wiring
from memq.workers.tasks import publish_apply

log = structlog.get_logger(__name__)

CHECK_LOCK_WAIT_S = 30.0


@dataclass
class Checked:
    user: str
    memories: int = 0
    found: list[Drift] = field(default_factory=list)
    remaining: list[Drift] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # memory id -> why not repaired
    busy: bool = False


def _scan(user: str) -> tuple[int, list[Drift]]:

    graph = wiring.graph()
    unreadable_ids: list[str] = []  # records not in the layout: checked as missing (below)
    vector_side = wiring.chroma().memories(user, include_inactive=True,
                                           unreadable=unreadable_ids)
    graph_side = graph.memories(user)
    snapshots = latest_snapshots(graph.audit(user))
    count = len({m.id for m in vector_side} | {g.id for g in graph_side} | set(unreadable_ids))
    if unreadable_ids:
        # the graph's memories among them come out as missing in the index (repair rewrites
        # them); the rest, which the graph does not hold, the re-index deletes
        log.warning("unreadable index records", user_id=user, records=len(unreadable_ids))
    return count, [*find_drift(vector_side, graph_side, snapshots),
                   *unreadable(user, unreadable_ids, {g.id for g in graph_side})]


def _repair(user: str, drifts: Sequence[Drift]) -> dict[str, str]:
    """Write each drift's truth to Chroma, then to Neo4j with a REPAIR audit entry; returns
    the memories left alone, and why."""

    ports, now = wiring.ports_for(user), datetime.now(UTC)
    embedder = ports.embedder
    plan = plan_repair(drifts, model_id=embedder.model_id, now=now)
    skipped = {d.memory_id: why for d, why in plan.skipped}
    if not plan.memories:
        return skipped
    texts = [m.content for m, fresh in zip(plan.memories, plan.reembed, strict=True) if fresh]
    embedded = iter(embedder.embed(texts) if texts else [])
    vectors = [next(embedded) if fresh else None for fresh in plan.reembed]
    # Unfenced (expected=None): the truth comes from the audit trail, not from a state read
    # now; the version still moves on, so a plan made before the repair is refused.
    service.commit(ports, user, plan.memories, vectors, plan.audit, now,
                   expected=None, caught_up=False)
    log.info("repaired drift", user_id=user, memories=len(plan.memories),
             reembedded=sum(plan.reembed), skipped=len(skipped))
    return skipped


def check_user(user: str, *, repair: bool) -> Checked:
    s = wiring.settings()
    with wiring.coord().hold(user, s.lock_lease_s, CHECK_LOCK_WAIT_S,
                                publish_apply) as token:
        if token is None:
            return Checked(user, busy=True)
        count, found = _scan(user)
        checked = Checked(user, count, found, remaining=found)
        if repair:
            # the graph's side from the audit trail, then the index rebuilt from the graph
            # (what nothing can settle is left alone, and reported)
            checked.skipped = _repair(user, found) if found else {}
            written, deleted = service.reindex(wiring.ports_for(user), user,
                                               keep=sorted(checked.skipped))
            log.info("reindexed", user_id=user, memories=written, deleted=deleted)
            checked.memories, checked.remaining = _scan(user)
        return checked


def check_lines(checked: Sequence[Checked], *, repair: bool) -> list[str]:
    lines = []
    for c in checked:
        if c.busy:
            lines.append(f"busy     user {c.user}: a batch held its lock for "
                         f"{CHECK_LOCK_WAIT_S:g}s; not checked")
            continue
        if not repair:
            lines += [f"drift    {d.describe()}" for d in c.found]
            continue
        left = {d.memory_id for d in c.remaining}
        lines += [f"repaired {d.describe()}" for d in c.found if d.memory_id not in left]
        for d in c.remaining:
            why = c.skipped.get(d.memory_id)
            extra = f" [not repaired: {why}]" if why and why != d.note else ""
            lines.append(f"remains  {d.describe()}{extra}")
    return lines
