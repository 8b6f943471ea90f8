"""The context block an agent reads: only what the search ranked, current apart from no longer
true, dated turns with who said them (and the turn before when known), within the budget."""

from __future__ import annotations

from datetime import UTC, datetime

from memq.pipeline.context import render_context
from memq.pipeline.ports import Hit

AT = datetime(2026, 3, 1, tzinfo=UTC)


def _memory(content: str, status: str) -> Hit:
    return Hit(id=content, type="memory", content=content, score=0.1, event_at=AT,
               created_at=AT, source_turn_ids=["s1/t1"], status=status)


def _turn(hit_id: str, content: str, speaker: str | None = "Maria") -> Hit:
    return Hit(id=hit_id, type="episode", content=content, score=0.1, event_at=AT,
               created_at=AT, source_turn_ids=[f"s1/{hit_id}"], role="user", speaker=speaker)


def test_current_apart_from_superseded_then_dated_turns_and_the_budget_holds() -> None:
    turn = _turn("t2", "I live in Porto these days.")
    hits = [_memory("Maria lives in Porto.", "current"),
            _memory("Maria lives in Vienna.", "superseded"), turn]
    asked = _turn("t1", "Where do you live now?", "Ana")
    block = render_context(hits, max_tokens=800, before={"t2": asked})
    assert block.splitlines() == [
        "What is known (current):",
        "- Maria lives in Porto. (since 1 Mar 2026)",
        "No longer true:",
        "- Maria lives in Vienna. (stated 1 Mar 2026)",
        "Past messages, most relevant first:",
        "- [1 Mar 2026] Maria: I live in Porto these days.",
        "  (before it) [1 Mar 2026] Ana: Where do you live now?"]
    short = render_context(hits, max_tokens=20)
    assert len(short) <= 80 and short.startswith("What is known")
    assert render_context([], max_tokens=800) == ""


def test_a_turn_already_listed_is_not_repeated_as_the_one_before() -> None:
    first, second = _turn("t1", "Did you move?", "Ana"), _turn("t2", "Yes, to Porto.")
    block = render_context([second, first], max_tokens=800, before={"t2": first})
    assert block.count("Did you move?") == 1


def test_the_turn_before_shows_only_its_end() -> None:
    long_answer = _turn("t1", "x" * 900 + " Anything else?", None)
    reply = _turn("t2", "Yes: my gym is at 6 pm.")
    block = render_context([reply], max_tokens=800, before={"t2": long_answer})
    assert block.splitlines()[-1] == "  (before it) [1 Mar 2026] user: …" + "x" * 185 + (
        " Anything else?")


def test_a_turn_shows_the_dates_its_relative_times_meant() -> None:
    # said on Sunday 1 March 2026
    block = render_context([_turn("t1", "I started my new job last week, and I met Jo "
                                        "yesterday.")], max_tokens=800)
    assert block.splitlines()[-1] == (
        "- [1 Mar 2026] Maria: I started my new job last week, and I met Jo yesterday. "
        "(last week = the week before 1 March 2026; yesterday = 28 February 2026)")
    assert "(" not in render_context([_turn("t1", "I like tea.")], max_tokens=800)


def test_a_long_turn_shows_its_sentences_about_the_query() -> None:
    long = _turn("t1", "We planned the trip for weeks. " * 15 + "My doctor, Dr. Patel, says "
                 "the nasal spray helps. " + "The beach was lovely. " * 20)
    block = render_context([long], max_tokens=800, query="Which doctors did I visit?")
    assert block.splitlines()[-1] == (
        "- [1 Mar 2026] Maria: … My doctor, Dr. Patel, says the nasal spray helps. …")
    # no sentence about it: the turn's start, marked as cut
    other = render_context([long], max_tokens=800, query="What car do I drive?")
    assert other.splitlines()[-1].endswith("The beach was lovely. …")
    assert len(other.splitlines()[-1]) < 700


def test_a_turn_that_does_not_fit_makes_way_for_shorter_ones() -> None:
    hits = [_turn("t1", "I adore hiking. " * 12), _turn("t2", "x" * 500),
            _turn("t3", "I live in Porto.")]
    block = render_context(hits, max_tokens=100)
    assert "I live in Porto." in block and "xxx" not in block and len(block) <= 400


def test_what_changed_says_what_holds_now() -> None:
    from dataclasses import replace

    old_memory = replace(_memory("Maria lives in Vienna.", "superseded"),
                         current="Maria lives in Porto.")
    old_turn = replace(_turn("t1", "I live in Vienna."), current="Maria lives in Porto.")
    block = render_context([old_memory, old_turn], max_tokens=800).splitlines()
    assert "- Maria lives in Vienna. (stated 1 Mar 2026; now: Maria lives in Porto.)" in block
    assert ("- [1 Mar 2026] Maria: I live in Vienna. (earlier — now: Maria lives in Porto.)"
            in block)
