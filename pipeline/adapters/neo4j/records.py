"""What the graph's rows are as memq's values, and memq's values as the rows the Cypher
writes: memories (with their facts), audit entries, episodes as hits, and the graph's times.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ....schemas import AuditEntry, StoredMemory
from ... import ids, recall
from ...check import GraphMemory
from ...merge_time import ended_on
from ...ports import Changed, Hit


def _native(value: Any) -> Any:
    """Neo4j temporal values back to Python datetimes."""
    return value.to_native() if hasattr(value, "to_native") else value


def _time(value: Any) -> Any:
    """A time as a query returned it: an ISO string (see get_memories.cypher; a
    zone name after the offset, ``Z[UTC]``, is dropped: the offset fixes the instant) or a
    Neo4j temporal value."""
    if isinstance(value, str):
        return datetime.fromisoformat(value.split("[", 1)[0])
    return _native(value)


def _changed(row: dict[str, Any]) -> Changed:
    found = [stored_memory(props) for props in row["successors"]]
    return Changed.of([(str(r["id"]), [str(ref) for ref in r["refs"] or []],
                        str(r["next"]) if r["next"] else None) for r in row["superseded"]],
                      found, [str(ref) for ref in row["mixed"]])


def _episode_hit(r: dict[str, Any]) -> Hit:
    return Hit(id=r["id"], type="episode", content=r["text"], score=float(r["score"]),
               event_at=_time(r["event_at"]), created_at=_time(r["created_at"]),
               source_turn_ids=[r["ref"]],
               role=r["role"], speaker=r["speaker"], neighbors=tuple(r.get("neighbors") or ()))


_TIMES = frozenset({"valid_at", "invalid_at", "created_at", "updated_at", "expires_at",
                    "last_accessed_at"})


def _iso(value: datetime | None) -> str | None:
    """A time as the Cypher that stores it expects it: an ISO string for ``datetime()``. The
    driver's own encoding of a datetime is pure Python (neo4j.time) and costs far more a
    value than the string, several per memory and episode (figures:
    scripts/results/2026-12-07-figures-from-comments.md); Neo4j parses the string to the
    same DateTime (UTC offset, microseconds)."""
    return value.isoformat() if value is not None else None


def _memory_row(m: StoredMemory) -> dict[str, Any]:
    props = {
        "user_id": m.user_id, "content": m.content, "kind": str(m.kind), "status": str(m.status),
        "confidence": m.confidence, "importance": m.importance,
        "superseded_by": m.superseded_by, "source_turn_ids": m.source_turn_ids,
        "embedding_model": m.embedding_model, "scope": m.scope, "session_id": m.session_id,
        "derived_from": m.derived_from, "consolidated_into": m.consolidated_into,
        "entities": m.entities, "content_hash": ids.content_hash(m.content),
        "user_key": recall.user_key(m.user_id),  # the BM25 index's per-user token
        "triples_json": json.dumps([t.model_dump() for t in m.triples], ensure_ascii=False),
        "replaces_json": json.dumps([t.model_dump() for t in m.replaces], ensure_ascii=False)
        if m.replaces else None,
        "said_at": _iso(m.said_at),  # ISO strings: read back as they are, only by plans
        "restated_at": _iso(m.restated_at),
    }
    times = {"valid_at": _iso(m.valid_at), "invalid_at": _iso(m.invalid_at),
             "created_at": _iso(m.created_at), "updated_at": _iso(m.updated_at),
             "expires_at": _iso(m.expires_at), "last_accessed_at": _iso(m.last_accessed_at)}
    triple_ids = [ids.triple_id(m.id, t.subject, t.predicate, t.object) for t in m.triples]
    return {"id": m.id, "props": props, "times": times, "triple_ids": triple_ids}


def _fact_rows(m: StoredMemory) -> list[dict[str, Any]]:
    return [{
        "id": ids.triple_id(m.id, t.subject, t.predicate, t.object), "memory_id": m.id,
        "subject": t.subject, "subject_key": ids.entity_key(t.subject), "predicate": t.predicate,
        "object": t.object, "object_key": ids.entity_key(t.object), "valid_at": _iso(m.valid_at),
        "invalid_at": _iso(m.invalid_at), "source_turn_ids": m.source_turn_ids,
        "current": m.is_current,
        # what a change ended on this slot: a late statement of it finds the change here
        "ends": ended_on(m, t) or None,
    } for t in m.triples]


def _audit_row(entry: AuditEntry, seq: int) -> dict[str, Any]:
    props = entry.model_dump(mode="python")
    props["operation"] = str(entry.operation)
    props["before"] = json.dumps(entry.before, ensure_ascii=False) if entry.before else None
    props["after"] = json.dumps(entry.after, ensure_ascii=False) if entry.after else None
    props["seq"] = seq
    props["at"] = _iso(entry.at)  # datetime() in the Cypher (see _iso)
    return {"id": entry.id, "props": props}


_NOT_MEMORY = {"triples_json", "replaces_json", "content_hash", "version", "_lock", "user_key"}


def stored_memory(props: dict[str, Any]) -> StoredMemory:
    """A Memory node's properties back to the memory (the graph is the state of record)."""
    values = {k: _time(v) if k in _TIMES else _native(v) for k, v in props.items()
              if k not in _NOT_MEMORY}
    values["triples"] = json.loads(props.get("triples_json") or "[]")
    values["replaces"] = json.loads(props.get("replaces_json") or "[]")
    return StoredMemory.model_validate(values)


def _parsed(props: dict[str, Any]) -> StoredMemory | None:
    try:
        return stored_memory(props)
    except (ValidationError, ValueError, TypeError):
        return None  # a damaged node: memq check says so


def _graph_memory(row: dict[str, Any]) -> GraphMemory:
    return GraphMemory(
        id=row["id"], user_id=row["user_id"], status=str(row["status"]),
        content=str(row["content"]), valid_at=_native(row["valid_at"]),
        invalid_at=_native(row["invalid_at"]), updated_at=_native(row["updated_at"]),
        open_fact_ids=frozenset(row["open_facts"]), closed_fact_ids=frozenset(row["closed_facts"]),
        state=_parsed(row["props"]),
    )
