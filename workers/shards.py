"""Moving a user between store shards (``memq move-user``), fenced: :func:`move`. Where a
user's data is, and the map that says so (``ShardMap``, ``Placement``): workers.placement.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pipeline.errors import UserBusy
from . import section, wiring
from .placement import KINDS, Placement
from .publish import publish_apply


@dataclass(frozen=True)
class Moved:
    user_id: str
    source: Placement
    target: Placement
    graph_nodes: int
    chroma_records: int


def move(user_id: str, *, neo4j: int | None = None, chroma: int | None = None,
         wait_s: float = 60.0) -> Moved:
    """Move the user's data to other shards, fenced:

    1. hold the user's claim (no drain, lifecycle job or forget of the user meanwhile;
       ``UserBusy`` if it is not had within ``wait_s``);
    2. mark it moving: its extractions wait (``ShardMap.place``) and those already past it
       cannot post (mailbox.post checks the mark and the epoch), so nothing new is committed
       on the source while it is copied; reads go on from the source;
    3. clear what an earlier, given-up move left on the target, copy the graph (nodes and
       edges as stored, the version fence's counter with them) and the Chroma records;
    4. flip the entry and move the epoch on, then delete the user from the source.

    An extraction that wrote episodes to the source during the move is refused at its post
    and extracted again at the target; the episodes it left on the source are deleted with
    the rest, unless it wrote them after step 4 (it then posts nothing: they are unreachable
    by reads, and ``memq forget`` of the user deletes them: it wipes every shard). Any failure
    before step 4 gives the move up: the user stays at the source."""
    s, coord, shards = wiring.settings(), wiring.coord(), wiring.shard_map()
    with section.hold(coord, user_id, s.claim_s, wait_s, publish_apply) as token:
        if token is None:
            raise UserBusy(f"user busy for {wait_s:.0f} s; not moved")
        source = shards.of(user_id)
        target = Placement(source.neo4j if neo4j is None else neo4j,
                           source.chroma if chroma is None else chroma, source.epoch)
        for kind in KINDS:
            if not 0 <= getattr(target, kind) < shards.sizes[kind]:
                raise ValueError(f"{kind} shard {getattr(target, kind)}: there are "
                                 f"{shards.sizes[kind]} (MEMQ_{kind.upper()}_SHARDS)")
        if (target.neo4j, target.chroma) == (source.neo4j, source.chroma):
            return Moved(user_id, source, source, 0, 0)
        uris, addresses = s.graph_uris(), s.chroma_addresses()
        if (target.neo4j != source.neo4j and uris[target.neo4j] == uris[source.neo4j]) or (
                target.chroma != source.chroma
                and addresses[target.chroma] == addresses[source.chroma]):
            raise ValueError("the two shards are the same instance (configured twice): "
                             "moving would delete what it copied")
        shards.mark_moving(user_id, source)
        nodes = records = 0
        try:
            if target.neo4j != source.neo4j:
                old, new = wiring.graphs()[source.neo4j], wiring.graphs()[target.neo4j]
                new.delete_user(user_id)
                nodes = old.copy_user(user_id, new)
            if target.chroma != source.chroma:
                old_c, new_c = wiring.chromas()[source.chroma], wiring.chromas()[target.chroma]
                new_c.delete_user(user_id)
                records = old_c.copy_user(user_id, new_c)
        except BaseException:
            shards.not_moving(user_id)
            raise
        now = shards.moved(user_id, target)
        if target.neo4j != source.neo4j:
            wiring.graphs()[source.neo4j].delete_user(user_id)
        if target.chroma != source.chroma:
            wiring.chromas()[source.chroma].delete_user(user_id)
        return Moved(user_id, source, now, nodes, records)
