"""Lifecycle jobs on the real stores with controlled time (--now): decay, recall, expiry,
consolidation, capacity, re-embedding and the beat fan-out through a real worker."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import redis
from fakellm import FakeLLM

from integration.conftest import (
    CHROMA_PORT,
    NEO4J_URI,
    REDIS_BASE,
    memq,
    memq_env,
    memq_json,
    start_worker,
    stored,
    user_collection,
    wait_done,
)
from memq.pipeline.adapters.chroma import LEGACY_CONSOLIDATED, ChromaStores, episode_fields
from memq.pipeline.adapters.neo4j.store import Neo4jGraph

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("worker")]


def _ingest(user: str, *texts: str, start: str = "2026-03-01T09:00:00+00:00") -> None:
    t0 = datetime.fromisoformat(start)
    lines = [json.dumps({"user_id": user, "session_id": "s1", "turn_id": f"t{i}",
                         "role": "user", "content": text,
                         "timestamp": (t0 + timedelta(minutes=i)).isoformat()})
             for i, text in enumerate(texts)]
    memq("enqueue", "-", stdin="\n".join(lines) + "\n")
    wait_done()


def _by_content(user: str) -> dict[str, dict]:
    return {m["content"]: m for m in memq_json("memories", "--user", user, "--all")}


def _marks(user: str) -> dict[str, str | None]:
    """The user's turns in the graph: each one's text and consolidation mark (the memory it
    was consolidated into)."""
    import neo4j

    with neo4j.GraphDatabase.driver(NEO4J_URI) as driver, driver.session() as session:
        return {str(r["text"]): r["into"] for r in session.run(
            "MATCH (e:Episode {user_id: $user}) RETURN e.text AS text, "
            "e.consolidated_into AS into", user=stored(user))}


RUNS = ("Long run by the river this morning, felt great.",
        "Another long run by the river this morning.",
        "Did my long run by the river again this morning.")


def _at(memories: dict[str, dict], days: float) -> str:
    latest = max(datetime.fromisoformat(m["created_at"]) for m in memories.values())
    return (latest + timedelta(days=days)).isoformat()


def test_decay_archives_exactly_what_the_formula_says(user_id: str) -> None:
    _ingest(user_id, "I'm a product manager.", "I like jazz.", "We use Terraform.")
    before = _by_content(user_id)
    now = _at(before, 33)
    t = datetime.fromisoformat(now)
    expected = {c for c, m in before.items() if m["importance"] * 0.95 ** (
        (t - datetime.fromisoformat(m["created_at"])).total_seconds() / 86400) < 0.1}
    assert expected == {"The user's team uses Terraform."}  # 0.5 decays first
    out = memq("run", "decay", "--user", user_id, "--now", now).stdout
    assert "changed 1" in out
    after = _by_content(user_id)
    assert {c for c, m in after.items() if m["status"] == "archived"} == expected
    archived = after["The user's team uses Terraform."]
    entries = memq_json("audit", "--user", user_id, "--memory", archived["id"])
    assert [e["operation"] for e in entries] == ["add", "archive"]
    assert "changed 0" in memq("run", "decay", "--user", user_id, "--now", now).stdout
    hits = memq_json("search", "--user", user_id, "--no-record", "terraform")
    assert archived["id"] not in {h["id"] for h in hits}  # archived: out of search


def test_recalled_memory_outlives_its_unrecalled_twin(user_id: str) -> None:
    _ingest(user_id, "I like jazz.", "I like hiking.")
    memories = _by_content(user_id)
    assert memq_json("search", "--user", user_id, "--k", "1", "--now", _at(memories, 20),
                     "jazz music")  # a look: read-only
    assert all(m["last_accessed_at"] is None for m in _by_content(user_id).values())
    hits = memq_json("search", "--user", user_id, "--k", "2", "--now", _at(memories, 20),
                     "--record", "jazz music")  # the agent acts on it: a recall
    assert all("jazz" in h["content"] for h in hits)  # the memory and the turn it came from
    seen = {c: m["last_accessed_at"] for c, m in _by_content(user_id).items()}
    assert seen["The user likes jazz."] is not None  # the top memory was recalled...
    assert seen["The user likes hiking."] is None  # ...its twin was not
    jazz = memories["The user likes jazz."]["id"]
    (entry,) = [e for e in memq_json("audit", "--user", user_id, "--memory", jazz)
                if e["operation"] == "recall"]  # the boost is audited: what changed, when
    assert entry["before"]["last_accessed_at"] is None
    assert datetime.fromisoformat(entry["after"]["last_accessed_at"]) == datetime.fromisoformat(
        seen["The user likes jazz."])
    now_stored = _by_content(user_id)["The user likes jazz."]
    assert entry["before"]["importance"] == memories["The user likes jazz."]["importance"]
    assert entry["after"]["importance"] == now_stored["importance"]  # decayed value + boost
    memq("run", "decay", "--user", user_id, "--now", _at(memories, 40))
    status = {c: m["status"] for c, m in _by_content(user_id).items()}
    assert status == {"The user likes jazz.": "current", "The user likes hiking.": "archived"}


def test_expiry_by_kind(user_id: str) -> None:
    _ingest(user_id, "We use Terraform.", "I like jazz.")
    memories = _by_content(user_id)
    env = memq_env(MEMQ_TTL_DAYS='{"fact": 10}')
    out = memq("run", "expire", "--user", user_id, "--now", _at(memories, 400), env=env)
    assert "changed 1" in out.stdout
    status = {c: m["status"] for c, m in _by_content(user_id).items()}
    assert status == {"The user's team uses Terraform.": "archived",
                      "The user likes jazz.": "current"}  # preferences never expire


def test_consolidation_needs_three_and_runs_once(user_id: str) -> None:
    # (turns the rules read nothing in: a diary's "Went for …" is a memory of its own)
    _ingest(user_id, RUNS[0], "Baked sourdough bread today.", RUNS[1],
            "Baked another sourdough loaf today.", RUNS[2])
    assert _by_content(user_id) == {}  # nothing the rules extract: episodes only
    assert "changed 1" in memq("run", "consolidate", "--user", user_id).stdout
    (semantic,) = _by_content(user_id).values()
    assert "long run by the river" in semantic["content"].casefold()  # any of the three
    assert len(semantic["derived_from"]) == 3  # the three runs, not the two loaves
    assert [e["operation"] for e in memq_json("audit", "--user", user_id)] == ["consolidate"]
    # which turns were consolidated, and into what, is the graph's; Chroma holds no mark
    assert {t: into for t, into in _marks(user_id).items() if into} == dict.fromkeys(
        RUNS, semantic["id"])
    records = user_collection(stored(user_id), "memq_episodes").get()["metadatas"]
    assert len(records) == 5
    assert not any(LEGACY_CONSOLIDATED in m or LEGACY_CONSOLIDATED in episode_fields(m)
                   for m in records)
    assert "changed 0" in memq("run", "consolidate", "--user", user_id).stdout
    assert len(_by_content(user_id)) == 1


def test_a_turn_an_old_record_marks_is_not_consolidated_again(user_id: str) -> None:
    """Chroma records written before the graph held consolidation's state carry its mark: the
    job leaves those turns out and the graph takes the mark; forgetting takes it with them."""
    _ingest(user_id, *RUNS)
    episodes = user_collection(stored(user_id), "memq_episodes")
    ids_ = episodes.get(include=[])["ids"]
    assert len(ids_) == 3
    # what those builds wrote: a top-level key, by a partial update
    episodes.col.update(ids=ids_, metadatas=[{LEGACY_CONSOLIDATED: "m_before"}] * 3)
    assert "changed 0" in memq("run", "consolidate", "--user", user_id).stdout
    assert _by_content(user_id) == {}  # not consolidated twice
    assert _marks(user_id) == dict.fromkeys(RUNS, "m_before")
    memq("forget", "--user", user_id)
    assert _marks(user_id) == {}


def test_consolidation_adds_no_duplicate_and_no_timeline_fact(user_id: str) -> None:
    _ingest(user_id, "I like jazz.", "I live in Lisbon.", "I like jazz.", "I live in Lisbon.",
            "I like jazz.", "I live in Lisbon.", "I moved to Porto.")
    before = _by_content(user_id)
    memq("run", "consolidate", "--user", user_id)
    after = _by_content(user_id)
    assert sorted(after) == sorted(before)  # the jazz summary is the memory we have
    assert all(m["triples"] for m in after.values())
    current = [c for c, m in after.items() if m["status"] == "current" and "live" in c]
    assert len(current) <= 1  # no second current home from a summary of old turns


def test_consolidation_profiles_a_named_persons_topic_over_sessions(user_id: str) -> None:
    """Multi-party chat: Audrey's memories of one topic, told in two sessions, become one
    profile in her name, DERIVED_FROM them and citing their turns; a run on the same memories
    changes nothing; her cake stays out, and so does Jon's course."""
    said = [("s1", "Audrey", "I took a dog training course last week."),
            ("s1", "Jon", "I took a pottery course last week."),
            ("s2", "Audrey", "I took a dog grooming course with my pups."),
            ("s2", "Audrey", "I baked a lemon cake for my neighbours.")]
    t0 = datetime.fromisoformat("2026-03-01T09:00:00+00:00")
    lines = [json.dumps({"user_id": user_id, "session_id": sid, "turn_id": f"t{i}",
                         "role": "user", "speaker": who, "content": text,
                         "timestamp": (t0 + timedelta(days=7 * int(sid[1:]), minutes=i)
                                       ).isoformat()})
             for i, (sid, who, text) in enumerate(said)]
    memq("enqueue", "-", stdin="\n".join(lines) + "\n")
    wait_done()
    before = _by_content(user_id)
    assert "changed 1" in memq("run", "consolidate", "--user", user_id).stdout
    (profile,) = [m for m in _by_content(user_id).values() if m["derived_from"]]
    courses = sorted(c for c in before if c.startswith("Audrey took a dog"))
    assert len(courses) == 2
    assert sorted(before[c]["id"] for c in courses) == sorted(profile["derived_from"])
    assert profile["content"].startswith("Audrey: took a dog training course")
    assert profile["source_turn_ids"] == ["s1/t0", "s2/t2"]
    assert profile["triples"][0]["subject"] == "Audrey"
    audit = memq_json("audit", "--user", user_id, "--memory", profile["id"])
    assert [e["operation"] for e in audit] == ["consolidate"]
    assert "changed 0" in memq("run", "consolidate", "--user", user_id).stdout
    hits = memq_json("search", "--user", user_id, "--k", "8", "--no-record",
                     "what courses has Audrey taken for her dogs?")
    # found for the question both its members answer (its members' turns are lifted beside it)
    assert profile["id"] in [h["id"] for h in hits if h["type"] == "memory"]


def test_capacity_archives_the_lowest(user_id: str) -> None:
    _ingest(user_id, "I'm a product manager.", "I like jazz.", "We use Terraform.",
            "I live in Lisbon.")
    out = memq("run", "capacity", "--user", user_id, env=memq_env(MEMQ_CAPACITY="2"))
    assert "changed 2" in out.stdout
    status = {c: m["status"] for c, m in _by_content(user_id).items()}
    # importance x confidence: role 0.8, lives_in 0.7 kept; likes 0.6, uses 0.5 archived
    assert status == {"The user is a product manager.": "current",
                      "The user lives in Lisbon.": "current",
                      "The user likes jazz.": "archived",
                      "The user's team uses Terraform.": "archived"}


def test_reembed_leaves_no_mixed_model_user(user_id: str) -> None:
    _ingest(user_id, "I like jazz.", "We use Terraform.")
    with FakeLLM() as fake:
        env = memq_env(MEMQ_EMBEDDER="openai", MEMQ_EMBED_BASE_URL=fake.base_url,
                       MEMQ_EMBED_MODEL="fake-embed")
        # not migrated yet: the user is searched with the model of its vectors
        before = json.loads(memq("search", "--user", user_id, "--json", "--no-record",
                                 "jazz", env=env).stdout)
        assert before[0]["content"] in ("The user likes jazz.", "I like jazz.")
        memq("run", "reembed", "--user", user_id, env=env)
        # all of the user's vectors now live in the new model's collections
        assert _models(user_id) == {"memq_memories": {"openai:fake-embed"},
                                    "memq_episodes": {"openai:fake-embed"}}
        got = user_collection(stored(user_id), "memq_episodes", "openai:fake-embed").get()
        assert got["ids"] and {episode_fields(m)["embedding_model"]
                               for m in got["metadatas"]} == {"openai:fake-embed"}
        after = json.loads(memq("search", "--user", user_id, "--json", "--no-record",
                                "I like jazz.", env=env).stdout)
        assert "jazz" in after[0]["content"]
    # the graph took its states from Chroma: Chroma is projected up to the graph's version,
    # so the next job's catch_up has nothing to compare or rewrite
    graph = Neo4jGraph(NEO4J_URI)
    try:
        v = graph.version(stored(user_id))
    finally:
        graph.close()
    assert v.version > 0 and v.projected == v.version, v


def _models(user: str) -> dict[str, set[str]]:
    """Kind -> the embedding models of the places that hold the user's records (memories and
    episodes): each model's vectors live in collections of its own."""
    placement = ChromaStores.connect("127.0.0.1", CHROMA_PORT).placement(stored(user))
    return {base: {model for model, _, n in places if n}
            for base, places in placement.items() if any(n for _, _, n in places)}


def test_a_user_keeps_its_model_for_writes_until_reembedded(user_id: str,
                                                            tmp_path: Path) -> None:
    """The configured model changed: a user written before keeps writing with the model of
    its vectors (nothing dead-lettered, nothing mixed), a new user takes the new model, and
    reembed moves the old user over."""
    _ingest(user_id, "I like jazz.")  # the suite's worker: the default local model
    (old_model,) = set().union(*_models(user_id).values())
    assert old_model.startswith("all-MiniLM-L6-v2")
    newcomer = f"{user_id}-new"
    url = f"{REDIS_BASE}/14"  # a broker db of this test's own: the suite's worker stays out
    redis.Redis.from_url(url).flushdb()
    with FakeLLM() as fake:
        env = memq_env(MEMQ_REDIS_URL=url, MEMQ_EMBEDDER="openai",
                       MEMQ_EMBED_BASE_URL=fake.base_url, MEMQ_EMBED_MODEL="fake-embed")
        other = start_worker(tmp_path, "other-model", concurrency=1, env=env)
        try:
            lines = [json.dumps({"user_id": u, "session_id": "s2", "turn_id": "t1",
                                 "role": "user", "content": text,
                                 "timestamp": "2026-03-02T09:00:00+00:00"})
                     for u, text in ((user_id, "We use Terraform."), (newcomer, "I like tea."))]
            ids = memq("enqueue", "-", "--json", stdin="\n".join(lines) + "\n",
                       env=env).stdout
            delivered = [p["delivery_id"] for p in json.loads(ids)["published"]]
            waits = [arg for d in delivered for arg in ("--delivery", d)]
            memq("wait", "--timeout", "120", *waits, env=env)  # exit 1 if one was dead-lettered
            assert set().union(*_models(user_id).values()) == {old_model}
            assert set().union(*_models(newcomer).values()) == {"openai:fake-embed"}
            memories = {m["content"] for m in json.loads(
                memq("memories", "--user", user_id, "--json", env=env).stdout)}
            assert {"The user likes jazz.", "The user's team uses Terraform."} <= memories
            memq("run", "reembed", "--user", user_id, env=env)
            assert set().union(*_models(user_id).values()) == {"openai:fake-embed"}
        finally:
            other.stop()


def test_reembed_from_minilm_alone_to_the_default_that_reads_chinese(user_id: str,
                                                                     tmp_path: Path) -> None:
    """An upgrade: a user written under the old default (int8-w8a7: MiniLM-L6 alone) keeps
    it until ``memq run reembed`` moves every vector to the default (int8-w8a7+use); then a
    Chinese question finds its Chinese turn by meaning."""
    from memq.pipeline.adapters.embed_local import MODEL_ID, MODEL_IDS

    url = f"{REDIS_BASE}/13"  # a broker db of this test's own: the suite's worker stays out
    redis.Redis.from_url(url).flushdb()
    old = memq_env(MEMQ_REDIS_URL=url, MEMQ_LOCAL_MODEL="int8-w8a7")
    worker = start_worker(tmp_path, "old-default", concurrency=1, env=old)
    try:
        lines = [json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": f"t{i}",
                             "role": "user", "content": text,
                             "timestamp": f"2026-03-01T09:0{i}:00+00:00"})
                 for i, text in enumerate(["I like jazz.", "我家那只橘猫最近老掉毛。",
                                           "周末去西湖边骑了一圈自行车。"])]
        published = json.loads(memq("enqueue", "-", "--json", stdin="\n".join(lines) + "\n",
                                    env=old).stdout)["published"]
        waits = [arg for p in published for arg in ("--delivery", p["delivery_id"])]
        memq("wait", "--timeout", "120", *waits, env=old)
    finally:
        worker.stop()
    assert set().union(*_models(user_id).values()) == {MODEL_IDS["int8-w8a7"]}
    memq("run", "reembed", "--user", user_id)  # the default's model
    assert set().union(*_models(user_id).values()) == {MODEL_ID}
    hits = json.loads(memq("search", "--user", user_id, "--json", "--no-record", "--k", "3",
                           "谁的宠物在换毛？").stdout)
    assert "橘猫" in hits[0]["content"], hits


def test_beat_fanout_runs_the_job_per_user_on_a_worker(user_id: str) -> None:
    from memq.workers import app as app_module
    from memq.workers import lifecycle

    schedule = app_module.beat_schedule()
    assert app_module.app.conf.beat_schedule == schedule
    assert sorted(schedule) == ["memq-capacity", "memq-consolidate", "memq-decay",
                                "memq-expire", "memq-relocate"]
    _ingest(user_id, "We use Terraform.")
    now = _at(_by_content(user_id), 60)
    lifecycle.app.conf.broker_url = memq_env()["MEMQ_REDIS_URL"]
    lifecycle.fanout.delay("decay", now)  # what beat sends; the worker fans out per user
    # every user of the tests' store gets its run: after a long suite (a store kept from
    # earlier runs) this user's may come minutes later
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if {m["status"] for m in _by_content(user_id).values()} == {"archived"}:
            return
        time.sleep(0.5)
    pytest.fail("the fanned-out decay did not archive the user's memory")
