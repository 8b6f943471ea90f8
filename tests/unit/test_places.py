"""The city lexicon and the moves it names (memq.pipeline.places, rules_zh._in_city)."""

from __future__ import annotations

from datetime import UTC, datetime

from memq.pipeline import places
from memq.pipeline.rules import RuleExtractor
from memq.pipeline.rules_zh import read
from memq.schemas import Turn


def test_cities_are_found_longest_first_and_in_order() -> None:
    assert places.mentioned("以前在乌鲁木齐，现在在成都") == [(3, "乌鲁木齐"), (11, "成都")]
    assert places.mentioned("住在高新区") == []
    assert len(set(places.cities())) == len(places.cities())


def test_a_district_is_named_with_the_city_its_sentence_talks_about() -> None:
    assert [(s.predicate, s.value) for s in read("成都这边挺好，住在高新区")] == [
        ("lives_in", "成都高新区")]
    assert [s.value for s in read("住在海淀区")] == ["海淀区"]  # no city said: as said
    # a clause read alone takes its city from its sentence
    turn = Turn(turn_id="t1", role="user", content="成都这边挺好，住在高新区，通勤二十分钟",
                timestamp=datetime(2026, 11, 2, tzinfo=UTC))
    assert [c.triples[0].object for c in RuleExtractor().extract([turn])] == ["成都高新区"]


def test_a_move_to_the_city_the_sentence_talks_about() -> None:
    said = read("成都的冬天好阴啊，搬过来一个月没见过太阳")
    assert [(s.predicate, s.value, s.change) for s in said] == [("lives_in", "成都", True)]
    assert read("从北京搬过来半年了") == []  # the city left, not reached
    assert read("我老婆搬过来了") == []  # no city
    assert read("我们打算明年搬过来，成都挺好") == []  # a plan
