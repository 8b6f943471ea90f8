"""scripts/bench memory reads the public benchmarks as published: a small file of each shape
(made here; the real ones are never in the repo), their rough edges included."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from script_loader import load_script

from memq.pipeline.ports import Hit


def _bench() -> ModuleType:
    return load_script("memory_bench")


LOCOMO = [{
    "sample_id": "conv 1",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Rui",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog in 2020!"},
            {"speaker": "Rui", "dia_id": "D1:2", "text": "", "blip_caption": "a photo of a dog"},
            {"speaker": "Rui", "dia_id": "D1:3", "text": ""}],
        "session_2_date_time": "9:02 am on 1 June, 2023",
        "session_2": [{"speaker": "Rui", "dia_id": "D2:5", "text": "I started a new job."}]},
    "qa": [
        {"question": "When did Ana adopt a dog?", "answer": 2020, "evidence": ["D1:1"],
         "category": 2},
        {"question": "What did both do?", "answer": "dog, job", "evidence": ["D1:1; D2:05"],
         "category": 1},
        {"question": "Rui's job?", "answer": "new", "evidence": ["D:2:5"], "category": 4},
        {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": ["D1:1"],
         "category": 5}]}]

LME = [{
    "question_id": "q/1", "question_type": "single-session-user",
    "question": "What time do I go to the gym?", "question_date": "2023/06/06 (Tue) 16:35",
    "answer": "6:00 pm", "answer_session_ids": ["sess_b"],
    "haystack_session_ids": ["sess_a", "sess_b"],
    "haystack_dates": ["2023/05/20 (Sat) 07:47", "2023/05/21 (Sun) 08:00"],
    "haystack_sessions": [
        [{"role": "user", "content": "Any cookie ideas?"}, {"role": "assistant", "content": " "}],
        [{"role": "user", "content": "I go to the gym at 6 pm.", "has_answer": True},
         {"role": "assistant", "content": "Great routine!"}]]}]


def test_locomo_as_published(tmp_path: Path) -> None:
    mb = _bench()
    (tmp_path / "l.json").write_text(json.dumps(LOCOMO))
    fmt, (conv,) = mb.load(tmp_path / "l.json")
    assert fmt == "locomo" and conv.user_id == "bench-locomo-conv-1"
    assert [b.session_id for b in conv.batches] == ["session_1", "session_2"]
    first = conv.batches[0].turns
    assert [t.speaker for t in first] == ["Ana", "Rui"] and conv.skipped_empty == 1
    assert first[1].content == "[shares a photo: a photo of a dog]"
    assert first[0].timestamp.isoformat() == "2023-05-08T13:56:00+00:00"
    assert [(q.category, q.gold) for q in conv.questions] == [
        ("temporal", ["session_1/D1:1"]),
        ("multi-hop", ["session_1/D1:1", "session_2/D2:5"]),
        ("single-hop", ["session_2/D2:5"])]  # category 5 has no answer: not scored
    assert conv.questions[0].answer == "2020"


def test_longmemeval_as_published(tmp_path: Path) -> None:
    mb = _bench()
    (tmp_path / "m.json").write_text(json.dumps(LME))
    fmt, (conv,) = mb.load(tmp_path / "m.json")
    assert fmt == "longmemeval" and conv.turns == 3 and conv.skipped_empty == 1
    (q,) = conv.questions
    assert q.gold == ["s1-sess_b/t0"] and q.sessions == ["s1-sess_b"]
    assert [t.role for b in conv.batches for t in b.turns] == ["user", "user", "assistant"]


def test_anything_else_is_refused_with_what_it_is_not(tmp_path: Path) -> None:
    mb = _bench()
    (tmp_path / "x.json").write_text(json.dumps([{"a": 1}]))
    with pytest.raises(ValueError, match="neither LoCoMo"):
        mb.load(tmp_path / "x.json")


def test_scores() -> None:
    mb = _bench()
    from datetime import UTC, datetime

    at = datetime(2026, 1, 1, tzinfo=UTC)

    def hit(*refs: str) -> Hit:
        return Hit(id=refs[0], type="episode", content="", score=0.0, event_at=at,
                   created_at=at, source_turn_ids=list(refs))

    hits = [hit("s/1"), hit("s/2", "t/3"), hit("s/4")]
    assert mb.recall_at(hits, ["s/2", "t/3", "u/9"], 2) == pytest.approx(2 / 3)
    assert mb.recall_at(hits, ["s/4"], 2) == 0.0
    assert mb.session_recall_at(hits, ["t", "u"], 3) == 0.5
    assert mb.evidence_ids(["D8:6; D9:17", "D:11:26", "D30:05", "junk"]) == [
        "D8:6", "D9:17", "D11:26", "D30:5"]
    assert mb.answers("Ana adopted her dog in 2020.", "In 2020")
    assert not mb.answers("Ana adopted a dog.", "2020, a dog")
    assert not mb.answers("anything", "the")  # no key word: not counted as answered
    # Chinese has no spaces: its key words are found inside the text, each one of them
    assert mb.answers("佳怡: 我家猫叫芝麻，三岁了", "芝麻")
    assert mb.answers("浩然: 买了雅马哈F310，花了一千二百元", "雅马哈F310，一千二百元")
    assert not mb.answers("浩然: 买了雅马哈F310", "雅马哈F310，一千二百元")
    assert not mb.answers("I like cats", "cat")  # an English word is still a whole word


def test_dead_weight_counts_the_memories_no_list_holds() -> None:
    mb = _bench()

    class Graph:  # the one read dead_weight makes: the user's current memories
        def read_memories(self, user_id: str) -> list[Any]:
            return [SimpleNamespace(id=i) for i in {"u1": ["m1", "m2", "m3"], "u2": ["m9"]}[
                user_id]]

    convs = [mb.Conversation("u1", [], []), mb.Conversation("u2", [], [])]
    rows = [{"user": "u1", "ids": ["e1", "m1", *[f"e{i}" for i in range(2, 11)], "m2"]},
            {"user": "u1", "ids": ["m1"]}]
    assert mb.dead_weight(convs, rows, Graph()) == {
        "memories": 4, "never@10": 3, "never@20": 2, "share@10": 0.75, "share@20": 0.5}
