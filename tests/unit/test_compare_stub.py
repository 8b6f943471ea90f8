"""scripts/bench compare's stub LLM answers each system's real prompt: memq's extraction prompt
as memq renders it, and mem0's additive extraction prompt as mem0 2.2.1 lays it out. If a
prompt's layout drifts, the comparison would silently measure a system storing nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest
from script_loader import load_script

from memq.pipeline.prompts import extract_memories
from memq.schemas import Turn

AT = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)


def _compare() -> ModuleType:
    return load_script("compare")


def test_memq_prompt_gets_one_memory_per_user_turn() -> None:
    compare = _compare()
    turns = [Turn(turn_id="t1", role="user", speaker="Maria", content="I live in Vienna now.",
                  timestamp=AT),
             Turn(turn_id="t2", role="assistant", content="Nice! How is it?", timestamp=AT),
             Turn(turn_id="t3", role="user", content="我现在住在杭州。", timestamp=AT)]
    request = {"messages": extract_memories.render(turns)}
    answer = extract_memories.parse_answer(compare.answer(request))
    assert [(m.content, m.source) for m in answer.memories] == [
        ("The user said: I live in Vienna now.", [1]),
        ("The user said: 我现在住在杭州。", [3])]
    assert answer.rejected == 0


def test_mem0_prompt_gets_one_memory_per_new_user_message() -> None:
    compare = _compare()
    prompt = ("## Summary\n\n\n## Last k Messages\nuser: an older message\n\n"
              "## Existing Memories\n[]\n\n## New Messages\nuser: I adopted a dog named Rex.\n"
              "assistant: Lovely!\nuser: 我对花生过敏。\n\n\n## Observation Date\n2026-11-30")
    got = json.loads(compare.answer({"messages": [{"role": "system", "content": "…"},
                                                  {"role": "user", "content": prompt}]}))
    assert got == {"memory": [{"text": "The user said: I adopted a dog named Rex."},
                              {"text": "The user said: 我对花生过敏。"}]}


def test_memq_judge_prompt_keeps_both() -> None:
    compare = _compare()
    request = {"messages": [{"role": "system", "content": "…"},
                            {"role": "user", "content": "EXISTING memory:\n{}\n\nNEW memory:\n{}"}]}
    assert json.loads(compare.answer(request))["decision"] == "new"


def test_warm_up_ends_when_neo4j_stops_getting_cheaper() -> None:
    settled = _compare().settled
    falling = [12.0, 9.0, 7.5, 6.0, 5.0, 4.4, 4.0, 3.6, 3.3, 3.0]  # C2 still compiling
    assert not settled(falling)
    assert not settled([3.0] * 9)  # too few passes to tell
    assert not settled([*falling, 2.9, 2.8, 3.0, 2.7, 2.9])  # 22 % below the window before
    assert settled([*falling, 2.9, 2.8, 3.0, 2.7, 2.9, 2.8, 2.9, 2.7, 2.9, 2.8])
    # noise above the window before is settled too; a 15 % drop is not
    assert settled([3.0] * 5 + [3.2] * 5)
    assert not settled([3.0] * 5 + [2.5] * 5)
    # a slow pass in the last window does not hide that the others still fall
    assert not settled([4.0, 4.9, 4.6, 3.2, 4.6, 4.7, 2.9, 3.3, 3.2, 5.1])


def _locomo_file(tmp_path: Path, conversations: int) -> Path:
    samples = []
    for n in range(conversations):
        conv: dict[str, object] = {"speaker_a": "Ann", "speaker_b": "Bob"}
        for s in (1, 2, 3):
            conv[f"session_{s}_date_time"] = f"1:56 pm on {s} May, 2023"
            conv[f"session_{s}"] = [
                {"speaker": "Ann" if i % 2 == 0 else "Bob", "dia_id": f"D{s}:{i + 1}",
                 "text": "" if (s, i) == (1, 1) else f"conversation {n} session {s} turn {i}"}
                for i in range(4)]
        samples.append({"sample_id": f"c{n}", "conversation": conv, "qa": []})
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples))
    return path


def test_dataset_turns_split_evenly_over_users_sessions_interleaved(tmp_path: Path) -> None:
    compare = _compare()
    path = _locomo_file(tmp_path, 3)
    one = compare.dataset_turns(str(path), 1, 6)
    # the empty published turn is skipped; the second session is cut short at 6 turns
    assert [t["content"] for t in one] == [
        "conversation 0 session 1 turn 0", "conversation 0 session 1 turn 2",
        "conversation 0 session 1 turn 3", "conversation 0 session 2 turn 0",
        "conversation 0 session 2 turn 1", "conversation 0 session 2 turn 2"]
    assert {t["speaker"] for t in one} == {"Ann", "Bob"}
    assert one[0]["timestamp"].startswith("2023-05-01T13:56")
    two = compare.dataset_turns(str(path), 2, 8)
    order = [(t["user_id"], t["session_id"]) for t in two]
    assert list(dict.fromkeys(order)) == [("u0", "session_1"), ("u1", "session_1"),
                                          ("u0", "session_2"), ("u1", "session_2")]
    assert [sum(t["user_id"] == u for t in two) for u in ("u0", "u1")] == [4, 4]
    with pytest.raises(SystemExit, match="fewer than --users 4"):
        compare.dataset_turns(str(path), 4, 8)


def test_lengths_reports_the_turn_length_distribution() -> None:
    compare = _compare()
    turns = [{"content": "x" * n} for n in (10, 20, 30, 40)]
    assert compare.lengths(turns) == "turn length mean 25 chars, p50 30, p90 40, max 40"
