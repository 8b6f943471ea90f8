"""merge.plan_batch: duplicate / refinement / conflict / new, decided on plain values.

Vectors and neighbour similarities are given (as the service would gather them), so the
vectors here are tiny hand-made ones; no store, no model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from memq.pipeline import ids
from memq.pipeline.merge import BatchContext, OfflineJudge, Plan, Prepared, plan_batch
from memq.pipeline.policy import Thresholds
from memq.pipeline.ports import Decision, Judge, Judgement, Neighbor, Vector
from memq.pipeline.predicates import Predicates
from memq.schemas import CandidateMemory, Kind, Operation, Status, StoredMemory, Triple

USER = "u1"
MODEL = "test-model"
DAY1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
DAY2 = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)
DAY3 = datetime(2024, 5, 3, 9, 0, tzinfo=UTC)
NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
CTX = BatchContext(user_id=USER, batch_id="b_test", model_id=MODEL, extractor="test-extractor",
                   prompt_version="p1", now=NOW)

X: Vector = [1.0, 0.0, 0.0]
Y: Vector = [0.0, 1.0, 0.0]
Z: Vector = [0.0, 0.0, 1.0]


def near(vector: Vector, similarity: float) -> Vector:
    """A unit vector at exactly ``similarity`` cosine from the unit vector X (or Y)."""
    other = Z if vector != Z else X
    s = math.sqrt(1 - similarity**2)
    return [similarity * v + s * o for v, o in zip(vector, other, strict=True)]


def triple(predicate: str, obj: str) -> Triple:
    return Triple(subject="user", predicate=predicate, object=obj)


def cand(content: str, *turns: str, at: datetime = DAY2,
         triples: Sequence[Triple] = ()) -> CandidateMemory:
    return CandidateMemory(content=content, kind=Kind.FACT, confidence=0.9, importance=0.5,
                           triples=list(triples), source_turn_ids=list(turns or ("t1",)),
                           valid_at=at)


def stored(content: str, *, at: datetime = DAY1, triples: Sequence[Triple] = (),
           turns: Sequence[str] = ("old1",)) -> StoredMemory:
    return StoredMemory(
        id=ids.memory_id(USER, content, turns), user_id=USER, content=content, kind=Kind.FACT,
        confidence=0.8, importance=0.4, entities=["old-entity"], triples=list(triples),
        source_turn_ids=list(turns), valid_at=at, created_at=at, updated_at=at,
        embedding_model=MODEL)


def prep(candidate: CandidateMemory, vector: Vector = X, *,
         neighbors: Sequence[tuple[StoredMemory, float]] = (),
         slots: Sequence[StoredMemory] = (), already_stored: bool = False) -> Prepared:
    return Prepared(candidate=candidate, vector=vector,
                    neighbors=[Neighbor(m, s) for m, s in neighbors],
                    slot_memories=list(slots), already_stored=already_stored)


def plan(*prepared: Prepared, judge: Judge | None = None) -> Plan:
    return plan_batch(list(prepared), CTX, thresholds=Thresholds(),
                      predicates=Predicates.default(), judge=judge or OfflineJudge())


def ops(p: Plan) -> list[tuple[Operation, str]]:
    return [(a.operation, a.memory_id) for a in p.audit]


def written(p: Plan) -> dict[str, StoredMemory]:
    return {w.memory.id: w.memory for w in p.writes}


def vectors(p: Plan) -> dict[str, Vector | None]:
    return {w.memory.id: w.vector for w in p.writes}


class FixedJudge:
    """Always answers the same; records what it was asked."""

    def __init__(self, decision: Decision, merged: str | None = None) -> None:
        self.decision, self.merged = decision, merged
        self.asked: list[tuple[str, str]] = []

    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement:
        self.asked.append((new.content, existing.id))
        return Judgement(self.decision, f"stub says {self.decision}", merged_content=self.merged)


# Reused scenario: production moved from CentOS 7 to Ubuntu 22.04.
CENTOS = stored("The user's production environment is CentOS 7.", at=DAY1,
                triples=[triple("production_environment", "CentOS 7")])


def ubuntu(at: datetime = DAY2, *turns: str) -> CandidateMemory:
    return cand("The user's production environment is Ubuntu 22.04.", *(turns or ("d2a",)),
                at=at, triples=[triple("production_environment", "Ubuntu 22.04")])


# -- new ----------------------------------------------------------------------------------------

def test_new_memory_is_added_with_its_vector() -> None:
    c = cand("The user likes green tea.", "t1", "t2")
    p = plan(prep(c, X, neighbors=[(stored("The user owns a bike."), 0.3)]))
    new_id = ids.memory_id(USER, c.content, ["t1", "t2"])
    assert ops(p) == [(Operation.ADD, new_id)]
    assert [(w.memory.id, w.vector) for w in p.writes] == [(new_id, X)]
    memory = p.writes[0].memory
    assert (memory.content, memory.status, memory.valid_at, memory.invalid_at) == (
        "The user likes green tea.", Status.CURRENT, DAY2, None)
    assert (memory.user_id, memory.embedding_model, memory.created_at, memory.updated_at) == (
        USER, MODEL, NOW, NOW)
    assert memory.source_turn_ids == ["t1", "t2"]
    (entry,) = p.audit
    assert entry.id == ids.audit_id(CTX.batch_id, new_id,
                                    f"add:{ids.content_hash(c.content)}")
    assert (entry.batch_id, entry.extractor, entry.prompt_version, entry.at) == (
        "b_test", "test-extractor", "p1", NOW)
    assert entry.source_turn_ids == ["t1", "t2"]
    assert entry.before is None
    assert entry.after is not None
    assert entry.after["id"] == new_id
    assert entry.reason == "new memory (closest 0.300)"
    assert (p.batch_id, p.user_id) == ("b_test", USER)


def test_first_memory_of_a_user() -> None:
    p = plan(prep(cand("The user likes green tea.")))
    assert [a.operation for a in p.audit] == [Operation.ADD]
    assert p.audit[0].reason == "new memory"


# -- duplicates ---------------------------------------------------------------------------------

def test_similarity_at_duplicate_threshold_drops() -> None:
    existing = stored("The user likes green tea.")
    c = cand("User likes green tea", "t9")
    p = plan(prep(c, neighbors=[(stored("Other."), 0.5), (existing, 0.95)]))
    assert ops(p) == [(Operation.DROP_DUPLICATE, existing.id)]
    assert p.writes == []
    (entry,) = p.audit
    assert entry.source_turn_ids == ["t9"]
    assert entry.before is None
    assert entry.after == {"candidate": c.model_dump(mode="json")}
    assert "0.950" in entry.reason


def test_superseded_neighbor_is_not_a_duplicate_target() -> None:
    old = stored("The user likes green tea.").with_changes(status=Status.SUPERSEDED)
    p = plan(prep(cand("The user likes green tea."), neighbors=[(old, 0.99)]))
    assert [a.operation for a in p.audit] == [Operation.ADD]


def test_duplicate_inside_the_batch_is_dropped() -> None:
    first = cand("The user likes green tea.", "t1", at=DAY1)
    second = cand("The user really likes green tea.", "t2", at=DAY2)
    p = plan(prep(second, near(X, 0.97)), prep(first, X))
    first_id = ids.memory_id(USER, first.content, ["t1"])
    assert ops(p) == [(Operation.ADD, first_id), (Operation.DROP_DUPLICATE, first_id)]
    assert list(written(p)) == [first_id]


# -- single-valued slot conflicts --------------------------------------------------------------

def test_newer_conflicting_fact_supersedes_the_old() -> None:
    c = ubuntu(DAY2, "d2a")
    p = plan(prep(c, Y, neighbors=[(CENTOS, 0.76)], slots=[CENTOS]))
    new_id = ids.memory_id(USER, c.content, ["d2a"])
    assert ops(p) == [(Operation.ADD, new_id), (Operation.SUPERSEDE, CENTOS.id)]
    assert all(a.source_turn_ids == ["d2a"] for a in p.audit)
    mems = written(p)
    assert mems[new_id].status is Status.CURRENT
    assert mems[new_id].invalid_at is None
    old = mems[CENTOS.id]
    assert (old.status, old.invalid_at, old.superseded_by, old.updated_at) == (
        Status.SUPERSEDED, DAY2, new_id, NOW)
    assert (old.content, old.valid_at, old.created_at) == (CENTOS.content, DAY1, DAY1)
    assert vectors(p) == {new_id: Y, CENTOS.id: None}  # old content unchanged: no re-embed
    supersede = p.audit[1]
    assert supersede.before == CENTOS.model_dump(mode="json")
    assert supersede.after == old.model_dump(mode="json")
    assert "'CentOS 7' -> 'Ubuntu 22.04'" in supersede.reason


def test_late_arrival_is_kept_as_history() -> None:
    c = ubuntu(DAY1, "late")
    existing = CENTOS.with_changes(valid_at=DAY3)  # the store already knows a newer fact
    p = plan(prep(c, Y, slots=[existing]))
    late_id = ids.memory_id(USER, c.content, ["late"])
    # The same trail as in-order arrival: added, then superseded by the newer fact's turns.
    assert ops(p) == [(Operation.ADD, late_id), (Operation.SUPERSEDE, late_id)]
    assert p.audit[1].source_turn_ids == existing.source_turn_ids
    assert list(written(p)) == [late_id]  # the existing memory is untouched
    late = written(p)[late_id]
    assert (late.status, late.valid_at, late.invalid_at, late.superseded_by) == (
        Status.SUPERSEDED, DAY1, DAY3, existing.id)
    assert vectors(p) == {late_id: Y}
    assert "late arrival" in p.audit[0].reason
    assert p.audit[0].source_turn_ids == ["late"]


def test_same_slot_same_object_is_a_duplicate() -> None:
    c = cand("Production runs on centos 7 for the user.", "t5",
             triples=[triple("production_environment", "centos 7")])
    p = plan(prep(c, Y, neighbors=[(CENTOS, 0.8)], slots=[CENTOS]))
    assert ops(p) == [(Operation.DROP_DUPLICATE, CENTOS.id)]
    assert p.writes == []
    assert "same single-valued fact" in p.audit[0].reason


def test_multi_valued_predicate_accumulates() -> None:
    tea = stored("The user likes tea.", triples=[triple("likes", "tea")])
    c = cand("The user likes coffee.", "t2", triples=[triple("likes", "coffee")])
    p = plan(prep(c, Y, neighbors=[(tea, 0.85)], slots=[tea]))
    new_id = ids.memory_id(USER, c.content, ["t2"])
    assert ops(p) == [(Operation.ADD, new_id)]
    assert list(written(p)) == [new_id]


def test_two_conflicting_candidates_in_one_batch_later_wins() -> None:
    early = cand("The user lives in Berlin.", "t1", at=DAY1, triples=[triple("lives_in", "Berlin")])
    late = cand("The user lives in Munich.", "t2", at=DAY2, triples=[triple("lives_in", "Munich")])
    p = plan(prep(late, Y), prep(early, X))  # given out of order: planned by event time
    early_id = ids.memory_id(USER, early.content, ["t1"])
    late_id = ids.memory_id(USER, late.content, ["t2"])
    assert ops(p) == [(Operation.ADD, early_id), (Operation.ADD, late_id),
                      (Operation.SUPERSEDE, early_id)]
    mems = written(p)
    assert mems[late_id].status is Status.CURRENT
    assert (mems[early_id].status, mems[early_id].invalid_at, mems[early_id].superseded_by) == (
        Status.SUPERSEDED, DAY2, late_id)
    assert vectors(p) == {early_id: X, late_id: Y}  # both new: both keep their vectors


def test_three_values_in_one_batch_form_a_chain() -> None:
    def lives(city: str, turn: str, at: datetime) -> CandidateMemory:
        return cand(f"The user lives in {city}.", turn, at=at, triples=[triple("lives_in", city)])

    berlin, munich, hamburg = (lives("Berlin", "t1", DAY1), lives("Munich", "t2", DAY2),
                               lives("Hamburg", "t3", DAY3))
    p = plan(prep(berlin, X), prep(munich, Y), prep(hamburg, Z))
    b_id, m_id, h_id = (ids.memory_id(USER, c.content, c.source_turn_ids)
                        for c in (berlin, munich, hamburg))
    assert ops(p) == [(Operation.ADD, b_id), (Operation.ADD, m_id), (Operation.SUPERSEDE, b_id),
                      (Operation.ADD, h_id), (Operation.SUPERSEDE, m_id)]
    mems = written(p)
    assert [(mems[i].status, mems[i].invalid_at, mems[i].superseded_by)
            for i in (b_id, m_id, h_id)] == [
        (Status.SUPERSEDED, DAY2, m_id),  # closed once, by Munich, not again by Hamburg
        (Status.SUPERSEDED, DAY3, h_id),
        (Status.CURRENT, None, None),
    ]


def test_superseded_slot_holder_is_ignored() -> None:
    closed = CENTOS.with_changes(status=Status.SUPERSEDED, invalid_at=DAY2)
    c = ubuntu(DAY3, "t3")
    p = plan(prep(c, Y, slots=[closed]))
    assert ops(p) == [(Operation.ADD, ids.memory_id(USER, c.content, ["t3"]))]


def test_equal_event_time_the_incoming_fact_wins() -> None:
    # Pins current behaviour: on a tie of valid_at the candidate is current, the old one closed.
    c = ubuntu(DAY1, "same-time")
    p = plan(prep(c, Y, slots=[CENTOS]))
    new_id = ids.memory_id(USER, c.content, ["same-time"])
    assert ops(p) == [(Operation.ADD, new_id), (Operation.SUPERSEDE, CENTOS.id)]
    assert written(p)[CENTOS.id].invalid_at == DAY1


def test_subject_matches_case_insensitively() -> None:
    holder = stored("User lives in Berlin.",
                    triples=[Triple(subject="User", predicate="lives_in", object="Berlin")])
    c = cand("The user lives in Munich.", "t2", triples=[triple("lives_in", "Munich")])
    p = plan(prep(c, Y, slots=[holder]))
    assert [a.operation for a in p.audit] == [Operation.ADD, Operation.SUPERSEDE]


# -- the ambiguous band and the judge -----------------------------------------------------------

def test_offline_judge_containment_is_a_refinement() -> None:
    existing = stored("The user likes tea.", triples=[triple("likes", "tea")])
    c = cand("The user likes tea with milk.", "t7", at=DAY2,
             triples=[triple("likes", "tea with milk")])
    p = plan(prep(c, Y, neighbors=[(existing, 0.93)]))
    assert ops(p) == [(Operation.UPDATE, existing.id)]
    updated = written(p)[existing.id]
    assert updated.content == "The user likes tea with milk."
    assert updated.triples == [triple("likes", "tea with milk")]
    assert updated.source_turn_ids == ["old1", "t7"]
    assert (updated.valid_at, updated.updated_at, updated.created_at) == (DAY2, NOW, DAY1)
    assert (updated.confidence, updated.importance) == (0.9, 0.5)
    assert updated.status is Status.CURRENT
    assert vectors(p) == {existing.id: Y}  # content is the candidate's: its vector fits
    (entry,) = p.audit
    assert entry.before == existing.model_dump(mode="json")
    assert entry.after == updated.model_dump(mode="json")
    assert entry.reason.startswith("refinement: ")


def test_offline_judge_unrelated_is_new() -> None:
    existing = stored("The user likes tea.")
    c = cand("The user walks the dog daily.", "t7")
    p = plan(prep(c, Y, neighbors=[(existing, 0.9499)]))
    new_id = ids.memory_id(USER, c.content, ["t7"])
    assert ops(p) == [(Operation.ADD, new_id)]
    assert existing.id not in written(p)


def test_offline_judge_contained_candidate_is_a_duplicate() -> None:
    existing = stored("The user likes tea with milk.")
    p = plan(prep(cand("the user likes tea"), Y, neighbors=[(existing, 0.92)]))
    assert ops(p) == [(Operation.DROP_DUPLICATE, existing.id)]


def test_judge_asked_only_inside_the_band() -> None:
    existing = stored("The user likes tea.")
    judge = FixedJudge(Decision.CONFLICT)
    plan(prep(cand("Below the band."), neighbors=[(existing, 0.9199)]), judge=judge)
    plan(prep(cand("Above the band."), neighbors=[(existing, 0.95)]), judge=judge)
    assert judge.asked == []
    plan(prep(cand("Inside the band."), neighbors=[(existing, 0.92)]), judge=judge)
    assert judge.asked == [("Inside the band.", existing.id)]


def test_judge_conflict_supersedes() -> None:
    existing = stored("The user prefers long answers.", at=DAY1)
    c = cand("The user prefers short answers.", "t8", at=DAY2)
    judge = FixedJudge(Decision.CONFLICT)
    p = plan(prep(c, Y, neighbors=[(existing, 0.94)]), judge=judge)
    new_id = ids.memory_id(USER, c.content, ["t8"])
    assert judge.asked == [(c.content, existing.id)]
    assert ops(p) == [(Operation.ADD, new_id), (Operation.SUPERSEDE, existing.id)]
    old = written(p)[existing.id]
    assert (old.status, old.invalid_at, old.superseded_by) == (Status.SUPERSEDED, DAY2, new_id)
    assert "stub says conflict" in p.audit[1].reason


def test_judge_refinement_with_merged_sentence_needs_a_fresh_vector() -> None:
    existing = stored("The user likes tea.")
    judge = FixedJudge(Decision.REFINEMENT, merged="The user likes tea, with milk, no sugar.")
    p = plan(prep(cand("The user takes milk in tea."), Y, neighbors=[(existing, 0.93)]),
             judge=judge)
    assert written(p)[existing.id].content == "The user likes tea, with milk, no sugar."
    assert vectors(p) == {existing.id: None}  # the service embeds it


# -- redelivery and determinism -----------------------------------------------------------------

def test_already_stored_plans_nothing() -> None:
    c = ubuntu()
    p = plan(prep(c, Y, slots=[CENTOS], already_stored=True))
    assert (p.writes, p.audit) == ([], [])


def _mixed_batch() -> list[Prepared]:
    tea = stored("The user likes tea.")
    return [
        prep(ubuntu(DAY2, "d2a"), Y, neighbors=[(CENTOS, 0.76)], slots=[CENTOS]),
        prep(cand("The user likes tea with milk.", "t3", at=DAY1), Z, neighbors=[(tea, 0.93)]),
        prep(cand("The user likes tea.", "t4", at=DAY3), X, neighbors=[(tea, 0.99)]),
        prep(cand("The user owns a bike.", "t5", at=DAY3), near(X, 0.5)),
    ]


def test_planning_is_deterministic() -> None:
    first, second = plan(*_mixed_batch()), plan(*_mixed_batch())
    assert first == second
    assert [a.id for a in first.audit] == [a.id for a in second.audit]
    assert [w.memory.id for w in first.writes] == [w.memory.id for w in second.writes]
    assert plan(*reversed(_mixed_batch())) == first  # input order does not matter
    assert [a.operation for a in first.audit] == [
        Operation.UPDATE, Operation.ADD, Operation.SUPERSEDE, Operation.DROP_DUPLICATE,
        Operation.ADD]


def test_plan_json_round_trip() -> None:
    p = plan(*_mixed_batch())
    assert len(p.writes) == 4
    assert Plan.model_validate_json(p.model_dump_json()) == p


# -- regressions: each of these was a bug found by these tests ------------------------------

def test_changed_fact_worded_like_the_old_one_supersedes() -> None:
    old = stored("The user's production environment is Ubuntu 22.04.",
                 triples=[triple("production_environment", "Ubuntu 22.04")])
    c = cand("The user's production environment is Ubuntu 24.04.", "t9", at=DAY2,
             triples=[triple("production_environment", "Ubuntu 24.04")])
    p = plan(prep(c, Y, neighbors=[(old, 0.956)], slots=[old]))
    new_id = ids.memory_id(USER, c.content, ["t9"])
    assert ops(p) == [(Operation.ADD, new_id), (Operation.SUPERSEDE, old.id)]


def test_refining_a_memory_added_in_this_batch_drops_its_stale_vector() -> None:
    first = cand("The user likes tea.", "t1", at=DAY1)
    second = cand("The user takes milk in tea.", "t2", at=DAY2)
    judge = FixedJudge(Decision.REFINEMENT, merged="The user likes tea with milk.")
    p = plan(prep(first, X), prep(second, near(X, 0.93)), judge=judge)
    first_id = ids.memory_id(USER, first.content, ["t1"])
    assert ops(p) == [(Operation.ADD, first_id), (Operation.UPDATE, first_id)]
    assert written(p)[first_id].content == "The user likes tea with milk."
    assert vectors(p) == {first_id: None}  # actual: X, the vector of "The user likes tea."


def test_redelivered_refinement_changes_nothing() -> None:
    existing = stored("The user likes tea.")
    c = cand("The user likes tea with milk.", "t7")
    first = plan(prep(c, Y, neighbors=[(existing, 0.93)]))
    refined = written(first)[existing.id]
    # After applying: the store holds the refined memory (candidate's text and vector) under
    # the existing id; the candidate's own deterministic id was never written.
    again = plan(prep(c, Y, neighbors=[(refined, 1.0)], already_stored=False))
    assert again.writes == []
    assert {a.id for a in again.audit} <= {a.id for a in first.audit}


# -- a change names what it replaces ("switched from MySQL"), also for multi-valued facts ----

MYSQL = stored("The user uses MySQL 5.7.", triples=[triple("uses", "MySQL 5.7")])
JAVASCRIPT = stored("The user uses JavaScript.", triples=[triple("uses", "JavaScript")],
                    turns=("old2",))


def switched(to: str, old: str, *turns: str, at: datetime = DAY2) -> CandidateMemory:
    return cand(f"The user uses {to} (switched from {old}).", *(turns or ("t2",)), at=at,
                triples=[triple("uses", to)]).model_copy(
        update={"replaces": [triple("uses", old)]})


def test_a_change_supersedes_the_value_it_replaces() -> None:
    c = switched("PostgreSQL 16", "MySQL")  # "MySQL" names "MySQL 5.7" by its first word
    p = plan(prep(c, Y, neighbors=[(MYSQL, 0.6)], slots=[MYSQL, JAVASCRIPT]))
    new_id = ids.memory_id(USER, c.content, ["t2"])
    assert ops(p) == [(Operation.ADD, new_id), (Operation.SUPERSEDE, MYSQL.id)]
    old = written(p)[MYSQL.id]
    assert (old.status, old.invalid_at, old.superseded_by) == (Status.SUPERSEDED, DAY2, new_id)
    assert "'MySQL 5.7' replaced by 'PostgreSQL 16'" in p.audit[1].reason
    assert JAVASCRIPT.id not in written(p)  # uses stays multi-valued: the rest stand


def test_a_replaced_value_is_named_whole_not_by_its_letters() -> None:
    c = switched("Kotlin", "Java")
    p = plan(prep(c, Y, slots=[JAVASCRIPT]))
    assert [op for op, _ in ops(p)] == [Operation.ADD]


def test_a_replaced_value_stated_later_stays_current() -> None:
    """Event time decides: a change told about an earlier time does not close a later fact."""
    later = stored("The user uses MySQL 8.", at=DAY3, triples=[triple("uses", "MySQL 8")])
    c = switched("PostgreSQL 16", "MySQL 8", at=DAY2)
    p = plan(prep(c, Y, slots=[later]))
    assert [op for op, _ in ops(p)] == [Operation.ADD]


def test_a_change_met_as_a_duplicate_still_ends_the_old_value() -> None:
    known = stored("The user uses PostgreSQL 16.", at=DAY1,
                   triples=[triple("uses", "PostgreSQL 16")], turns=("old3",))
    c = switched("PostgreSQL 16", "MySQL 5.7")
    p = plan(prep(c, X, neighbors=[(known, 0.99), (MYSQL, 0.5)], slots=[MYSQL, known]))
    assert ops(p) == [(Operation.DROP_DUPLICATE, known.id), (Operation.SUPERSEDE, MYSQL.id)]
    assert written(p)[MYSQL.id].superseded_by == known.id


def test_a_change_and_its_old_value_in_one_batch() -> None:
    said = cand("The user uses MySQL 5.7.", "t1", at=DAY1, triples=[triple("uses", "MySQL 5.7")])
    c = switched("PostgreSQL 16", "MySQL 5.7")
    p = plan(prep(said, X), prep(c, Y))
    first = ids.memory_id(USER, said.content, ["t1"])
    assert written(p)[first].status is Status.SUPERSEDED


def test_a_value_a_newer_change_ended_is_history_when_it_comes_late() -> None:
    """The change (DAY3) was applied first; the statement it ended (DAY1) comes after: it is
    kept as history, closed by the change, as if the two had come in order."""
    ender = stored("The user uses PostgreSQL 16 (switched from MySQL).", at=DAY3,
                   triples=[triple("uses", "PostgreSQL 16")], turns=("t9",)).with_changes(
        replaces=[triple("uses", "MySQL")])
    c = cand("The user uses MySQL 5.7.", "t1", at=DAY1, triples=[triple("uses", "MySQL 5.7")])
    p = plan(prep(c, X).model_copy(update={"enders": [ender]}))
    late_id = ids.memory_id(USER, c.content, ["t1"])
    assert ops(p) == [(Operation.ADD, late_id), (Operation.SUPERSEDE, late_id)]
    late = written(p)[late_id]
    assert (late.status, late.invalid_at, late.superseded_by) == (
        Status.SUPERSEDED, DAY3, ender.id)
    assert "'MySQL 5.7' replaced by 'PostgreSQL 16'" in p.audit[0].reason
    # a statement made after the change stands: the change did not end it
    again = cand("The user uses MySQL 8.", "t2", at=DAY3.replace(day=9),
                 triples=[triple("uses", "MySQL 8")])
    p = plan(prep(again, X).model_copy(update={"enders": [ender]}))
    assert [op for op, _ in ops(p)] == [Operation.ADD]
    assert written(p)[ids.memory_id(USER, again.content, ["t2"])].is_current


def test_a_single_valued_fact_is_no_duplicate_of_another_slots_memory() -> None:
    """Worded alike (similarity 0.97), yet the role is not the employer."""
    works = stored("用户在律所工作。", triples=[triple("works_at", "律所")])
    c = cand("用户是律师助理。", "t1", at=DAY1, triples=[triple("role", "律师助理")])
    p = plan(prep(c, X, neighbors=[(works, 0.97)]))
    assert [op for op, _ in ops(p)] == [Operation.ADD]
    # nor of one this batch added from the same turn (no fold "before": it is new)
    works_now = cand("用户在律所工作。", "t1", at=DAY1, triples=[triple("works_at", "律所")])
    p = plan(prep(works_now, Y), prep(c, near(Y, 0.97)))
    assert [op for op, _ in ops(p)] == [Operation.ADD, Operation.ADD]
    # a memory of no single-valued fact is still its duplicate
    said = stored("用户是律师助理", triples=[triple("likes", "法律")])
    p = plan(prep(c, X, neighbors=[(said, 0.97)]))
    assert ops(p) == [(Operation.DROP_DUPLICATE, said.id)]


# -- judge calls made ahead (service.prejudge) ------------------------------------------------
class GatedJudge:
    """Answers NEW for everything; its first ``together`` calls wait for each other at a
    barrier, so they pass only if they are made at the same time (sequential calls break it
    after the timeout)."""

    def __init__(self, together: int) -> None:
        import threading

        self.barrier = threading.Barrier(together, timeout=10)
        self.lock = threading.Lock()
        self.asked: list[tuple[str, str]] = []

    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement:
        with self.lock:
            self.asked.append((new.content, existing.id))
            gated = len(self.asked) <= self.barrier.parties
        if gated:
            self.barrier.wait()
        return Judgement(Decision.NEW, "gated")


def _ambiguous_batch() -> list[Prepared]:
    tea, jazz = stored("The user likes tea."), stored("The user likes jazz.")
    return [prep(cand("The user likes green tea.", "t1"), X, neighbors=[(tea, 0.93)]),
            prep(cand("The user likes cool jazz.", "t2"), Y, neighbors=[(jazz, 0.94)]),
            prep(cand("The user likes Lisbon.", "t3"), Z, neighbors=[(tea, 0.5)])]


def test_likely_judged_is_what_the_planner_asks() -> None:
    from memq.pipeline.merge import likely_judged

    batch = _ambiguous_batch()
    recorder = FixedJudge(Decision.NEW)
    plan(*batch, judge=recorder)
    pairs = likely_judged(batch, thresholds=Thresholds(), predicates=Predicates.default())
    assert [(c.content, m.id) for c, m in pairs] == recorder.asked
    assert len(pairs) == 2  # the distant third is not asked about
    # a stored copy, or a slot with holders, decides before the judge does
    home = stored("The user lives in Lisbon.", triples=[triple("lives_in", "Lisbon")])
    slotted = prep(cand("The user lives in Porto.", "t4", triples=[triple("lives_in", "Porto")]),
                   neighbors=[(home, 0.93)], slots=[home])
    again = prep(cand("The user likes green tea.", "t1"), neighbors=[(home, 0.93)],
                 already_stored=True)
    assert likely_judged([slotted, again], thresholds=Thresholds(),
                         predicates=Predicates.default()) == []


def test_prejudged_plan_equals_the_sequential_one_with_its_calls_made_at_once() -> None:
    from memq.pipeline.service import prejudge

    batch = _ambiguous_batch()
    sequential = plan(*batch, judge=FixedJudge(Decision.NEW))
    gated = GatedJudge(together=2)  # both ambiguous pairs at once, or a BrokenBarrierError
    judge = prejudge(gated, batch, thresholds=Thresholds(), predicates=Predicates.default())
    ahead = plan(*batch, judge=judge)
    assert ops(ahead) == ops(sequential) and written(ahead) == written(sequential)
    assert len(gated.asked) == 2  # the planner asked nothing again
    one_at_a_time = prejudge(gated, batch, thresholds=Thresholds(judge_concurrency=1),
                             predicates=Predicates.default())
    assert one_at_a_time is gated


def test_a_pair_changed_by_an_earlier_candidate_is_asked_by_the_planner() -> None:
    """The first candidate is added; the second is nearer to it than to its stored neighbour,
    so the planner asks about another pair than the one judged ahead."""
    from memq.pipeline.merge import Prejudged
    from memq.pipeline.service import prejudge

    tea, jazz = stored("The user likes tea."), stored("The user likes jazz.")
    batch = [prep(cand("The user likes green tea.", "t1"), X, neighbors=[(tea, 0.93)]),
             prep(cand("The user likes green tea a lot.", "t2"), near(X, 0.935),
                  neighbors=[(jazz, 0.925)])]
    sequential = FixedJudge(Decision.NEW)
    want = plan(*batch, judge=sequential)
    inner = FixedJudge(Decision.NEW)
    judge = prejudge(inner, batch, thresholds=Thresholds(), predicates=Predicates.default())
    got = plan(*batch, judge=judge)
    assert ops(got) == ops(want)
    assert isinstance(judge, Prejudged) and judge.asked == 1
    assert inner.asked[-1] == sequential.asked[-1]  # the pair the planner really asked about
