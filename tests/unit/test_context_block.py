"""The context block an agent reads: current facts by person, memories (a superseded one says
so), dated turns, within the budget."""

from __future__ import annotations

from datetime import UTC, datetime

from memq.pipeline.ports import Hit
from memq.workers.api import render_context

AT = datetime(2026, 3, 1, tzinfo=UTC)


def _memory(content: str, status: str) -> Hit:
    return Hit(id=content, type="memory", content=content, score=0.1, event_at=AT,
               created_at=AT, source_turn_ids=["s1/t1"], status=status)


def test_superseded_memories_say_so_and_the_budget_holds() -> None:
    facts = [{"subject": "Maria", "predicate": "lives_in", "object": "Porto", "valid_at": AT},
             {"subject": "user", "predicate": "works_at", "object": "Globex", "valid_at": AT}]
    turn = Hit(id="e1", type="episode", content="I live in Vienna these days.", score=0.1,
               event_at=AT, created_at=AT, source_turn_ids=["s1/t1"], role="user",
               speaker="Maria")
    hits = [_memory("Maria lives in Porto.", "current"),
            _memory("Maria lives in Vienna.", "superseded"), turn]
    block = render_context(facts, hits, max_tokens=800)
    assert block.splitlines() == [
        "Known facts (current), by person:",
        "- The user: works at Globex (since 2026-03-01)",
        "- Maria: lives in Porto (since 2026-03-01)",
        "Relevant memories:",
        "- Maria lives in Porto. (2026-03-01)",
        "- Maria lives in Vienna. (2026-03-01, no longer true)",
        "Relevant past messages:",
        "- [2026-03-01] Maria: I live in Vienna these days."]
    short = render_context(facts, hits, max_tokens=20)
    assert len(short) <= 80 and short.startswith("Known facts")
