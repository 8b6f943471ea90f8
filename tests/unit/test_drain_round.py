"""The drain round (``service.apply_round``) through the shipped fakes: the rule extractor and
the offline judge as the worker runs them offline, the in-memory index and the fenced graph
as the stores. What the worker adds around it (the mailbox, the claim) is Redis's and is
tested against the real one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline import service
from memq.pipeline.errors import PermanentError
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.policy import Thresholds
from memq.pipeline.predicates import Predicates
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import ExtractedBatch, Operation, Status, StoredMemory, Turn

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
TH, PRED = Thresholds(), Predicates.default()


def _ports(index: InMemoryIndex | None = None, graph: FencedGraph | None = None,
           embedder: HashEmbedder | None = None) -> service.Ports:
    index = index if index is not None else InMemoryIndex()
    return service.Ports(embedder=embedder or HashEmbedder(), extractor=RuleExtractor(),
                         judge=OfflineJudge(), memories=index, episodes=index,
                         graph=graph if graph is not None else FencedGraph())


def _batch(ports: service.Ports, user: str, session: str, texts: list[str],
           at: datetime) -> ExtractedBatch:
    """What extract leaves in Redis for the drain: the same call the worker makes."""
    turns = [Turn(turn_id=f"t{i}", role="user", content=text, timestamp=at + timedelta(minutes=i))
             for i, text in enumerate(texts)]
    out = service.extract(ports, user, session, turns, thresholds=TH, now=NOW)
    return ExtractedBatch(batch_id=f"b-{session}", session_id=session,
                          refs=[f"{session}/{t.turn_id}" for t in turns],
                          candidates=out.candidates, vectors=[service.pack(v) for v in out.vectors])


def _round(ports: service.Ports, user: str, batches: list[ExtractedBatch],
           **kw: object) -> service.Round:
    return service.apply_round(ports, user, batches, thresholds=TH, predicates=PRED, now=NOW,
                               **kw)  # type: ignore[arg-type]


def _current(graph: FencedGraph, user: str) -> list[str]:
    return sorted(m.content for m in graph.read_memories(user))


def test_a_coalesced_round_commits_one_plan_and_the_index_follows() -> None:
    graph, index = FencedGraph(), InMemoryIndex()
    ports = _ports(index, graph)
    batches = [_batch(ports, "u1", "s1", ["I live in Berlin."], T0),
               _batch(ports, "u1", "s2", ["I love green tea."], T0 + timedelta(days=1))]
    done = _round(ports, "u1", batches)
    assert (done.version, done.committed, done.stale, done.skipped) == (0, 1, False, frozenset())
    assert _current(graph, "u1") == ["The user likes green tea.", "The user lives in Berlin."]
    assert graph.version("u1").projected == 1  # the index holds the commit
    held = {m.id: m for m in index.memories("u1", include_inactive=True)}
    assert held.keys() == {m.id for m in graph.read_memories("u1", include_inactive=True)}
    # one commit for both batches, and each entry names its own batch (so that a redelivered
    # batch is known as applied)
    assert graph.version("u1").version == 1
    assert {e.batch_id for e in graph.audit("u1")} == {"b-s1", "b-s2"}


def test_the_same_batches_again_change_nothing() -> None:
    graph = FencedGraph()
    ports = _ports(graph=graph)
    batches = [_batch(ports, "u1", "s1", ["I live in Berlin."], T0)]
    assert _round(ports, "u1", batches).committed == 1
    audit = graph.audit("u1")
    again = _round(ports, "u1", batches)
    assert again.skipped == frozenset({"b-s1"})
    assert (again.committed, again.stale, again.plan.writes) == (None, False, [])
    assert graph.version("u1").version == 1 and graph.audit("u1") == audit


def test_a_newer_statement_of_a_slot_supersedes_and_an_older_one_arriving_late_does_not() -> None:
    graph = FencedGraph()
    ports = _ports(graph=graph)
    berlin = _batch(ports, "u1", "s1", ["I live in Berlin."], T0)
    paris = _batch(ports, "u1", "s2", ["I moved to Paris."], T0 + timedelta(days=30))
    _round(ports, "u1", [paris])
    late = _round(ports, "u1", [berlin])  # told later, true earlier
    assert late.committed == 2
    assert _current(graph, "u1") == ["The user lives in Paris."]
    everything = {m.content: m for m in graph.read_memories("u1", include_inactive=True)}
    old = everything["The user lives in Berlin."]
    assert old.status == Status.SUPERSEDED and old.invalid_at == T0 + timedelta(days=30)
    assert any(e.operation == Operation.SUPERSEDE for e in graph.audit("u1", old.id))


def test_a_commit_in_between_makes_the_round_stale_and_it_writes_nothing() -> None:
    graph = FencedGraph()
    ports = _ports(graph=graph)
    batches = [_batch(ports, "u1", "s1", ["I live in Berlin."], T0)]
    other = _batch(ports, "u1", "s9", ["I love green tea."], T0)

    @contextmanager
    def another_writer_commits(name: str) -> Iterator[None]:
        if name == "memq.upsert":  # after the plan was made, before its commit
            _round(ports, "u1", [other])
        yield

    stale = _round(ports, "u1", batches, stage=another_writer_commits)
    assert (stale.version, stale.stale, stale.committed) == (0, True, None)
    assert _current(graph, "u1") == ["The user likes green tea."]  # the stale plan: nothing
    again = _round(ports, "u1", batches)  # planned again, from the new state
    assert (again.version, again.committed) == (1, 2)
    assert _current(graph, "u1") == ["The user likes green tea.", "The user lives in Berlin."]


def test_an_index_behind_the_graph_is_caught_up_before_anything_is_planned() -> None:
    graph, index = FencedGraph(), InMemoryIndex()
    ports = _ports(index, graph)
    first = _batch(ports, "u1", "s1", ["I love green tea."], T0)
    done = _round(ports, "u1", [first])
    # a drain that died between its commit and the index: the index lost the memory
    (memory,) = graph.read_memories("u1")
    index.delete_ids("u1", [memory.id])
    graph.apply("u1", [memory.model_copy(update={"importance": 0.9})], [], NOW,
                expected=done.committed)  # a newer state the index never saw
    assert graph.version("u1").projected < graph.version("u1").version
    again = _batch(ports, "u1", "s2", ["I love green tea."], T0 + timedelta(days=1))
    _round(ports, "u1", [again])
    # caught up: the index has the memory again, and the same words were a duplicate of it
    assert [m.id for m in index.memories("u1", include_inactive=True)] == [memory.id]
    assert _current(graph, "u1") == ["The user likes green tea."]
    assert graph.version("u1").projected == graph.version("u1").version


def test_users_are_apart_and_a_user_keeps_one_model() -> None:
    graph, index = FencedGraph(), InMemoryIndex()
    ports = _ports(index, graph)
    _round(ports, "u1", [_batch(ports, "u1", "s1", ["I live in Berlin."], T0)])
    _round(ports, "u2", [_batch(ports, "u2", "s1", ["I live in Berlin."], T0)])
    (a,), (b,) = graph.read_memories("u1"), graph.read_memories("u2")
    assert a.id != b.id and a.user_id == "u1" and b.user_id == "u2"
    other = _ports(index, graph, HashEmbedder(dims=128, model_id="hash-128"))
    with pytest.raises(PermanentError):
        _round(other, "u1", [_batch(other, "u1", "s2", ["I love green tea."], T0)])


def test_a_memory_of_another_user_is_refused_by_the_fake_as_by_the_graph() -> None:
    graph = FencedGraph()
    memory = StoredMemory(id="m1", user_id="u2", content="x", kind="fact", confidence=0.9,
                          importance=0.5, source_turn_ids=["s/t"], valid_at=T0, created_at=T0,
                          updated_at=T0, embedding_model="hash-256")
    with pytest.raises(ValueError, match="another user"):
        graph.apply("u1", [memory], [], NOW, expected=None)


@pytest.mark.parametrize("texts", [
    ("我们监控一直用 Prometheus 加 Grafana。",
     "上个月把监控存储整体迁到了 VictoriaMetrics，Prometheus 那套已经下线了。"),
    ("We use MySQL for the orders service.", "We switched from MySQL to PostgreSQL last month."),
])
def test_a_change_applied_before_the_statement_it_ended_gives_the_same_memories(
        texts: tuple[str, str]) -> None:
    """Sessions of one user may be applied in any order (two deliveries, two workers): a
    statement of a fact that a change applied earlier had ended, though it was said before
    the change, is history at once, as it is when the sessions come in order."""
    said, change = texts
    results = []
    for order in ((0, 1), (1, 0)):
        graph = FencedGraph()
        ports = _ports(graph=graph)
        batches = [_batch(ports, "u1", "s1", [said], T0),
                   _batch(ports, "u1", "s2", [change], T0 + timedelta(days=9))]
        for i in order:  # one round per session: two plans, in this order
            assert not _round(ports, "u1", [batches[i]]).stale
        every = graph.read_memories("u1", include_inactive=True)
        results.append(sorted((m.content, m.status, m.invalid_at, m.superseded_by)
                              for m in every))
        old = next(m for m in every if m.source_turn_ids == ["s1/t0"])
        assert old.status is Status.SUPERSEDED, order
        ops = [e.operation for e in graph.audit("u1") if e.memory_id == old.id]
        assert Operation.SUPERSEDE in ops
    assert results[0] == results[1]


def test_sessions_that_state_a_value_twice_and_then_end_it_agree_in_every_order() -> None:
    """Two statements of a tool, then a change away from it, applied in all six orders: the
    same memories (what they say, their status and times) as in event order."""
    import itertools

    texts = [("s1", "We use Terraform.", T0), ("s2", "We use Terraform.", T0 + timedelta(days=2)),
             ("s3", "We switched from Terraform to Pulumi.", T0 + timedelta(days=9))]
    results = set()
    for order in itertools.permutations(range(3)):
        graph = FencedGraph()
        ports = _ports(graph=graph)
        batches = [_batch(ports, "u1", s, [text], at) for s, text, at in texts]
        for i in order:
            assert not _round(ports, "u1", [batches[i]]).stale
        every = graph.read_memories("u1", include_inactive=True)
        results.add(tuple(sorted((m.content, str(m.status), m.valid_at, m.invalid_at)
                                 for m in every)))
        audit = graph.audit("u1")
        for m in every:  # every memory's trail: added, and closed when it is history
            ops = {e.operation for e in audit if e.memory_id == m.id}
            assert Operation.ADD in ops and (m.is_current or Operation.SUPERSEDE in ops), order
    assert len(results) == 1, results
    (state,) = results
    assert [(c, s) for c, s, _, _ in state] == [
        ("The user uses Pulumi (switched from Terraform).", "current"),
        ("The user's team uses Terraform.", "superseded")]


def _now(graph: FencedGraph, user: str) -> list[tuple[str, str]]:
    return sorted((t.predicate, t.object) for m in graph.read_memories(user)
                  for t in m.triples)


def test_a_new_employer_ends_the_role_held_there_a_promotion_only_the_role() -> None:
    graph = FencedGraph()
    ports = _ports(graph=graph)
    said = [("s1", "I'm a junior designer at Canva."), ("s2", "Got promoted to lead designer!"),
            ("s3", "Big news: I joined Figma.")]
    states = []
    for n, (session, text) in enumerate(said):
        _round(ports, "u1", [_batch(ports, "u1", session, [text], T0 + timedelta(days=n))])
        states.append(_now(graph, "u1"))
    assert states == [[("role", "junior designer"), ("works_at", "Canva")],
                      [("role", "lead designer"), ("works_at", "Canva")],
                      [("works_at", "Figma")]]
    why = [e.reason for e in graph.audit("u1") if e.operation is Operation.SUPERSEDE]
    assert any("ends with the change of works_at" in r for r in why)


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_dated_change_ends_what_was_said_before_it_was_said(order: tuple[int, int]) -> None:
    """"I live in Lyon" said on 10 March; "we moved to Stockholm in February" said on 20
    March: Stockholm is current, from just after Lyon was said, in either order of arrival;
    the change keeps its month as its time when nothing was said inside it."""
    graph = FencedGraph()
    ports = _ports(graph=graph)
    batches = [_batch(ports, "u1", "s1", ["I live in Lyon."], T0 + timedelta(days=9)),
               _batch(ports, "u1", "s2", ["We moved to Stockholm in February."],
                      T0 + timedelta(days=19))]
    for i in order:
        _round(ports, "u1", [batches[i]])
    current = graph.read_memories("u1")
    assert [m.content for m in current] == ["The user lives in Stockholm."]
    assert current[0].valid_at == T0 + timedelta(days=9, seconds=1)
    alone = FencedGraph()
    ports = _ports(graph=alone)
    _round(ports, "u2", [_batch(ports, "u2", "s2", ["We moved to Stockholm in February."],
                                T0 + timedelta(days=19))])
    (stockholm,) = alone.read_memories("u2")
    assert stockholm.valid_at == datetime(2026, 3, 1, tzinfo=UTC)  # the end of February
    assert stockholm.said_at == T0 + timedelta(days=19)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_a_role_ends_with_its_employer_in_every_order_of_arrival(
        order: tuple[int, int, int]) -> None:
    """A role, an employer, a new employer: the role ends when the employer changes, whatever
    order the sessions are applied in (one round each)."""
    graph = FencedGraph()
    ports = _ports(graph=graph)
    said = ["I'm a data engineer.", "I work at Initech.", "I work at Globex."]
    batches = [_batch(ports, "u1", f"s{n}", [text], T0 + timedelta(days=n))
               for n, text in enumerate(said)]
    for i in order:
        _round(ports, "u1", [batches[i]])
    assert _now(graph, "u1") == [("works_at", "Globex")]
    role = next(m for m in graph.read_memories("u1", include_inactive=True)
                if m.triples[0].predicate == "role")
    assert role.invalid_at == T0 + timedelta(days=2)


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (0, 1, 3, 2), (3, 2, 1, 0)])
def test_the_same_role_said_after_the_change_holds_on_in_every_order(
        order: tuple[int, ...]) -> None:
    graph = FencedGraph()
    ports = _ports(graph=graph)
    said = ["I'm a data engineer.", "I work at Initech.", "I work at Globex.",
            "I'm a data engineer."]
    batches = [_batch(ports, "u1", f"s{n}", [text], T0 + timedelta(days=n))
               for n, text in enumerate(said)]
    for i in order:
        _round(ports, "u1", [batches[i]])
    assert _now(graph, "u1") == [("role", "data engineer"), ("works_at", "Globex")]
    roles = [m for m in graph.read_memories("u1", include_inactive=True)
             if m.triples[0].predicate == "role"]
    assert [(m.valid_at, m.invalid_at) for m in roles] == [(T0, None)]
