"""One contract, two implementations: the shipped in-memory stores (pipeline.testing) and the
real adapters (Neo4j and Chroma, the tests' own instances) must behave the same where the core
relies on it: the lexical and the vector index search needs (TextIndex, VectorIndex), the
graph's version fence, and consolidation's state of the turns (the graph's; the index gives
vectors). Scores differ (Lucene's BM25, HNSW); sets, order and scoping must not."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from integration.conftest import CHROMA_PORT, NEO4J_URI
from memq.pipeline import ids, jobs, recall, service
from memq.pipeline.errors import StaleVersion
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import Kind, Status, StoredMemory, Turn, turn_ref

pytestmark = pytest.mark.integration

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
EMBED = HashEmbedder()


@dataclass
class Backend:
    name: str
    text: Any  # TextIndex
    vectors: Any  # VectorIndex
    graph: Any  # version, apply, read_memories
    add_turns: Any
    add_memory: Any
    users: list[str]
    # (user, episode id, memory id): the turn's index record as builds before the graph held
    # consolidation's state left it, marked consolidated
    legacy_mark: Any = None


def _fake() -> Backend:
    index, graph = InMemoryIndex(), FencedGraph()

    def add_memory(m: StoredMemory, vector: list[float]) -> None:
        graph.apply(m.user_id, [m], [], NOW, expected=None)
        index.upsert([m], [vector])

    def add_turns(u: str, s: str, turns: list[Turn], vectors: list[list[float]],
                  passages: list[list[list[float]]] | None = None) -> None:
        graph.add_episodes(u, s, turns, NOW)
        index.add(u, s, turns, vectors, EMBED.model_id, NOW, passages or ())

    return Backend("fake", index, index, graph, add_turns, add_memory, [], index.legacy_mark)


def _real(services: None) -> Backend:
    from memq.pipeline.adapters.chroma import EPISODES, LEGACY_CONSOLIDATED, ChromaStores
    from memq.pipeline.adapters.neo4j.store import Neo4jGraph

    graph, chroma = Neo4jGraph(NEO4J_URI), ChromaStores.connect("127.0.0.1", CHROMA_PORT)

    def add_turns(u: str, s: str, turns: list[Turn], vectors: list[list[float]],
                  passages: list[list[list[float]]] | None = None) -> None:
        graph.add_episodes(u, s, turns, NOW)
        chroma.add(u, s, turns, vectors, EMBED.model_id, NOW, passages or ())

    def add_memory(m: StoredMemory, vector: list[float]) -> None:
        graph.apply(m.user_id, [m], [], NOW, expected=None)
        chroma.upsert([m], [vector])

    def legacy_mark(u: str, episode_id: str, into: str) -> None:
        # what those builds wrote: a top-level key, by a partial update
        chroma._update(EPISODES, u, EMBED.model_id, [episode_id],
                       [{LEGACY_CONSOLIDATED: into}])

    return Backend("real", graph, chroma, graph, add_turns, add_memory, [], legacy_mark)


@pytest.fixture(params=["fake", "real"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "fake":
        yield _fake()
        return
    b = _real(request.getfixturevalue("services"))
    yield b
    from memq.pipeline.adapters.chroma import ChromaStores

    chroma = ChromaStores.connect("127.0.0.1", CHROMA_PORT)
    for user in b.users:
        b.graph.delete_user(user)
        chroma.delete_user(user)


def _user(b: Backend) -> str:
    user = f"t-contract-{uuid.uuid4().hex[:8]}"
    b.users.append(user)
    return user


def _turns(b: Backend, user: str, texts: list[str], session: str = "s1") -> list[str]:
    turns = [Turn(turn_id=f"t{i}", role="user", content=t,
                  timestamp=NOW - timedelta(days=2, minutes=-i)) for i, t in enumerate(texts)]
    b.add_turns(user, session, turns, EMBED.embed([t.content for t in turns]))
    return [ids.episode_id(user, turn_ref(session, t.turn_id)) for t in turns]


def _memory(user: str, content: str, refs: list[str], status: Status = Status.CURRENT,
            valid: datetime = NOW - timedelta(days=2),
            invalid: datetime | None = None) -> StoredMemory:
    return StoredMemory(id=ids.memory_id(user, content, refs), user_id=user, content=content,
                        kind=Kind.FACT, confidence=0.9, importance=0.7, source_turn_ids=refs,
                        valid_at=valid, invalid_at=invalid, status=status, created_at=valid,
                        updated_at=valid, embedding_model=EMBED.model_id)


def test_lexical_search_is_per_user_best_first_and_bounded(backend: Backend) -> None:
    a, b = _user(backend), _user(backend)
    ids_a = _turns(backend, a, ["I keep bees in the garden.", "The garden has roses.",
                                "I had tea.", "Bees and more bees, bees everywhere."])
    _turns(backend, b, ["I keep bees too."])
    _, episodes, _ = backend.text.search_text(a, "bees", 10)
    assert {h.id for h in episodes} == {ids_a[0], ids_a[3]}  # never b's
    assert episodes[0].id == ids_a[3]  # the turn that says it most
    assert [h.score for h in episodes] == sorted((h.score for h in episodes), reverse=True)
    assert len(backend.text.search_text(a, "garden bees roses", 1)[1]) == 1
    assert backend.text.search_text(a, "what do I", 10)[:2] == ([], [])  # question words only


def test_a_title_is_found_by_its_abbreviation(backend: Backend) -> None:
    user = _user(backend)
    seen = _turns(backend, user, ["I saw Dr. Patel about my sinuses.", "I had tea."])
    _, episodes, _ = backend.text.search_text(user, "Which doctors did I visit?", 10)
    assert [h.id for h in episodes] == [seen[0]]


def test_lexical_search_of_memories_and_what_is_no_longer_true(backend: Backend) -> None:
    user = _user(backend)
    refs = [turn_ref("s1", "t0"), turn_ref("s1", "t1")]
    new = _memory(user, "The user's production environment is Ubuntu 22.04.", refs[1:])
    old = _memory(user, "The user's production environment is CentOS 7.", refs[:1],
                  status=Status.SUPERSEDED, invalid=NOW - timedelta(days=1)
                  ).with_changes(superseded_by=new.id)
    archived = _memory(user, "The user's production printer is broken.", refs[:1],
                       status=Status.ARCHIVED)
    for m in (old, new, archived):
        backend.add_memory(m, EMBED.embed([m.content])[0])
    memories, _, changed = backend.text.search_text(user, "production environment", 10)
    assert {m.id for m, _ in memories} == {old.id, new.id}  # archived ones are not recalled
    # what is no longer true, and what holds its place now (also for a query of no words)
    assert (changed.refs, changed.memories) == ({refs[0]: new.id}, {old.id: new.id})
    assert {i: m.content for i, m in changed.current.items()} == {new.id: new.content}
    assert backend.text.search_text(user, "what is my", 10)[2] == changed


def test_vector_search_is_per_user_and_per_model(backend: Backend) -> None:
    a, b = _user(backend), _user(backend)
    ids_a = _turns(backend, a, ["I keep bees in the garden.", "I had tea in the morning."])
    _turns(backend, b, ["I keep bees in the garden."])
    query = EMBED.embed(["bees in the garden"])[0]
    hits = backend.vectors.search(a, query, EMBED.model_id, 5)
    assert [h.id for h in hits] == ids_a  # nearest first, only a's
    assert hits[0].score > hits[1].score
    assert backend.vectors.search(a, query, "another-model", 5) == []
    assert len(backend.vectors.search(a, query, EMBED.model_id, 1)) == 1
    same = backend.vectors.cosines(a, [ids_a[0], "e_not_there"], EMBED.embed(
        ["I keep bees in the garden."])[0], EMBED.model_id)
    assert set(same) == {ids_a[0]} and same[ids_a[0]] == pytest.approx(1.0, abs=1e-3)


def test_a_long_turns_cosine_is_the_best_of_its_passages(backend: Backend) -> None:
    user = _user(backend)
    long = ("I still remember the happy high school experiences of the debate team. Speaking "
            "of the future, what are the average salaries for data scientists in industry?")
    pieces = recall.passages(long)
    assert len(pieces) == 2
    turns = [Turn(turn_id=f"t{i}", role="user", content=t, timestamp=NOW)
             for i, t in enumerate([long, "I had tea in the morning."])]
    backend.add_turns(user, "s1", turns, EMBED.embed([t.content for t in turns]),
                      [EMBED.embed(pieces), []])
    ids_ = [ids.episode_id(user, turn_ref("s1", t.turn_id)) for t in turns]
    query = EMBED.embed([pieces[0]])[0]  # one passage, word for word
    whole = backend.vectors.cosines(user, ids_[:1], query, EMBED.model_id, memories=False)
    assert whole[ids_[0]] == pytest.approx(1.0, abs=0.01)  # the passage's, not the turn's
    hits = backend.vectors.search(user, query, EMBED.model_id, 5)
    assert [h.id for h in hits] == ids_
    assert hits[0].score == pytest.approx(1.0, abs=0.01)
    assert backend.vectors.search(user, query, "another-model", 5) == []


def test_nearest_memories_are_ids_and_the_graph_says_what_they_are(backend: Backend) -> None:
    user, other = _user(backend), _user(backend)
    ref = [turn_ref("s1", "t0")]
    current = _memory(user, "The user likes jazz music.", ref)
    gone = _memory(user, "The user likes jazz records.", ref, status=Status.SUPERSEDED,
                   invalid=NOW - timedelta(hours=1))
    for m in (current, gone, _memory(other, "The user likes jazz music.", ref)):
        backend.add_memory(m, EMBED.embed([m.content])[0])
    (near,) = backend.vectors.similar(user, [EMBED.embed(["likes jazz music"])[0]],
                                      EMBED.model_id, 5)
    assert [i for i, _ in near] == [current.id, gone.id]  # any status, nearest first, mine
    assert near[0][1] > near[1][1]
    state = {m.id: m.status for m in backend.text.get(user, [i for i, _ in near])}
    assert state == {current.id: Status.CURRENT, gone.id: Status.SUPERSEDED}
    cos = backend.vectors.cosines(user, [gone.id], EMBED.embed([gone.content])[0],
                                  EMBED.model_id, memories=True)
    assert cos[gone.id] == pytest.approx(1.0, abs=1e-3)


def test_the_version_fence(backend: Backend) -> None:
    user = _user(backend)
    ref = [turn_ref("s1", "t0")]
    start = backend.graph.version(user).version
    first = _memory(user, "The user lives in Lisbon.", ref, valid=NOW - timedelta(days=3))
    v1 = backend.graph.apply(user, [first], [], NOW, expected=start)
    assert v1 == start + 1 == backend.graph.version(user).version
    stale = _memory(user, "The user lives in Porto.", ref, valid=NOW - timedelta(days=1))
    with pytest.raises(StaleVersion):
        backend.graph.apply(user, [stale], [], NOW, expected=start)  # a plan made before v1
    assert [m.id for m in backend.graph.read_memories(user)] == [first.id]  # nothing written
    closed = first.with_changes(status=Status.SUPERSEDED, invalid_at=NOW - timedelta(days=1))
    v2 = backend.graph.apply(user, [closed, stale], [], NOW, expected=v1)
    assert v2 == v1 + 1
    assert [m.id for m in backend.graph.read_memories(user)] == [stale.id]
    assert [m.id for m in backend.graph.read_memories(user, include_inactive=True)] == [
        first.id, stale.id]
    then = backend.graph.read_memories(user, as_of=NOW - timedelta(days=2))
    assert [m.content for m in then] == ["The user lives in Lisbon."]



def test_what_a_plan_reads_and_how_far_the_index_holds_it(backend: Backend) -> None:
    """The drain round's reads (plan_view, near_current, changed_since) and the projection
    mark: the same on both."""
    from memq.schemas import AuditEntry, Operation, Triple

    user = _user(backend)
    ref = [turn_ref("s1", "t0")]
    lisbon = _memory(user, "The user lives in Lisbon.", ref, status=Status.SUPERSEDED,
                     valid=NOW - timedelta(days=3), invalid=NOW - timedelta(days=1))
    lisbon = lisbon.model_copy(update={"triples": [Triple(subject="user", predicate="lives_in",
                                                          object="Lisbon")]})
    porto = _memory(user, "The user lives in Porto.", [turn_ref("s1", "t1")],
                    valid=NOW - timedelta(days=1)).model_copy(update={"triples": [
                        Triple(subject="User", predicate="lives_in", object="Porto")]})
    tea = _memory(user, "The user likes green tea.", ref)
    entry = AuditEntry(id=ids.audit_id("b1", porto.id, "add"), user_id=user,
                       memory_id=porto.id, operation=Operation.ADD, reason="new",
                       source_turn_ids=porto.source_turn_ids, batch_id="b1",
                       extractor="test", at=NOW)
    v0 = backend.graph.version(user).version
    v1 = backend.graph.apply(user, [lisbon, porto, tea], [entry], NOW, expected=v0)
    assert backend.graph.version(user).projected < v1  # nothing marked yet
    assert backend.graph.mark_projected(user, v1, if_at=v1 - 1) == v1  # not at that version
    assert backend.graph.version(user).projected < v1
    backend.graph.mark_projected(user, v1, if_at=v1)
    assert backend.graph.version(user).projected == v1

    view = backend.graph.plan_view(user, batch_ids=["b1", "b2"],
                                   slots=[("user", "lives_in")], memory_ids=[tea.id, "m_nope"],
                                   contents=["the user likes green tea"])
    assert view.version.version == v1 and view.applied == frozenset({"b1"})
    assert {(h.memory_id, h.object) for h in view.holders} == {(lisbon.id, "Lisbon"),
                                                              (porto.id, "Porto")}
    assert set(view.memories) == {tea.id, lisbon.id, porto.id}
    assert [m.id for m in view.exact.values()] == [tea.id]

    near = backend.graph.near_current(user, [[lisbon.id, porto.id, tea.id], [lisbon.id]], 1)
    assert [m.id for m in near] == [porto.id]  # the first current one of each list
    later = porto.with_changes(importance=0.2)
    backend.graph.apply(user, [later], [], NOW, expected=v1)
    assert [m.id for m in backend.graph.changed_since(user, v1)] == [porto.id]


def test_a_plan_finds_the_change_that_ended_a_fact_of_its_slots(backend: Backend) -> None:
    """A change keeps what it replaced (StoredMemory.replaces): a plan that states a fact of
    the same slot gets it (``enders``), in full, while it is current; the same on both."""
    from memq.schemas import Triple

    user = _user(backend)
    uses = Triple(subject="user", predicate="uses", object="PostgreSQL 16")
    change = _memory(user, "The user uses PostgreSQL 16 (switched from MySQL).",
                     [turn_ref("s2", "t0")], valid=NOW - timedelta(days=1)).model_copy(
        update={"triples": [uses],
                "replaces": [Triple(subject="user", predicate="uses", object="MySQL")]})
    plain = _memory(user, "The user uses Redis.", [turn_ref("s2", "t1")]).model_copy(
        update={"triples": [Triple(subject="user", predicate="uses", object="Redis")]})
    mysql = _memory(user, "The user uses MySQL.", [turn_ref("s1", "t0")],
                    status=Status.SUPERSEDED, valid=NOW - timedelta(days=5),
                    invalid=NOW - timedelta(days=1)).model_copy(update={
                        "triples": [Triple(subject="user", predicate="uses", object="MySQL")],
                        "superseded_by": change.id})
    v0 = backend.graph.version(user).version
    v1 = backend.graph.apply(user, [change, plain, mysql], [], NOW, expected=v0)
    view = backend.graph.plan_view(user, batch_ids=[], slots=[], memory_ids=[], contents=[],
                                   ends=[("User", "uses")])
    assert view.enders == [change.id]  # not the plain statement
    assert view.memories[change.id].replaces == change.replaces  # kept as stated
    assert view.ended == [mysql.id]  # what it closed, in full
    assert view.memories[mysql.id].superseded_by == change.id
    assert backend.graph.plan_view(user, batch_ids=[], slots=[], memory_ids=[], contents=[],
                                   ends=[("user", "lives_in")]).enders == []
    closed = change.with_changes(status=Status.SUPERSEDED, invalid_at=NOW)
    backend.graph.apply(user, [closed], [], NOW, expected=v1)
    assert backend.graph.plan_view(user, batch_ids=[], slots=[], memory_ids=[], contents=[],
                                   ends=[("user", "uses")]).enders == []  # no longer current


def test_consolidation_state_is_the_graphs(backend: Backend) -> None:
    """Which of a user's turns were consolidated, and into what, the graph says (marks fenced
    as a plan's write, idempotent, per user); the index gives their vectors by id."""
    user, other = _user(backend), _user(backend)
    said = [("user", None, "I went running by the river."), ("assistant", None, "Nice!"),
            ("user", "Calvin", "I went running too."), ("user", None, "I baked bread.")]
    turns = [Turn(turn_id=f"t{i}", role=role, speaker=who, content=text,
                  timestamp=NOW - timedelta(days=2, minutes=-i))
             for i, (role, who, text) in enumerate(said)]
    backend.add_turns(user, "s1", turns, EMBED.embed([t.content for t in turns]))
    ids_ = [ids.episode_id(user, turn_ref("s1", t.turn_id)) for t in turns]
    (theirs,) = _turns(backend, other, ["I went running by the river."])

    found = backend.graph.unconsolidated_turns(user)  # role user, by event time, with words
    assert [(h.id, h.content, h.speaker, h.source_turn_ids) for h in found] == [
        (ids_[i], said[i][2], said[i][1], [turn_ref("s1", f"t{i}")]) for i in (0, 2, 3)]
    assert [h.event_at for h in found] == [turns[i].timestamp for i in (0, 2, 3)]
    held = backend.vectors.episode_vectors(user, EMBED.model_id, [*ids_, "e_nope", theirs])
    assert set(held) == set(ids_)  # the user's own, those it has
    assert held[ids_[0]].vector == pytest.approx(EMBED.embed([said[0][2]])[0], abs=1e-6)
    assert {v.legacy_into for v in held.values()} == {None}
    assert backend.vectors.episode_vectors(user, "another-model", ids_) == {}

    v0 = backend.graph.version(user).version
    with pytest.raises(StaleVersion):  # fenced: a job that read the user at another version
        backend.graph.mark_consolidated(user, {ids_[0]: "m_run"}, expected=v0 + 1)
    assert len(backend.graph.unconsolidated_turns(user)) == 3  # nothing marked
    v1 = backend.graph.mark_consolidated(user, {ids_[0]: "m_run", theirs: "m_run"},
                                         expected=v0)
    assert v1 == v0 + 1 == backend.graph.version(user).version
    assert backend.graph.version(user).projected == v1  # the index holds nothing of it
    assert [h.id for h in backend.graph.unconsolidated_turns(user)] == [ids_[2], ids_[3]]
    assert [h.id for h in backend.graph.unconsolidated_turns(other)] == [theirs]  # per user
    assert backend.graph.mark_consolidated(user, {ids_[0]: "m_run"}, expected=v1) == v1 + 1
    assert [h.id for h in backend.graph.unconsolidated_turns(user)] == [ids_[2], ids_[3]]

    # a commit the index does not hold yet stays to be caught up after a mark
    m = _memory(user, "The user runs.", [turn_ref("s1", "t0")])
    v3 = backend.graph.apply(user, [m], [], NOW, expected=v1 + 1)
    assert backend.graph.mark_consolidated(user, {}, expected=v3) == v3 + 1
    assert backend.graph.version(user).projected < v3


def test_a_turn_an_old_index_record_marks_is_consolidated_once(backend: Backend) -> None:
    """Records written before the graph held consolidation's state may mark a turn in the
    index: the job's candidates leave it out and the graph takes the mark, fenced."""
    user = _user(backend)
    ids_ = _turns(backend, user, ["I went running by the river.", "I baked bread."])
    backend.legacy_mark(user, ids_[0], "m_before")
    assert backend.vectors.episode_vectors(user, EMBED.model_id, ids_)[
        ids_[0]].legacy_into == "m_before"
    ports = service.Ports(embedder=EMBED, extractor=None, judge=None,  # type: ignore[arg-type]
                          memories=backend.vectors, episodes=backend.vectors,
                          graph=backend.graph)
    fence = jobs.Fence.begin(ports, user)
    start = fence.version
    assert [e.id for e in jobs.unconsolidated_episodes(ports, user, fence)] == [ids_[1]]
    assert fence.version == start + 1 == backend.graph.version(user).version
    assert [h.id for h in backend.graph.unconsolidated_turns(user)] == [ids_[1]]
    assert [e.id for e in jobs.unconsolidated_episodes(ports, user, fence)] == [ids_[1]]
    assert fence.version == start + 1  # read once: the graph leaves it out now
