"""The English frames (pipeline/frames_en.json) read each of their own examples as given and
none of their counter-examples; one test runs them all, so a frame added to the data is tested
by its examples."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memq.pipeline import frames, when

SAID = datetime(2026, 4, 15, 9, 0, tzinfo=UTC)
LANGS = ("en", "zh")
EXAMPLES = [(lang, f.slot, ex) for lang in LANGS for f in frames.load(lang).frames
            for ex in f.examples]
COUNTER = [(lang, f.slot, text) for lang in LANGS for f in frames.load(lang).frames
           for text in f.counter]


def _slot_of(reading: frames.Reading, slot: str) -> bool:
    """A frame of "uses" reads a tool into its job's slot (uses_<job>, or where production
    runs)."""
    if slot == "uses":
        return reading.slot.startswith("uses_") or reading.slot == "production_environment"
    return reading.slot == slot


@pytest.mark.parametrize(("lang", "slot", "example"), EXAMPLES,
                         ids=[ex["say"][:40] for _, _, ex in EXAMPLES])
def test_every_example_is_read_as_given(lang: str, slot: str, example: dict[str, Any]) -> None:
    found = [r for r in frames.read(example["say"], SAID, lang) if _slot_of(r, slot)]
    assert found, f"{slot}: nothing read in {example['say']!r}"
    assert {r.new for r in found} - {None} == ({example["new"]} if "new" in example else set())
    assert {r.old for r in found} - {None} == ({example["old"]} if "old" in example else set())
    if "role" in example:
        assert [r.role for r in found if r.role] == [example["role"]]
    if "when" in example:
        assert any(r.span is not None and r.span.text == example["when"] for r in found)
    if example.get("change") is False:
        assert not any(r.change for r in found)


@pytest.mark.parametrize(("lang", "slot", "text"), COUNTER,
                         ids=[t[:40] for _, _, t in COUNTER])
def test_no_counter_example_is_read(lang: str, slot: str, text: str) -> None:
    assert [r for r in frames.read(text, SAID, lang) if _slot_of(r, slot)] == []


def test_every_frame_has_examples_and_counter_examples() -> None:
    assert all(f.examples and f.counter for lang in LANGS for f in frames.load(lang).frames)


@pytest.mark.parametrize(("said", "start", "end"), [
    ("we moved in January", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)),
    ("since May", datetime(2025, 5, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)),
    ("last month", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)),
    ("two weeks ago", datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 4, 2, tzinfo=UTC)),
    ("as of friday", datetime(2026, 4, 10, tzinfo=UTC), datetime(2026, 4, 11, tzinfo=UTC)),
    ("back in the spring", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)),
    ("上个月", datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 4, 1, tzinfo=UTC)),
    ("一月份", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)),
    ("去年底", datetime(2025, 11, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)),
    ("年初", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)),
])
def test_a_time_said_is_a_span_read_from_when_it_was_said(said: str, start: datetime,
                                                           end: datetime) -> None:
    span = when.find(said, SAID)
    assert span is not None and (span.start, span.end) == (start, end)


def test_a_change_holds_from_its_time_never_after_it_was_said() -> None:
    january = when.find("in January", SAID)
    assert when.valid_from(january, SAID) == datetime(2026, 2, 1, tzinfo=UTC)
    spring = when.find("in the spring", SAID)
    assert when.valid_from(spring, SAID) == SAID
    assert when.valid_from(None, SAID) == SAID
    assert when.find("next month", SAID) is not None
    assert when.find("next month", SAID).ahead(SAID)  # type: ignore[union-attr]
    assert when.without_time("Stockholm in January") == "Stockholm"
