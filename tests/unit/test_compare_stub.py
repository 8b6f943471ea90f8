"""scripts/bench compare's stub LLM answers each system's real prompt: memq's extraction prompt
as memq renders it, and mem0's additive extraction prompt as mem0 2.2.1 lays it out. If a
prompt's layout drifts, the comparison would silently measure a system storing nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import ModuleType

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
