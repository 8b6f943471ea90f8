"""A user's graph as a whole: listing users, copying one to another instance (a shard move),
deleting one, forgetting one or one memory (fenced, audited as tombstones), and pushing a
forget's before-images out of the transaction log.
"""

from __future__ import annotations

from ....schemas import AuditEntry
from ...errors import PermanentError
from .records import _audit_row
from .session import Neo4jSession, _transient, cypher

_UNITS = {"B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "K": 2**10, "M": 2**20,
          "G": 2**30, "KB": 10**3, "MB": 10**6, "GB": 10**9}


def _bytes(value: str) -> int:
    """A Neo4j byte setting as SHOW SETTINGS prints it ("1.00MiB", "256M") in bytes."""
    text = value.strip().upper().replace(" ", "")
    number = text.rstrip("KMGIB")
    return int(float(number) * _UNITS.get(text[len(number):] or "B", 1))


COPIED_LABELS = frozenset({"User", "Memory", "Entity", "Episode", "Audit"})  # import_user
COPIED_TYPES = frozenset({"FACT", "HAS_MEMORY", "ABOUT", "AUDITED", "SUPERSEDED_BY",
                          "DERIVED_FROM"})


class Neo4jUsers(Neo4jSession):
    """Whole users: GraphStore.delete_user, shard moves, forgetting."""

    def copy_user(self, user_id: str, target: Neo4jSession) -> int:
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
