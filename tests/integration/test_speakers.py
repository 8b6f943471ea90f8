"""Two people in one conversation keep their facts apart, end to end on the real services:
what Maria says is about Maria, Tom's move supersedes only Tom's workplace, and what the
assistant says is stored as nobody's fact."""

from __future__ import annotations

import json

import pytest

from integration.conftest import Worker, memq, memq_json, wait_done

pytestmark = pytest.mark.integration


def _line(user: str, session: str, turn: str, at: str, content: str, speaker: str | None,
          role: str = "user") -> str:
    row = {"user_id": user, "session_id": session, "turn_id": turn, "role": role,
           "content": content, "timestamp": at}
    if speaker:
        row["speaker"] = speaker
    return json.dumps(row)


def test_two_speakers_keep_their_facts_apart(worker: Worker, user_id: str) -> None:
    day1 = [
        _line(user_id, "s1", "t1", "2026-10-01T09:00:00Z", "I work at Acme Corp.", "Maria"),
        _line(user_id, "s1", "t2", "2026-10-01T09:01:00Z", "I work at Globex.", "Tom"),
        _line(user_id, "s1", "t3", "2026-10-01T09:02:00Z", "I live in Lisbon.", "Maria"),
        _line(user_id, "s1", "t4", "2026-10-01T09:03:00Z", "You work at Initech, Tom.",
              None, role="assistant"),
    ]
    day2 = [_line(user_id, "s2", "t1", "2026-11-01T09:00:00Z", "I work at Initech now.", "Tom")]
    memq("enqueue", "-", stdin="\n".join(day1) + "\n")
    wait_done()
    memq("enqueue", "-", stdin="\n".join(day2) + "\n")
    wait_done()

    facts = memq_json("facts", "--user", user_id)
    works = {(f["subject"], f["object"]): f for f in facts if f["predicate"] == "works_at"}
    assert set(works) == {("Maria", "Acme Corp"), ("Tom", "Globex"), ("Tom", "Initech")}
    assert works[("Maria", "Acme Corp")]["invalid_at"] is None  # Tom's move is not Maria's
    assert works[("Tom", "Globex")]["invalid_at"] is not None
    assert works[("Tom", "Initech")]["invalid_at"] is None
    assert all(f["subject"] != "user" for f in facts)  # nobody here is "the user"

    current = {m["content"] for m in memq_json("memories", "--user", user_id)}
    assert current == {"Maria works at Acme Corp.", "Tom works at Initech.",
                       "Maria lives in Lisbon."}
    hits = memq_json("search", "--user", user_id, "--k", "6", "where does Maria work?")
    top = hits[0]  # Maria's job, her memory or her own words, never Tom's
    assert top["content"] == "Maria works at Acme Corp." or (
        top["content"] == "I work at Acme Corp." and top["speaker"] == "Maria"), hits[:3]
    speakers = {h["content"]: h.get("speaker") for h in hits if h["type"] == "episode"}
    assert speakers.get("I work at Acme Corp.") == "Maria"


def test_search_finds_a_rare_word_by_bm25_and_keeps_users_apart(worker: Worker,
                                                                 user_id: str) -> None:
    other = f"{user_id}-other"
    lines = [_line(user_id, "s1", f"t{i}", f"2026-10-01T09:0{i}:00Z", text, None)
             for i, text in enumerate(["Ugh, what a week.", "The cabin wifi code is kumquat4711.",
                                       "Anyway, how are you?"], start=1)]
    lines.append(_line(other, "s1", "t1", "2026-10-01T09:00:00Z",
                       "My code is kumquat4711 too.", None))
    memq("enqueue", "-", stdin="\n".join(lines) + "\n")
    wait_done()
    hits = memq_json("search", "--user", user_id, "--k", "3", "kumquat4711")
    assert hits[0]["content"] == "The cabin wifi code is kumquat4711."
    assert all("too" not in h["content"] for h in hits)  # never another user's turn
    assert memq_json("search", "--user", user_id, "--k", "3", "?!") is not None  # no words
