"""``memq check``: compare Chroma and Neo4j memory by memory; ``--repair`` repairs the graph's
side from the audit trail, then rebuilds the user's index (Chroma) from the graph, the state
of record. Each user is checked holding the user's claim, so no drain is between its commit and
its Chroma write while we compare. A repair is not fenced by the version it read (the audit
trail, not the graph, is what it trusts) but moves the version on, so a plan made before it is
refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from ..pipeline import service
from ..pipeline.check import Drift, find_drift, latest_snapshots, plan_repair
from . import section, wiring
from .publish import publish_apply

log = structlog.get_logger(__name__)

CHECK_CLAIM_WAIT_S = 30.0


@dataclass
class Checked:
    user: str
    memories: int = 0
    found: list[Drift] = field(default_factory=list)
    remaining: list[Drift] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # memory id -> why not repaired
    busy: bool = False


def _scan(user: str) -> tuple[int, list[Drift]]:
    graph = wiring.graph_for(user)
    index = wiring.chroma_for(user).index(user)
    graph_side = graph.memories(user)
    snapshots = latest_snapshots(graph.audit(user))
    count = len(index.keys() | {g.id for g in graph_side})
    return count, find_drift(index, graph_side, snapshots, user_id=user)


def _repair(user: str, drifts: Sequence[Drift]) -> dict[str, str]:
    """Write each graph drift's truth to the graph with a REPAIR audit entry (and to the
    index); returns the memories left alone, and why. Index drift is the re-index's."""
    ports, now = wiring.ports_for(user), datetime.now(UTC)
    plan = plan_repair(drifts, model_id=ports.embedder.model_id, now=now)
    skipped = {d.memory_id: why for d, why in plan.skipped}
    if not plan.memories:
        return skipped
    # Unfenced (expected=None): the truth comes from the audit trail, not from a state read
    # now; the version still moves on, so a plan made before the repair is refused. The
    # index write embeds the texts it has no vector of (caught_up=False).
    service.commit(ports, user, plan.memories, [None] * len(plan.memories), plan.audit, now,
                   expected=None, caught_up=False)
    log.info("repaired drift", user_id=user, memories=len(plan.memories), skipped=len(skipped))
    return skipped


def check_user(user: str, *, repair: bool) -> Checked:
    s = wiring.settings()
    with section.hold(wiring.coord(), user, s.claim_s, CHECK_CLAIM_WAIT_S,
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
            lines.append(f"busy     user {c.user}: a drain held the user's claim for "
                         f"{CHECK_CLAIM_WAIT_S:g}s; not checked")
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
