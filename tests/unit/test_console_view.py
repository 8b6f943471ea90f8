"""What the console shows (``pipeline.console``), from what the drain round really writes: the
rule extractor, the offline judge and the shipped fakes, as the worker runs them offline.
And the fusion's explanation (``recall.fuse_explained``) adds up to the fused score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memq.pipeline import console as view
from memq.pipeline import service
from memq.pipeline.lifecycle import Policy
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.policy import Thresholds
from memq.pipeline.predicates import Predicates
from memq.pipeline.recall import Candidate, fuse, fuse_explained
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import ExtractedBatch, Operation, Status, Turn

from .test_recall import _ep, _mem

NOW = datetime(2026, 12, 1, tzinfo=UTC)
JAN, APR, SEP = (datetime(2026, m, d, 9, tzinfo=UTC) for m, d in ((1, 10), (4, 2), (9, 15)))


def _apply(graph: FencedGraph, user: str, said: list[tuple[str, datetime, str]]) -> None:
    """Each (session, time, text) through extract and one drain round each, in this order."""
    index = InMemoryIndex()
    ports = service.Ports(embedder=HashEmbedder(), extractor=RuleExtractor(),
                          judge=OfflineJudge(), memories=index, episodes=index, graph=graph)
    for session, at, text in said:
        turns = [Turn(turn_id="t1", role="user", content=text, timestamp=at)]
        out = service.extract(ports, user, session, turns, thresholds=Thresholds(), now=NOW)
        batch = ExtractedBatch(batch_id=f"b-{session}", session_id=session,
                               refs=[f"{session}/t1"], candidates=out.candidates,
                               vectors=[service.pack(v) for v in out.vectors])
        service.apply_round(ports, user, [batch], thresholds=Thresholds(),
                            predicates=Predicates.default(), now=NOW)


def _moves() -> FencedGraph:
    graph = FencedGraph()
    _apply(graph, "u1", [("s1", JAN, "I live in Paris."), ("s2", APR, "I moved to Berlin."),
                         ("s3", SEP, "We just moved to Tokyo."), ("s4", APR, "I love green tea.")])
    return graph


def test_a_fact_that_changed_is_one_timeline_with_each_value_once() -> None:
    graph = _moves()
    every = view.timelines(graph.read_memories("u1", include_inactive=True), graph.audit("u1"))
    city = every[0]  # the most changes first
    assert (city.subject, city.predicate, city.changes) == ("user", "lives_in", 2)
    assert [(b.value, b.valid_from, b.valid_to) for b in city.bands] == [
        ("Paris", JAN, APR), ("Berlin", APR, SEP), ("Tokyo", SEP, None)]
    paris, berlin, tokyo = city.bands
    assert paris.status == berlin.status == "superseded" and tokyo.status == "current"
    # each close names its reason and the turns that closed it (the audit's supersede entry)
    assert paris.reason is not None and paris.reason.startswith("conflict, newer by event time")
    assert paris.closed_by_turns == ("s2/t1",) and berlin.closed_by_turns == ("s3/t1",)
    assert tokyo.reason is None and tokyo.closed_at is None and tokyo.closed_by_turns == ()
    assert paris.source_turn_ids == ("s1/t1",)
    assert view.slot_key("USER", "lives_in") == city.key  # stable, case-blind
    assert [t.predicate for t in every[1:]] == ["likes"]


def test_a_late_arrival_closes_the_value_before_it_again_and_says_so() -> None:
    """Paris, then Tokyo, then (late) Berlin of April: Paris ends where Berlin starts, closed
    by Berlin's turn, though Tokyo's had closed it first."""
    graph = FencedGraph()
    _apply(graph, "u1", [("s1", JAN, "I live in Paris."), ("s3", SEP, "We just moved to Tokyo."),
                         ("s2", APR, "I moved to Berlin.")])
    (city,) = view.timelines(graph.read_memories("u1", include_inactive=True), graph.audit("u1"))
    assert [(b.value, b.valid_to, b.closed_by_turns) for b in city.bands] == [
        ("Paris", APR, ("s2/t1",)), ("Berlin", SEP, ("s3/t1",)), ("Tokyo", None, ())]


def test_as_of_a_date_in_valid_and_in_transaction_time() -> None:
    city = view.timelines(_moves().read_memories("u1", include_inactive=True), [])[0]
    assert view.value_at(city, JAN - timedelta(days=1)) is None
    assert [view.value_at(city, JAN + timedelta(days=d)).value  # type: ignore[union-attr]
            for d in (0, 100, 300)] == ["Paris", "Berlin", "Tokyo"]
    # memq learned all three at NOW (one run): before that it held nothing; at NOW, Tokyo
    assert view.believed_at(city, NOW - timedelta(seconds=1)) is None
    assert view.believed_at(city, NOW).value == "Tokyo"  # type: ignore[union-attr]


def test_bands_are_placed_on_one_axis() -> None:
    city = view.timelines(_moves().read_memories("u1", include_inactive=True), [])[0]
    scale = view.axis(city, NOW)
    assert (scale.start, scale.end) == (JAN, NOW)
    placed = view.band_layout(city, scale, 1000)
    assert placed[0].x == 0 and placed[-1].x + placed[-1].width == 1000
    assert placed[0].x + placed[0].width == placed[1].x  # Paris ends where Berlin starts
    assert all(p.recorded_x == 1000 for p in placed)  # recorded at NOW, the axis' end
    assert scale.x(JAN - timedelta(days=9), 1000) == 0  # clipped


def test_memories_by_person_and_kind_with_the_status_a_person_reads() -> None:
    graph = _moves()
    found = graph.read_memories("u1", include_inactive=True)
    policy = Policy()
    later = NOW + timedelta(days=10)
    groups = view.memory_groups(found, later, policy)
    assert [(g.person, g.kind, [r.status for r in g.rows]) for g in groups] == [
        (view.USER, "profile", ["current", "superseded", "superseded"]),
        (view.USER, "preference", ["current"])]
    fact = groups[0].rows
    assert fact[0].content == "The user lives in Tokyo."
    current = next(m for m in found if m.content == "The user lives in Tokyo.")
    # what is left after ten days of decay (0.95 a day); history keeps its importance
    assert fact[0].importance == round(current.importance * policy.decay_rate ** 10, 4)
    assert fact[1].importance == next(m.importance for m in found if m.id == fact[1].id)
    only = view.memory_groups(found, NOW, policy, statuses=["superseded"])
    assert [len(g.rows) for g in only] == [2]
    expired = current.with_changes(status=Status.ARCHIVED, expires_at=NOW - timedelta(days=1))
    assert view.display_status(expired, NOW) == "expired"
    assert view.display_status(current.with_changes(status=Status.ARCHIVED), NOW) == "archived"
    named = current.with_changes(triples=[{"subject": "Jon", "predicate": "lives_in",
                                           "object": "Oslo"}])
    assert view.person_of(named) == "Jon"


def test_the_audit_filtered_by_memory_and_operation_newest_first() -> None:
    graph = _moves()
    audit = graph.audit("u1")
    supersedes = view.filter_audit(audit, operation="supersede")
    assert len(supersedes) == 2 and {e.operation for e in supersedes} == {Operation.SUPERSEDE}
    one = supersedes[0].memory_id
    mine = view.filter_audit(audit, memory_id=one)
    assert {e.memory_id for e in mine} == {one} and len(mine) == 2  # its add, its close
    assert [e.at for e in mine] == sorted((e.at for e in mine), reverse=True)
    assert view.filter_audit(audit) == sorted(audit, key=lambda e: (e.at, e.id), reverse=True)


def test_rates_and_lines_for_the_charts() -> None:
    samples = [{"t": 0.0, "turns": 0.0}, {"t": 10.0, "turns": 50.0},
               {"t": 20.0, "turns": 50.0}, {"t": 30.0, "turns": 20.0},  # metrics reset
               {"t": 30.0, "turns": 25.0}]  # no time passed: skipped
    assert view.rates(samples, "turns") == [(10.0, 5.0), (20.0, 0.0), (30.0, 2.0)]
    assert view.series(samples[:2], "turns") == [(0.0, 0.0), (10.0, 50.0)]
    points, top = view.polyline([(0.0, 0.0), (5.0, 2.0), (10.0, 4.0)], 100, 50)
    assert points == "0.0,50.0 50.0,25.0 100.0,0.0" and top == "4.0"
    assert view.polyline([], 100, 50) == ("", "0.0")


def test_the_explanation_adds_up_to_the_fused_score_in_the_same_order() -> None:
    episodes: list[Candidate] = [_ep("e1", lexical=9.0, dense=0.5),
                                 _ep("e2", lexical=3.0, dense=0.7),
                                 _ep("e3", dense=0.2, role="assistant")]
    memories = [_mem("m1", lexical=4.0, dense=0.6, weight=0.5),
                _mem("m2", dense=0.4, status="superseded")]
    plain = fuse(episodes, memories, 5)
    explained = fuse_explained(episodes, memories, 5)
    assert [h for h, _ in explained] == plain
    for hit, s in explained:
        assert abs((s.lexical_part + s.dense_part) * s.factor + s.neighbor - s.score) < 1e-5
        assert s.score == hit.score
    signals = {h.id: s for h, s in explained}
    assert signals["e1"].lexical == 9.0 and signals["e1"].lexical_part == 0.5  # the pool's best
    assert signals["e3"].factor == 0.7 and signals["e3"].lexical is None  # the assistant's
    assert signals["m1"].factor == 0.75  # 0.5 + 0.5 x its weight
    assert signals["m2"].factor == 0.6  # superseded
