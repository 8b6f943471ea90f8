"""Single-valued slots: the final timeline does not depend on the order statements arrive in.

A small simulated store (a dict) stands in for Chroma/Neo4j: each arriving statement is planned
by the real ``plan_batch`` against the memories already there, and its writes are applied.
"""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

from memq.pipeline.merge import BatchContext, OfflineJudge, Prepared, plan_batch
from memq.pipeline.policy import Thresholds
from memq.pipeline.predicates import Predicates
from memq.pipeline.timeline import Action, place
from memq.schemas import CandidateMemory, Kind, Status, StoredMemory, Triple

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PRED = Predicates(single=frozenset({"lives_in"}))


def statement(city: str, day: int, turn: str) -> CandidateMemory:
    return CandidateMemory(
        content=f"The user lives in {city}.", kind=Kind.PROFILE, confidence=0.9,
        importance=0.7, entities=[city], triples=[Triple(subject="user", predicate="lives_in",
                                                         object=city)],
        source_turn_ids=[turn], valid_at=T0 + timedelta(days=day))


def arrive(store: dict[str, StoredMemory], cand: CandidateMemory, n: int) -> None:
    ctx = BatchContext(user_id="u", batch_id=f"b{n}", model_id="m", extractor="rules-1",
                       prompt_version=None, now=T0 + timedelta(days=1000 + n))
    prepared = Prepared(candidate=cand, vector=[1.0, 0.0],
                        neighbors=[], slot_memories=list(store.values()))
    plan = plan_batch([prepared], ctx, thresholds=Thresholds(), predicates=PRED,
                      judge=OfflineJudge())
    for write in plan.writes:
        store[write.memory.id] = write.memory


def timeline(store: dict[str, StoredMemory]) -> list[tuple[str, datetime, datetime | None]]:
    spans = sorted(store.values(), key=lambda m: m.valid_at)
    return [(m.triples[0].object, m.valid_at, m.invalid_at) for m in spans]


def oracle(statements: list[CandidateMemory]) -> list[tuple[str, datetime, datetime | None]]:
    """Runs of equal values in event order; each run from its first statement to the next."""
    runs: list[tuple[str, datetime]] = []
    for s in sorted(statements, key=lambda c: c.valid_at):
        city = s.triples[0].object
        if not runs or runs[-1][0] != city:
            runs.append((city, s.valid_at))
    return [(city, start, runs[i + 1][1] if i + 1 < len(runs) else None)
            for i, (city, start) in enumerate(runs)]


STATEMENTS = [statement("Lisbon", 1, "a"), statement("Lisbon", 2, "b"),
              statement("Porto", 3, "c"), statement("Berlin", 5, "d"),
              statement("Berlin", 6, "e")]


def test_every_arrival_order_gives_the_event_order_timeline() -> None:
    expected = oracle(STATEMENTS)
    assert [c for c, _, _ in expected] == ["Lisbon", "Porto", "Berlin"]
    for order in itertools.permutations(STATEMENTS):
        store: dict[str, StoredMemory] = {}
        for n, cand in enumerate(order):
            arrive(store, cand, n)
        assert timeline(store) == expected, [c.source_turn_ids for c in order]
        current = [m for m in store.values() if m.status is Status.CURRENT]
        assert [m.triples[0].object for m in current] == ["Berlin"]
        # every closed span points at the span that follows it
        by_start = sorted(store.values(), key=lambda m: m.valid_at)
        for a, b in itertools.pairwise(by_start):
            assert (a.status, a.superseded_by) == (Status.SUPERSEDED, b.id)


def test_random_histories_converge() -> None:
    rng = random.Random(7)
    for _ in range(200):
        cities = rng.sample(["Oslo", "Rome", "Kyiv", "Lima", "Pune", "Nice"], k=rng.randint(1, 4))
        statements, day, turn = [], 0, 0
        for city in cities:  # a value never comes back once changed
            for _ in range(rng.randint(1, 3)):
                day += rng.randint(1, 3)
                turn += 1
                statements.append(statement(city, day, f"t{turn}"))
        rng.shuffle(statements)
        store: dict[str, StoredMemory] = {}
        for n, cand in enumerate(statements):
            arrive(store, cand, n)
        assert timeline(store) == oracle(statements)


def test_place_cases() -> None:
    store: dict[str, StoredMemory] = {}
    arrive(store, statement("Lisbon", 1, "a"), 0)
    lisbon = next(iter(store.values()))
    triple = Triple(subject="user", predicate="lives_in", object="Lisbon")
    other = Triple(subject="user", predicate="lives_in", object="Porto")
    assert place([], triple, T0).action is Action.NEW
    assert place([lisbon], triple, T0 + timedelta(days=3)).action is Action.DUPLICATE
    early = place([lisbon], triple, T0)
    assert (early.action, early.target) == (Action.EXTEND, lisbon)
    later = place([lisbon], other, T0 + timedelta(days=3))
    assert (later.action, later.cut, later.following) == (Action.INSERT, lisbon, None)
    before = place([lisbon], other, T0)
    assert (before.action, before.cut, before.following) == (Action.INSERT, None, lisbon)
    archived = lisbon.with_changes(status=Status.ARCHIVED)
    assert place([archived], other, T0).action is Action.NEW
