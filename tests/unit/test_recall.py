"""Hybrid recall's pure parts: the Lucene query a user's text becomes, and rank fusion."""

from __future__ import annotations

from datetime import UTC, datetime

from memq.pipeline.ports import Hit
from memq.pipeline.recall import Floors, asks_about_past, fuse, lucene_query, user_key

AT = datetime(2026, 11, 1, tzinfo=UTC)


def _hit(hit_id: str, kind: str = "episode", score: float = 0.5, ref: str = "s/t") -> Hit:
    return Hit(id=hit_id, type=kind, content=hit_id, score=score, event_at=AT,  # type: ignore[arg-type]
               created_at=AT, source_turn_ids=[ref])


def test_user_text_cannot_change_the_query() -> None:
    q = lucene_query("u1", 'where: "Maria" AND (works*) OR NOT user_key:u0 ~2 \\ -x')
    words = "where maria and works or not user_key u0 2 x"
    assert q == f"+user_key:{user_key('u1')} +(text:({words}) speaker:({words}))"
    assert lucene_query("u1", "?? !! --") is None
    assert "上海工作" in (lucene_query("u1", "李娜在上海工作吗？") or "")


def test_user_keys_are_one_token_and_differ() -> None:
    assert user_key("a").isalnum() and user_key("a") != user_key("b")


def test_fusion_rewards_agreement_and_applies_floors() -> None:
    both = _hit("e-both", score=0.6, ref="s/1")
    hits = fuse([(_hit("m-near", "memory", ref="s/2"), 0.62),
                 (_hit("m-noise", "memory", ref="s/3"), 0.2)],
                [both, _hit("e-weak", score=0.1, ref="s/4")],
                [_hit("e-bm25", ref="s/5"), both], k=10)
    ids = [h.id for h in hits]
    assert ids[0] == "e-both"  # in two rankings
    assert "m-noise" not in ids and "e-weak" not in ids  # under the floors
    assert set(ids) == {"e-both", "m-near", "e-bm25"}
    assert hits[0].score > hits[1].score


def test_superseded_turns_come_after_current_ones() -> None:
    old, new = _hit("e-old", score=0.7, ref="s1/t1"), _hit("e-new", score=0.6, ref="s2/t1")
    hits = fuse([], [old, new], [old, new], k=2, superseded={"s1/t1"})
    assert [h.id for h in hits] == ["e-new", "e-old"]


def test_a_question_about_the_past_raises_what_was_superseded() -> None:
    old, new = _hit("e-old", score=0.6, ref="s1/t1"), _hit("e-new", score=0.7, ref="s2/t1")
    was = Hit(id="m-old", type="memory", content="Maria lives in Vienna.", score=1.0,
              event_at=AT, created_at=AT, source_turn_ids=["s1/t1"], status="superseded")
    now = _hit("m-new", "memory", ref="s2/t1")
    args = ([(now, 0.7)], [new, old], [new, old])
    assert [h.id for h in fuse(*args, k=4, superseded={"s1/t1"}, bm25_memories=[was])][:2] \
        == ["m-new", "e-new"]
    past = fuse(*args, k=4, superseded={"s1/t1"}, bm25_memories=[was], past=True)
    assert {h.id for h in past[:2]} == {"e-old", "m-old"}


def test_questions_about_the_past_are_told_apart() -> None:
    for q in ("Where did Maria live before moving?", "Which city was Tom living in at first?",
              "Which company did Tom work for previously?", "What car did Tom drive originally?",
              "李娜以前在哪家公司工作？", "王伟搬家之前住在哪里？", "李娜最开始住在哪个城市？"):
        assert asks_about_past(q), q
    for q in ("Where does Maria live now?", "What is Tom's profession?", "Which car did Tom buy?",
              "What app does Maria use to take notes?",
              "李娜现在住在哪里？", "王伟最喜欢的茶是什么？", "Who is visiting Maria soon?"):
        assert not asks_about_past(q), q


def test_k_bounds_the_one_list() -> None:
    eps = [_hit(f"e{i}", score=0.9) for i in range(30)]
    assert len(fuse([], eps, [], k=5, floors=Floors())) == 5


def test_a_memory_shares_its_source_turns_bm25_evidence() -> None:
    memory = _hit("m", "memory", ref="s1/t1")
    source = _hit("e-source", ref="s1/t1")
    said = Hit(id="e-assistant", type="episode", content="You work at Initech.", score=0.31,
               event_at=AT, created_at=AT, source_turn_ids=["s1/t9"], role="assistant")
    hits = fuse([(memory, 0.73)], [said, source], [source, said], k=3)
    assert [h.id for h in hits][:2] == ["m", "e-source"]


def test_memories_found_by_bm25_alone_are_ranked_too() -> None:
    lexical = _hit("m-bm25", "memory", ref="s/9")
    hits = fuse([], [], [], k=3, bm25_memories=[lexical])
    assert [h.id for h in hits] == ["m-bm25"]
    assert lucene_query("u1", "李娜住在哪里", field="content") == (
        f"+user_key:{user_key('u1')} +content:(李娜住在哪里)")
