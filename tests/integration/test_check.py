"""memq check / --repair on the real stores: drift is planted straight into Chroma and Neo4j
(no mocks), found, repaired from the durable record, and gone afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import neo4j
import pytest

from integration.conftest import (
    NEO4J_URI,
    demo_lines,
    memq,
    memq_json,
    stored,
    user_collection,
    wait_done,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("worker")]

PM = "The user is a product manager."
BRIEF = "用户喜欢简洁的回答。"
CENTOS = "The user's production environment is CentOS 7."
UBUNTU = "The user's production environment is Ubuntu 22.04."


@pytest.fixture
def graph() -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(NEO4J_URI)
    yield driver
    driver.close()


def _write(driver: neo4j.Driver, query: str, **params: Any) -> int:
    with driver.session() as session:
        record = session.execute_write(lambda tx: tx.run(query, params).single())
    return int(record["n"]) if record else 0


def _check(*args: str) -> tuple[int, str]:
    res = memq("check", *args, check=False)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return res.returncode, res.stdout


def _searchable(user: str, memory_id: str, query: str, k: int = 10) -> bool:
    hits = memq_json("search", "--user", user, "--k", str(k), "--no-record", query)
    return any(h["id"] == memory_id and h["type"] == "memory" for h in hits)


def _everything(user: str) -> tuple[Any, ...]:
    return (memq_json("memories", "--user", user, "--all"), memq_json("audit", "--user", user),
            memq_json("facts", "--user", user))


def test_check_finds_and_repairs_planted_drift(user_id: str, graph: neo4j.Driver) -> None:
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    rc, out = _check("--user", user_id)
    assert rc == 0, out
    assert out.strip() == "no drift in 5 memories of 1 users"
    before = memq_json("memories", "--user", user_id, "--all")
    mid = {m["content"]: m["id"] for m in before}
    assert _searchable(user_id, mid[PM], "what is the user's job?")

    # (a) a memory's record vanishes from Chroma
    user_collection(stored(user_id)).delete(ids=[mid[PM]])
    # (b) a Memory node claims another status, updated_at untouched
    assert _write(graph, "MATCH (m:Memory {id: $id}) SET m.status = $status RETURN count(m) AS n",
                  id=mid[BRIEF], status="archived") == 1
    # (c) the superseded CentOS memory's FACT edge is open again
    assert _write(graph, "MATCH ()-[r:FACT]->() WHERE r.user_id = $user AND r.memory_id = $id "
                         "SET r.expired_at = null, r.invalid_at = null RETURN count(r) AS n",
                  user=stored(user_id), id=mid[CENTOS]) == 1
    # (d) the Ubuntu Memory node is gone from the graph
    assert _write(graph, "MATCH (m:Memory {id: $id}) DETACH DELETE m RETURN count(*) AS n",
                  id=mid[UBUNTU]) == 1
    # Still found by its words: search also finds memories by BM25 over the graph (the state
    # of record), which a lost vector record does not touch; check names the drift all the
    # same. Found, not ranked as before: with one of its two signals gone it scores below the
    # memories that keep both, so the whole list is asked for (13 candidates, k = 20).
    assert _searchable(user_id, mid[PM], "is the user a product manager?", k=20)

    rc, out = _check("--user", user_id)
    assert rc == 1
    for content, kind in ((PM, "missing_in_index"), (BRIEF, "differs"),
                          (CENTOS, "stale_facts"), (UBUNTU, "missing_in_graph")):
        assert f"{kind} {mid[content]} of {stored(user_id)}" in out, out
    assert "status: graph='archived' record='current'" in out
    res = memq("check", "--user", user_id, "--json", check=False)  # exits 1: drift
    assert res.returncode == 1
    report = json.loads(res.stdout)
    kinds = {d["memory_id"]: (d["kind"], d["source"], d["repairable"]) for d in report["drift"]}
    assert kinds == {
        mid[PM]: ("missing_in_index", "graph", True),
        mid[BRIEF]: ("differs", "audit", True),
        mid[CENTOS]: ("stale_facts", "graph", True),
        mid[UBUNTU]: ("missing_in_graph", "audit", True),
    }
    # Every user at once names them too.
    rc, out = _check()
    assert rc == 1 and all(mid[c] in out for c in (PM, BRIEF, CENTOS, UBUNTU)), out[-3000:]

    rc, out = _check("--user", user_id, "--repair")
    assert rc == 0, out
    assert out.count("repaired ") == 4 and "remains" not in out
    rc, out = _check("--user", user_id)
    assert rc == 0 and out.strip() == "no drift in 5 memories of 1 users", out

    # The restored records are the ones written by the pipeline, searchable again.
    assert memq_json("memories", "--user", user_id, "--all") == before
    assert _searchable(user_id, mid[PM], "what is the user's job?")
    facts = {f["object"]: f for f in memq_json("facts", "--user", user_id)
             if f["predicate"] == "production_environment"}
    assert facts["CentOS 7"]["expired_at"] is not None
    assert facts["CentOS 7"]["invalid_at"] is not None
    assert facts["Ubuntu 22.04"]["expired_at"] is None
    repairs = [e for e in memq_json("audit", "--user", user_id) if e["operation"] == "repair"]
    # the graph's repairs are audited; the index's (PM) is a re-index, no change of state
    assert {e["memory_id"] for e in repairs} == {mid[c] for c in (BRIEF, CENTOS, UBUNTU)}
    assert all(e["after"]["id"] == e["memory_id"] for e in repairs)

    # Repairing again changes nothing.
    state = _everything(user_id)
    rc, out = _check("--user", user_id, "--repair")
    assert rc == 0 and out.strip() == "no drift in 5 memories of 1 users", out
    assert _everything(user_id) == state


def test_unrepairable_drift_keeps_exit_code_one(user_id: str, graph: neo4j.Driver) -> None:
    """A damaged Memory node with no audit snapshot: nothing to restore it from."""
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    orphan = f"m_orphan_{user_id}"
    assert _write(graph, "MATCH (u:User {id: $user}) "
                         "CREATE (u)-[:HAS_MEMORY]->(m:Memory {id: $id, user_id: $user, "
                         "status: 'current', content: 'An orphan.', valid_at: datetime(), "
                         "updated_at: datetime()}) RETURN count(m) AS n",
                  user=stored(user_id), id=orphan) == 1
    try:
        rc, out = _check("--user", user_id, "--repair")
        assert rc == 1
        assert f"remains  differs {orphan} of {stored(user_id)}" in out, out
        assert "unrepairable: a damaged node, and no audit snapshot of its version" in out
        rc, out = _check("--user", user_id)
        assert rc == 1 and orphan in out
    finally:
        _write(graph, "MATCH (m:Memory {id: $id}) DETACH DELETE m RETURN count(*) AS n",
               id=orphan)
    rc, out = _check("--user", user_id)
    assert rc == 0, out


def test_reads_come_from_the_state_of_record_when_chroma_trails(user_id: str) -> None:
    """A drain that died between its graph commit and its Chroma write leaves Chroma behind
    the graph until the user's next batch: what an agent lists is the graph's, unchanged."""
    from memq.workers.api import Client

    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    before = memq_json("memories", "--user", user_id, "--all")
    mid = {m["content"]: m["id"] for m in before}
    user_collection(stored(user_id)).delete(ids=[mid[PM]])  # the projection lost a memory
    assert memq_json("memories", "--user", user_id, "--all") == before
    listed = Client().memories(user_id)
    assert PM in [m.content for m in listed]
    assert _check("--user", user_id)[0] == 1  # the drift is there: memq check finds it
    assert _check("--user", user_id, "--repair")[0] == 0
    assert _check("--user", user_id)[0] == 0


def test_repair_rebuilds_a_lost_index_from_the_graph(user_id: str) -> None:
    """The whole of a user's memory index gone (a Chroma volume lost): --repair writes it again
    from the graph, re-embedding, and dense search finds the memories again."""
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    listed = memq_json("memories", "--user", user_id, "--all")
    mid = {m["content"]: m["id"] for m in listed}
    user_collection(stored(user_id)).drop()
    assert _check("--user", user_id)[0] == 1  # (search still finds them by BM25: the graph)
    assert _check("--user", user_id, "--repair")[0] == 0
    assert _check("--user", user_id)[0] == 0
    assert user_collection(stored(user_id)).count() == len(listed)
    assert _searchable(user_id, mid[PM], "what is the user's job?")


def test_index_records_the_graph_does_not_vouch_for_are_rewritten(user_id: str) -> None:
    """An index record with no content hash (as a build before the layout wrote it), and one
    of no memory at all: check names both, and --repair rewrites the index from the graph."""
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    listed = memq_json("memories", "--user", user_id, "--all")
    mid = {m["content"]: m["id"] for m in listed}
    col = user_collection(stored(user_id))
    got = col.get(ids=[mid[PM]], include=["embeddings"])
    col.delete(ids=[mid[PM]])  # (an upsert would merge the metadata into the record's)
    col.add(ids=[mid[PM], "m_stray"], embeddings=[got["embeddings"][0]] * 2,
               metadatas=[{"user_id": stored(user_id), "status": "current", "kind": "fact"}] * 2)
    rc, out = _check("--user", user_id)
    assert rc == 1 and f"index_differs {mid[PM]} of {stored(user_id)}" in out, out
    assert f"not_in_graph m_stray of {stored(user_id)}" in out, out
    assert _check("--user", user_id, "--repair")[0] == 0
    assert _check("--user", user_id)[0] == 0
    assert "m_stray" not in col.get(ids=["m_stray"])["ids"]
    assert memq_json("memories", "--user", user_id, "--all") == listed
    assert _searchable(user_id, mid[PM], "what is the user's job?")
