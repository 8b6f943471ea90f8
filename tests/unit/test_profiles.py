"""Consolidation's topic profiles: ``pipeline.profiles`` (pure) and ``jobs.profile`` through the
shipped fakes (fenced graph, in-memory index, hashing embedder), and how search weighs them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memq.pipeline import jobs, profiles, recall, service
from memq.pipeline.lifecycle import Policy
from memq.pipeline.merge import OfflineJudge
from memq.pipeline.ports import Hit
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
from memq.schemas import Kind, Operation, Status, StoredMemory, Triple

T0 = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _memory(mid: str, content: str, subject: str, session: int, *, kind: Kind = Kind.EVENT,
            user_id: str = "u1", status: Status = Status.CURRENT) -> StoredMemory:
    return StoredMemory(
        id=mid, user_id=user_id, content=content, kind=kind, confidence=0.8, importance=0.5,
        triples=[Triple(subject=subject, predicate="did", object=content)],
        source_turn_ids=[f"s{session}/t1"], valid_at=T0 + timedelta(days=7 * session),
        created_at=NOW, updated_at=NOW, embedding_model=HashEmbedder().model_id, status=status)


def test_topic_text_leaves_out_the_name_the_dates_and_the_telling() -> None:
    m = _memory("m1", "Audrey's dogs just had a playdate the week before 16 April 2023.",
                "Audrey", 1)
    assert profiles.topic_text(m) == "dogs had a playdate"
    zh = _memory("m2", "用户上个月2023年5月3日搬到了北京。", "user", 1)
    assert profiles.topic_text(zh) == "上个月搬到了北京"


def _vectors(*pairs: tuple[str, list[float]]) -> dict[str, list[float]]:
    return dict(pairs)


def test_a_topic_over_two_sessions_is_a_profile_in_time_order_with_dates() -> None:
    course = _memory("m1", "Audrey took a dog grooming course.", "Audrey", 3)
    agility = _memory("m2", "Audrey's dogs started agility classes.", "Audrey", 1)
    cake = _memory("m3", "Audrey baked a cake.", "Audrey", 2)
    vectors = _vectors(("m1", [1.0, 0.1, 0.0]), ("m2", [1.0, 0.0, 0.0]), ("m3", [0.0, 0.0, 1.0]))
    (draft,) = profiles.profiles("u1", [course, agility, cake], vectors, similarity=0.57,
                                 max_members=6)
    assert draft.members == ("m2", "m1")  # in time order, the cake is another topic
    assert draft.content == ("Audrey: Audrey's dogs started agility classes (8 May 2023); "
                             "took a dog grooming course (22 May 2023).")
    assert draft.source_turn_ids == ("s1/t1", "s3/t1")
    assert draft.subject == "Audrey" and draft.triple.predicate == profiles.PREDICATE
    assert draft.triple.object == "dogs started agility classes"  # its topic
    again = profiles.profiles("u1", [cake, agility, course], vectors, similarity=0.57,
                              max_members=6)
    assert [d.id for d in again] == [draft.id]  # deterministic: the id is its members'


def test_one_session_people_apart_instructions_and_derived_are_no_profile() -> None:
    same = [_memory("a1", "Jon went fishing.", "Jon", 1), _memory("a2", "Jon fished.", "Jon", 1)]
    people = [_memory("b1", "Jon went hiking.", "Jon", 1),
              _memory("b2", "Maria went hiking.", "Maria", 2)]
    said = [_memory("c1", "Always answer in French.", "user", 1, kind=Kind.INSTRUCTION),
            _memory("c2", "Answer in French.", "user", 2, kind=Kind.INSTRUCTION)]
    gone = [_memory("d1", "Tom lives in Lisbon.", "Tom", 1, status=Status.SUPERSEDED),
            _memory("d2", "Tom lives in Porto.", "Tom", 2)]
    vectors = {m.id: [1.0, 0.0] for m in [*same, *people, *said, *gone]}
    for group in (same, people, said, gone):
        assert profiles.profiles("u1", group, vectors, similarity=0.57, max_members=6) == []


def test_a_large_topic_keeps_the_members_closest_to_its_centre() -> None:
    ms = [_memory(f"m{i}", f"Sam ran {i} km.", "Sam", i) for i in range(5)]
    vectors = {"m0": [1.0, 0.6], "m1": [1.0, 0.01], "m2": [1.0, 0.0], "m3": [1.0, -0.01],
               "m4": [1.0, -0.6]}
    (draft,) = profiles.profiles("u1", ms, vectors, similarity=0.57, max_members=3)
    assert draft.members == ("m1", "m2", "m3")  # the two at the edges left out


def test_chinese_members_read_as_chinese() -> None:
    a = _memory("m1", "用户开始学游泳。", "user", 1)
    b = _memory("m2", "用户报了游泳课。", "user", 2)
    (draft,) = profiles.profiles("u1", [a, b], {"m1": [1.0], "m2": [1.0]}, similarity=0.57,
                                 max_members=6)
    assert draft.content == "用户：开始学游泳（2023年5月8日）；报了游泳课（2023年5月15日）。"


def _ports() -> service.Ports:
    index = InMemoryIndex()
    return service.Ports(embedder=HashEmbedder(), extractor=RuleExtractor(), judge=OfflineJudge(),
                         memories=index, episodes=index, graph=FencedGraph())


def _store(ports: service.Ports, *memories: StoredMemory) -> None:
    version = service.catch_up(ports, "u1").version
    service.commit(ports, "u1", list(memories), ports.embedder.embed([m.content for m in memories]),
                   [], NOW, expected=version)


def _run(ports: service.Ports) -> int:
    return jobs.profile(ports, "u1", NOW, Policy(), jobs.Fence.begin(ports, "u1")).changed


def test_the_job_adds_a_profile_once_and_archives_it_when_the_topic_grows() -> None:
    ports = _ports()
    _store(ports, _memory("m1", "Audrey took a dog training course.", "Audrey", 1),
           _memory("m2", "Audrey took a dog grooming course.", "Audrey", 2))
    assert _run(ports) == 1
    (first,) = [m for m in ports.graph.read_memories("u1") if m.derived_from]
    assert first.derived_from == ["m1", "m2"] and first.kind is Kind.FACT
    assert ports.graph.audit("u1", first.id)[0].operation is Operation.CONSOLIDATE
    assert _run(ports) == 0  # the same memories: nothing to do
    assert {m.id: m.importance for m in ports.graph.read_memories("u1")}["m1"] == 0.5  # kept
    _store(ports, _memory("m3", "Audrey took a dog agility course.", "Audrey", 3))
    assert _run(ports) == 2  # the grown topic's profile, the old one archived
    current = [m for m in ports.graph.read_memories("u1") if m.derived_from]
    assert [m.derived_from for m in current] == [["m1", "m2", "m3"]]
    (old,) = ports.graph.get("u1", [first.id])
    assert old.status is Status.ARCHIVED  # not superseded: its turns still say what is true
    assert ports.graph.audit("u1", first.id)[-1].reason == f"profile regrown into {current[0].id}"


def test_a_new_statement_is_never_a_duplicate_of_a_profile() -> None:
    ports = _ports()
    _store(ports, _memory("m1", "Audrey took a dog training course.", "Audrey", 1),
           _memory("m2", "Audrey took a dog grooming course.", "Audrey", 2))
    _run(ports)
    (profile,) = [m for m in ports.graph.read_memories("u1") if m.derived_from]
    assert profiles.is_profile(profile) and not profiles.eligible(profile)


def _hit(hid: str, kind: str) -> Hit:
    return Hit(id=hid, type=kind, content=hid, score=0.0,  # type: ignore[arg-type]
               event_at=T0, created_at=T0, source_turn_ids=[])


def test_search_lifts_a_profile_by_its_members_found_when_weighed() -> None:
    # off by default (recall.Weights.member: turns gain from their memories instead)
    weights = recall.Weights(member=0.3)
    members = [recall.Candidate(_hit(m, "memory"), lexical=4.0, dense=0.6) for m in ("m1", "m2")]
    turns = [recall.Candidate(_hit(f"t{i}", "episode"), lexical=5.0, dense=0.62)
             for i in range(3)]
    profile = recall.Candidate(_hit("p", "memory"), lexical=3.0, dense=0.58,
                               members=("m1", "m2"))
    alone = recall.Candidate(_hit("p", "memory"), lexical=3.0, dense=0.58)
    lifted = [h.id for h in recall.fuse([*turns], [*members, profile], 6, weights=weights)]
    plain = [h.id for h in recall.fuse([*turns], [*members, alone], 6, weights=weights)]
    assert [h.id for h in recall.fuse([*turns], [*members, profile], 6)] == plain
    assert lifted.index("p") < plain.index("p")
    assert lifted[0] == "p"  # its two members' evidence in one place
