"""Neo4j: memories, entities, facts (triples with validity in time) and the audit trail.

Cypher lives in ``cypher/*.cypher``, loaded by name, parameters only. The write path's
statements (a plan's fenced write, episodes, Chroma's mark, the plan's reads) each run as one
auto-commit transaction: one round trip, where a managed transaction takes three (BEGIN, RUN,
COMMIT). A plan's write is one statement (``apply_plan``), so it stays one transaction.
Neo4j's retryable errors (a deadlock) are retried here as the driver retries a managed
transaction; connection loss surfaces as :class:`TransientError` so the task retries with
backoff.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

import neo4j
import neo4j.exceptions as nx
from pydantic import ValidationError

from ....schemas import AuditEntry, StoredMemory, Turn, turn_ref
from ... import ids, recall
from ...check import GraphMemory
from ...errors import PermanentError, StaleVersion, TransientError
from ...merge import ended_on
from ...ports import Changed, Hit, PlanView, SlotHolder, UserVersion

INCLUDE = "// include: "
RETRIES = 5  # of a statement that hit a retryable error (a deadlock)


@cache
def cypher(name: str) -> str:
    """``cypher/<name>.cypher``; a line ``// include: <other>`` stands for that file."""
    text = resources.files(__package__).joinpath("cypher", f"{name}.cypher").read_text()
    return "\n".join(cypher(line.strip().removeprefix(INCLUDE))
                     if line.strip().startswith(INCLUDE) else line
                     for line in text.splitlines())


@contextmanager
def _transient() -> Iterator[None]:
    try:
        yield
    except (nx.ServiceUnavailable, nx.SessionExpired, nx.TransientError, OSError) as exc:
        raise TransientError(f"neo4j unavailable: {exc}") from exc


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


def _rows(result: neo4j.Result) -> list[dict[str, Any]]:
    """The rows as they came: every query returns maps, lists and values, never nodes, so
    Record.data()'s walk of each value would cost time a batch and change nothing (figures:
    scripts/results/2026-12-07-figures-from-comments.md)."""
    keys = result.keys()
    return [dict(zip(keys, r, strict=True)) for r in result]


_UNITS = {"B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "K": 2**10, "M": 2**20,
          "G": 2**30, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def _bytes(value: str) -> int:
    """A Neo4j byte setting as SHOW SETTINGS prints it ("1.00MiB", "256M") in bytes."""
    text = value.strip().upper().replace(" ", "")
    number = text.rstrip("KMGIB")
    return int(float(number) * _UNITS.get(text[len(number):] or "B", 1))


DRIVER_RETRY_S = 2.0  # a managed transaction's retries (deadlocks, a leader change)
CONNECT_TIMEOUT_S = 5.0
ACQUIRE_TIMEOUT_S = 10.0
COPIED_LABELS = frozenset({"User", "Memory", "Entity", "Episode", "Audit"})  # import_user
COPIED_TYPES = frozenset({"FACT", "HAS_MEMORY", "ABOUT", "AUDITED", "SUPERSEDED_BY",
                          "DERIVED_FROM"})


class Neo4jGraph:
    """Implements GraphStore."""

    def __init__(self, uri: str, auth: tuple[str, str] | None = None,
                 database: str | None = None) -> None:
        # An instance that is down fails a call within seconds (the task's backoff is the one
        # retry layer): with the driver's defaults a managed transaction retried for 30 s, so
        # a worker holding work of a store shard that was down served no other user
        # meanwhile (workers.shards: only that shard's users are to wait).
        self._driver = neo4j.GraphDatabase.driver(
            uri, auth=auth, notifications_min_severity="OFF",
            max_transaction_retry_time=DRIVER_RETRY_S, connection_timeout=CONNECT_TIMEOUT_S,
            connection_acquisition_timeout=ACQUIRE_TIMEOUT_S)
        self._database = database
        self._schema_ready = False
        # one schema setup at a time in this process: two threads' at once (a request and the
        # warm-up) deadlocked each other in Neo4j (DeadlockDetected)
        self._schema_lock = threading.Lock()
        self._local = threading.local()  # .rehearsal: this thread's rolled-back transaction

    def close(self) -> None:
        self._driver.close()

    def _session(self) -> neo4j.Session:
        return self._driver.session(database=self._database)

    def ensure_schema(self) -> None:
        if self._schema_ready:
            return
        with self._schema_lock:
            if not self._schema_ready:
                self._create_schema()

    def _create_schema(self) -> None:
        with _transient(), self._session() as session:
            body = "\n".join(
                line for line in cypher("schema").splitlines() if not line.startswith("//")
            )
            for statement in filter(None, (s.strip() for s in body.split(";"))):
                try:
                    session.run(statement).consume()
                except nx.ClientError as exc:  # another process created it at the same time
                    if "EquivalentSchemaRuleAlreadyExists" not in (exc.code or ""):
                        raise
        self._schema_ready = True

    @contextmanager
    def rehearsal(self) -> Iterator[None]:
        """What this thread runs inside goes to one transaction, rolled back at the end:
        statements planned, compiled and run on sample data, nothing kept. Other threads'
        statements are not in it. (``workers.warm``: a fresh Neo4j's first plans cost
        hundreds of milliseconds each.)"""
        self.ensure_schema()
        with _transient(), self._session() as session:
            tx = session.begin_transaction()
            self._local.rehearsal = tx
            try:
                yield
            finally:
                self._local.rehearsal = None
                tx.rollback()

    def _run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """``cypher/<name>.cypher`` as one auto-commit transaction (atomic, like any
        transaction), its rows as dicts. A retryable error (a deadlock: nothing was written)
        runs it again after a short, growing, jittered wait, as the driver does for a managed
        transaction. (The driver retries no auto-commit: after a lost connection it cannot
        know whether one committed. An error Neo4j reports was rolled back; and none of these
        statements commits in parts, as ``CALL {} IN TRANSACTIONS`` would.)"""
        self.ensure_schema()
        query = neo4j.Query(cypher(name))
        rehearsal = getattr(self._local, "rehearsal", None)
        if rehearsal is not None:
            with _transient():
                return _rows(rehearsal.run(query.text, params))
        for attempt in range(RETRIES + 1):
            try:
                with _transient(), self._session() as session:
                    return _rows(session.run(query, params))
            except TransientError as exc:
                cause = exc.__cause__
                if not (isinstance(cause, nx.TransientError) and cause.is_retryable()) \
                        or attempt == RETRIES:
                    raise
                time.sleep(0.01 * 2**attempt * random.uniform(0.8, 1.2))
        raise AssertionError("unreachable")

    # -- the user's version: the fence of every write ----------------------------------------
    def version(self, user_id: str) -> UserVersion:
        (row,) = self._run("user_version", user_id=user_id)
        return UserVersion(version=int(row["version"]), projected=int(row["projected"]))

    def apply(self, user_id: str, memories: Sequence[StoredMemory],
              audit: Sequence[AuditEntry], now: datetime, *, expected: int | None) -> int:
        """Write a plan in one transaction fenced on the user's version: it commits only if the
        version is still ``expected`` (the one the plan was made from; None: any) and moves it
        on by one. Returns the new version; raises StaleVersion (nothing written) otherwise."""
        rows = [_memory_row(m) for m in memories]
        facts = [f for m in memories for f in _fact_rows(m)]
        entries = [_audit_row(e, seq) for seq, e in enumerate(audit)]
        found = self._run("apply_plan", user_id=user_id, expected=expected, now=now,
                          memories=rows, facts=facts, entries=entries)
        if not found:
            raise StaleVersion(f"user {user_id} has no version any more (forgotten?), "
                               f"the plan was made at {expected}")
        if found[0]["version"] is None:
            raise StaleVersion(f"user {user_id} is at version {found[0]['was']}, "
                               f"the plan was made at {expected}")
        return int(found[0]["version"])

    def mark_projected(self, user_id: str, version: int, *, if_at: int | None = None) -> int:
        rows = self._run("mark_projected", user_id=user_id, version=version, if_at=if_at)
        return int(rows[0]["version"]) if rows else 0

    def plan_view(self, user_id: str, *, batch_ids: Sequence[str],
                  slots: Sequence[tuple[str, str]], memory_ids: Sequence[str],
                  contents: Sequence[str], ends: Sequence[tuple[str, str]] = ()) -> PlanView:
        (row,) = self._run(
            "plan_view", user_id=user_id, batch_ids=list(batch_ids),
            slots=[{"subject_key": ids.entity_key(s), "predicate": p} for s, p in slots],
            ends=[{"subject_key": ids.entity_key(s), "predicate": p} for s, p in ends],
            ids=list(memory_ids), hashes=sorted({ids.content_hash(c) for c in contents}))
        exact = {ids.content_hash(m.content): m for m in sorted(
            (stored_memory(m) for m in row["exact"]), key=lambda m: m.id)}
        memories = {m.id: m for m in (stored_memory(m) for m in row["memories"])}
        holders = [SlotHolder(memory_id=h["memory_id"], subject=h["subject"],
                              predicate=h["predicate"], object=h["object"],
                              valid_at=_time(h["valid_at"]))
                   for h in sorted(row["holders"], key=lambda h: (
                       h["memory_id"], h["subject"], h["predicate"], h["object"]))]
        return PlanView(version=UserVersion(version=int(row["version"]),
                                            projected=int(row["projected"])),
                        applied=frozenset(str(b) for b in row["applied"]), holders=holders,
                        memories=memories, exact=exact,
                        enders=sorted(str(e) for e in row["enders"]),
                        ended=sorted(str(e) for e in row["ended"]))

    def near_current(self, user_id: str, near: Sequence[Sequence[str]],
                     k: int) -> list[StoredMemory]:
        if not any(near):
            return []
        (row,) = self._run("near_current", user_id=user_id, near=[list(top) for top in near],
                           k=k)
        return [stored_memory(m) for m in row["memories"]]

    def read_memories(self, user_id: str, *, include_inactive: bool = False,
                      as_of: datetime | None = None,
                      exclude: Sequence[str] = ()) -> list[StoredMemory]:
        """The user's memories from the state of record (ordered by valid time, then id):
        current ones, every one (``include_inactive``), or those true at ``as_of``; never
        those of ``exclude``."""
        return [stored_memory(r["m"]) for r in self._run(
            "read_memories", user_id=user_id, all=include_inactive,
            as_of=as_of.isoformat() if as_of is not None else None, exclude=list(exclude))]

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        if not memory_ids:
            return []
        return [stored_memory(r["m"]) for r in
                self._run("get_memories", user_id=user_id, ids=list(memory_ids))]

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]:
        """Current memories with the same normalised text, by content hash."""
        hashes = sorted({ids.content_hash(c) for c in contents})
        if not hashes:
            return {}
        found = [stored_memory(r["m"]) for r in
                 self._run("exact_memories", user_id=user_id, hashes=hashes)]
        return {ids.content_hash(m.content): m for m in sorted(found, key=lambda m: m.id)}

    def changed_since(self, user_id: str, version: int) -> list[StoredMemory]:
        return [stored_memory(r["m"]) for r in
                self._run("changed_since", user_id=user_id, since=version)]

    def record_access(self, user_id: str, memories: Sequence[StoredMemory],
                      audit: Sequence[AuditEntry] = ()) -> None:
        """A recall's new importance and last access, with its audit entries, in one
        transaction (not fenced: it cannot undo a concurrent change, see the Cypher)."""
        rows = [{"id": m.id, "importance": m.importance, "last_accessed_at": m.last_accessed_at}
                for m in memories]
        entries = [_audit_row(e, seq) for seq, e in enumerate(audit)]

        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(cypher("record_access"), user_id=user_id, memories=rows).consume()
            if entries:
                tx.run(cypher("upsert_audit"), user_id=user_id, entries=entries).consume()

        with _transient(), self._session() as session:
            session.execute_write(work)

    def owner(self, memory_id: str) -> str | None:
        """The user whose memory this is, if any."""
        rows = self._run("memory_owner", memory_id=memory_id)
        return str(rows[0]["user_id"]) if rows else None

    def audit(self, user_id: str, memory_id: str | None = None, *,
              batch_ids: Sequence[str] | None = None) -> list[AuditEntry]:
        entries = []
        for row in self._run("audit", user_id=user_id, memory_id=memory_id,
                             batch_ids=list(batch_ids) if batch_ids is not None else None):
            props = {k: _native(v) for k, v in row["entry"].items() if k != "seq"}
            for key in ("before", "after"):
                props[key] = json.loads(props[key]) if props.get(key) else None
            entries.append(AuditEntry.model_validate(props))
        return entries

    def facts(self, user_id: str) -> list[dict[str, Any]]:
        return [{k: _native(v) for k, v in row.items()}
                for row in self._run("facts", user_id=user_id)]

    def memories(self, user_id: str) -> list[GraphMemory]:
        """The user's Memory nodes as they are, with their open and closed FACT edges."""
        return [_graph_memory(r) for r in self._run("memories", user_id=user_id)]

    def copy_user(self, user_id: str, target: Neo4jGraph) -> int:
        """Every node and edge of the user into ``target``, another instance, in one of its
        transactions (a user that is there already is refused: the unique constraints).
        Returns the nodes copied. The caller holds the user still (workers.shards.move)."""
        nodes = self._run("export_nodes", user_id=user_id)
        if not nodes:
            return 0
        at = {row["key"]: i for i, row in enumerate(nodes)}
        exported = self._run("export_edges", user_id=user_id)
        strange = sorted({":".join(r["labels"]) for r in nodes if len(r["labels"]) != 1
                          or r["labels"][0] not in COPIED_LABELS}
                         | {e["type"] for e in exported if e["type"] not in COPIED_TYPES}
                         | {f"edge to {e['b']}" for e in exported if e["b"] not in at})
        if strange:  # import_user has a branch per label and type of memq's graph: no others
            raise PermanentError(f"the user's graph holds what a copy would drop: {strange}")
        edges = [{"a": at[e["a"]], "b": at[e["b"]], "type": e["type"], "props": e["props"]}
                 for e in exported]
        target.ensure_schema()
        with _transient(), target._session() as session:
            copied = session.execute_write(lambda tx: tx.run(
                cypher("import_user"),
                nodes=[{"label": r["labels"][0], "props": r["props"]} for r in nodes],
                edges=edges).single())
        if copied is None or int(copied["n"]) != len(edges):
            raise PermanentError(f"copy wrote {copied and copied['n']} of {len(edges)} edges")
        return len(nodes)

    def users(self) -> list[str]:
        """Every user the graph knows."""
        return [str(r["user_id"]) for r in self._run("users")]

    def delete_user(self, user_id: str) -> int:
        """Every node of the user, in bounded transactions (any size, default heap)."""
        self.ensure_schema()
        total = 0
        with _transient(), self._session() as session:
            for statement in self._statements("delete_user"):
                record = session.run(statement, user_id=user_id).single()  # auto-commit
                total += int(record["n"] or 0) if record else 0
        return total

    def push_log(self, limit: int = 8 * 2**20) -> int:
        """Push what is in the current transaction-log file (a forget's before-images: a
        delete logs what it deleted) into a file the next checkpoint prunes: a filler node as
        large as a file, written and deleted, twice; each of the four transactions ends a
        file. With ``db.tx_log.rotation.retention_policy=false`` (Neo4jLauncher.java) a
        checkpoint still kept the two files before its own (5.26), so one round was not
        enough. Returns the filler written; 0 when the server rotates files larger than
        ``limit`` (then the words stay until that much more is written)."""
        with _transient(), self._session() as session:
            row = session.run("SHOW SETTINGS YIELD name, value "
                              "WHERE name = 'db.tx_log.rotation.size' RETURN value").single()
            size = _bytes(str(row["value"])) if row else 2**20
            if size > limit:
                return 0
            pad = "-" * (size + 2**16)
            for _ in range(2):
                session.run("CREATE (:MemqLogFiller {pad: $pad})", pad=pad).consume()
                session.run("MATCH (f:MemqLogFiller) DELETE f").consume()
        return 2 * len(pad)

    # -- episodes: raw turns for BM25 (the full-text index memq_episode_text) -------------------
    def add_episodes(self, user_id: str, session_id: str, turns: Sequence[Turn],
                     now: datetime) -> int:
        if not turns:
            return 0
        key = recall.user_key(user_id)
        rows = []
        episode_ids = [ids.episode_id(user_id, turn_ref(session_id, t.turn_id)) for t in turns]
        for i, (t, near) in enumerate(zip(turns, recall.neighbors(episode_ids), strict=True)):
            ref = turn_ref(session_id, t.turn_id)
            previous = recall.replied_to(turns, i)
            rows.append({"id": episode_ids[i], "props": {
                "user_id": user_id, "user_key": key, "session_id": session_id, "ref": ref,
                "text": t.content, "role": t.role, "speaker": t.speaker,
                "search_text": recall.search_text(t.content, t.speaker, previous, t.timestamp),
                "neighbors": near,
                "metadata_json": json.dumps(t.metadata, ensure_ascii=False, sort_keys=True)
                if t.metadata else None,
                "event_at": _iso(t.timestamp), "created_at": _iso(now)}})
        self._run("add_episodes", episodes=rows)
        return len(rows)

    def latest_turn(self, user_id: str, prefix: str) -> dict[str, Any] | None:
        """The newest turn whose reference starts with ``prefix``: ref, text, metadata (a
        dict), created_at and event_at (datetimes); None when there is none."""
        rows = self._run("latest_episode", user_id=user_id, prefix=prefix)
        if not rows:
            return None
        row = rows[0]
        return {"ref": row["ref"], "text": row["text"],
                "metadata": json.loads(row["metadata"]) if row["metadata"] else {},
                "created_at": _time(row["created_at"]), "event_at": _time(row["event_at"])}

    def turn_refs(self, user_id: str, prefix: str) -> list[str]:
        return sorted(str(r["ref"]) for r in self._run("episode_refs", user_id=user_id,
                                                         prefix=prefix))

    def turn_metadata(self, user_id: str, refs: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The metadata the producer gave these turns (``<session>/<turn>``), those that had
        any."""
        if not refs:
            return {}
        wanted = sorted({ids.episode_id(user_id, ref) for ref in refs})
        return {str(r["ref"]): json.loads(r["metadata"]) for r in self._run(
            "turn_metadata", user_id=user_id, ids=wanted)}

    def episodes(self, user_id: str, refs: Sequence[str]) -> list[Hit]:
        """These turns of the user (``<session>/<turn>``), as stored, by event time; a ref
        that names no turn of the user is left out."""
        if not refs:
            return []
        wanted = sorted({ids.episode_id(user_id, ref) for ref in refs})
        return [_episode_hit(r) for r in self._run("episodes_by_ref", user_id=user_id,
                                                   ids=wanted)]

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        """These turns of the user by episode id, with their words (TextIndex.turns)."""
        if not episode_ids:
            return {}
        return {str(r["id"]): _episode_hit(r) for r in self._run(
            "episodes_by_ref", user_id=user_id, ids=sorted(set(episode_ids)))}

    def delete_episodes(self, user_id: str, refs: Sequence[str]) -> int:
        wanted = [ids.episode_id(user_id, ref) for ref in refs]
        if not wanted:
            return 0
        self.ensure_schema()
        with _transient(), self._session() as session:
            record = session.execute_write(lambda tx: tx.run(
                cypher("delete_episodes"), user_id=user_id, ids=wanted).single())
        return int(record["n"]) if record else 0

    def search_episodes(self, user_id: str, query: str, k: int, *,
                        field: str = "search_text") -> list[Hit]:
        """Up to k of the user's raw turns by BM25 (Lucene); none for a query of no words.
        ``field``: as searched (``search_text``), or ``text`` / ``text+speaker`` for plain
        keyword search over the raw turns (the benchmarks' baseline)."""
        lucene = recall.lucene_query(user_id, query, field=field)
        if lucene is None:
            return []
        return [_episode_hit(r) for r in
                self._run("episode_text", user_id=user_id, query=lucene, k=k)]

    def search_text(self, user_id: str, query: str, k: int
                    ) -> tuple[list[tuple[StoredMemory, float]], list[Hit], Changed]:
        """What search needs from the graph in one round trip: up to k memories and up to k
        raw turns by BM25 (as ``search_episodes``), and what is no longer true
        (``changed``)."""
        memory_query = recall.lucene_query(user_id, query, field="content")
        episode_query = recall.lucene_query(user_id, query)
        if memory_query is None or episode_query is None:  # no words: no BM25
            return [], [], self.changed(user_id)
        (row,) = self._run("search_text", user_id=user_id, memory_query=memory_query,
                           episode_query=episode_query, k=k)
        memories = [(stored_memory(r["m"]), float(r["score"]))
                    for r in sorted(row["memories"], key=lambda r: -r["score"])]
        episodes = [_episode_hit(r)
                    for r in sorted(row["episodes"], key=lambda r: -r["score"])]
        return memories, episodes, _changed(row)

    def turns_before(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        """The turn before each of these episodes in its session, by the episode's id."""
        if not episode_ids:
            return {}
        return {str(r["of"]): _episode_hit(r)
                for r in self._run("turns_before", user_id=user_id, ids=list(episode_ids))}

    def changed(self, user_id: str) -> Changed:
        """What is no longer true: superseded memories, the turns that stated them, and the
        current memory that holds each one's place now."""
        (row,) = self._run("superseded_sources", user_id=user_id)
        return _changed(row)

    # -- forgetting (workers.forget) -----------------------------------------------------------
    @staticmethod
    def _statements(name: str) -> list[str]:
        body = "\n".join(line for line in cypher(name).splitlines()
                         if not line.lstrip().startswith("//"))
        return [s for s in (part.strip() for part in body.split(";")) if s]

    def _write_counted(self, name: str, *, record_last: bool = True, **params: Any) -> int:
        """Every statement of ``cypher/<name>.cypher`` in one write transaction, fenced: the
        user's version moves on, so a plan made before it can never be applied after it.
        Returns the sum of the ``n`` each statement returns. ``record_last`` False: the last
        statement (a FORGET entry) runs only when the ones before it changed something."""
        self.ensure_schema()
        statements = self._statements(name)

        def work(tx: neo4j.ManagedTransaction) -> int:
            tx.run(cypher("fence_only"), user_id=params["user_id"], expected=None).consume()
            total = 0
            for i, statement in enumerate(statements):
                if i == len(statements) - 1 and not record_last and total == 0:
                    break
                record = tx.run(statement, params).single()
                total += int(record["n"] or 0) if record else 0
            return total

        with _transient(), self._session() as session:
            return session.execute_write(work)

    def forget_user(self, user_id: str, tombstone: AuditEntry, *,
                    changed_elsewhere: bool = False) -> int:
        """Delete the user's memories, facts and entities, strip the user's audit trail to
        tombstones and add ``tombstone`` (the FORGET entry) when anything of the user was
        there (here, or in another store: ``changed_elsewhere``). The user's version moves on
        first (a fenced transaction); then each step runs in bounded transactions of its own,
        so a user of any size is forgotten at the default heap. Returns the nodes and edges
        deleted plus the audit entries stripped."""
        self.ensure_schema()
        params = {"user_id": user_id, "tombstone": _audit_row(tombstone, 0)}
        total = 0
        with _transient(), self._session() as session:
            session.execute_write(lambda tx: tx.run(
                cypher("fence_only"), user_id=user_id, expected=None).consume())
            statements = self._statements("forget_user")
            for i, statement in enumerate(statements):
                if i == len(statements) - 1 and total == 0 and not changed_elsewhere:
                    break  # nothing of the user anywhere: no FORGET entry (idempotent)
                record = session.run(statement, params).single()  # auto-commit: chunked
                total += int(record["n"] or 0) if record else 0
        return total

    def forget_memory(self, user_id: str, memory_id: str, tombstone: AuditEntry, *,
                      changed_elsewhere: bool = False) -> int:
        """The same for one memory: its node, its facts, the user's entities no fact references
        any more; its audit entries become tombstones; the FORGET entry when the memory was
        there (a second request, or one for an id that never existed, writes none). One
        transaction."""
        return self._write_counted("forget_memory", record_last=changed_elsewhere,
                                   user_id=user_id, memory_id=memory_id,
                                   tombstone=_audit_row(tombstone, 0))
