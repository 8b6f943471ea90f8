"""The ingest contract: IngestBatch / Turn validation, ordering, batch ids, JSON Schema."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from memq.schemas import SCHEMA_VERSION, IngestBatch, StageMessage, Turn, TurnLine

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def turn_data(turn_id: str = "t1", content: str = "hello", at: datetime = T0,
              **extra: Any) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": "user", "content": content, "timestamp": at, **extra}


def batch(*turns: dict[str, Any], **extra: Any) -> IngestBatch:
    data = {"user_id": "u1", "session_id": "s1", "turns": list(turns), **extra}
    return IngestBatch.model_validate(data)


def error_locs(exc: pytest.ExceptionInfo[ValidationError]) -> list[tuple[Any, ...]]:
    return [e["loc"] for e in exc.value.errors()]


def test_turns_sorted_by_timestamp_ties_keep_the_producers_order() -> None:
    b = batch(
        turn_data("c", at=T0 + timedelta(minutes=1)),
        turn_data("D1:10", at=T0),
        turn_data("D1:2", at=T0),
        turn_data("0", at=T0 + timedelta(minutes=2)),
    )
    assert [t.turn_id for t in b.turns] == ["D1:10", "D1:2", "c", "0"]
    assert b.last_event_at == T0 + timedelta(minutes=2)


def test_turn_refs_are_per_session() -> None:
    one = IngestBatch(user_id="u1", session_id="s1", turns=[Turn.model_validate(turn_data("t1"))])
    two = IngestBatch(user_id="u1", session_id="s2", turns=[Turn.model_validate(turn_data("t1"))])
    assert one.refs() == ["s1/t1"] and two.refs() == ["s2/t1"]


def test_stage_messages_are_small_and_strict() -> None:
    msg = StageMessage(user_id="u1", delivery_id="a" * 32)
    assert len(msg.model_dump_json()) < 200
    with pytest.raises(ValidationError):
        StageMessage.model_validate({"user_id": "u1", "batch": {}})


def test_sorting_compares_instants_across_offsets() -> None:
    plus2 = datetime(2024, 5, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))  # 10:30Z
    b = batch(turn_data("late", at=T0 + timedelta(hours=1)), turn_data("later", at=plus2))
    assert [t.turn_id for t in b.turns] == ["late", "later"]


def test_duplicate_turn_ids_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate turn_id 't1'"):
        batch(turn_data("t1"), turn_data("t1", content="other", at=T0 + timedelta(1)))


def test_naive_timestamp_rejected() -> None:
    with pytest.raises(ValidationError, match="timezone") as exc:
        batch(turn_data(at=datetime(2024, 5, 1, 9, 0)))
    assert error_locs(exc) == [("turns", 0, "timestamp")]


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_blank_content_rejected(content: str) -> None:
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(content=content))
    assert error_locs(exc) == [("turns", 0, "content")]


def test_unknown_role_rejected() -> None:
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(role="robot"))
    assert error_locs(exc) == [("turns", 0, "role")]


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_known_roles_accepted(role: str) -> None:
    assert batch(turn_data(role=role)).turns[0].role == role


@pytest.mark.parametrize("bad", ["has space", "", "x" * 129, "slash/no", "ünïcode"])
@pytest.mark.parametrize("field", ["user_id", "session_id"])
def test_bad_batch_ids_rejected(field: str, bad: str) -> None:
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(), **{field: bad})
    assert error_locs(exc) == [(field,)]


@pytest.mark.parametrize("bad", ["has space", "x" * 129])
def test_bad_turn_id_rejected(bad: str) -> None:
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(bad))
    assert error_locs(exc) == [("turns", 0, "turn_id")]


def test_id_limits_and_allowed_punctuation() -> None:
    b = batch(turn_data("a" * 128), user_id="user@example.com", session_id="s-1_2.3:4")
    assert len(b.turns[0].turn_id) == 128
    assert b.user_id == "user@example.com"


@pytest.mark.parametrize("version", ["2", "0", 1])
def test_wrong_schema_version_rejected(version: object) -> None:
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(), schema_version=version)
    assert error_locs(exc) == [("schema_version",)]


def test_schema_version_default() -> None:
    assert SCHEMA_VERSION == "1"
    assert batch(turn_data()).schema_version == "1"


def test_empty_turns_and_unknown_fields_rejected() -> None:
    with pytest.raises(ValidationError):
        batch()
    with pytest.raises(ValidationError) as exc:
        batch(turn_data(), priority="high")
    assert error_locs(exc) == [("priority",)]


def test_batch_id_deterministic_and_order_independent() -> None:
    one = batch(turn_data("a"), turn_data("b", "world", T0 + timedelta(minutes=1)))
    two = batch(turn_data("b", "world", T0 + timedelta(minutes=1)), turn_data("a"))
    assert one.batch_id == two.batch_id
    assert one.batch_id.startswith("b_")
    assert len(one.batch_id) == 2 + 24


def test_batch_id_changes_with_content_user_session_or_turn_id() -> None:
    base = batch(turn_data("a", "hello")).batch_id
    assert batch(turn_data("a", "hello!")).batch_id != base
    assert batch(turn_data("b", "hello")).batch_id != base
    assert batch(turn_data("a", "hello"), user_id="u2").batch_id != base
    assert batch(turn_data("a", "hello"), session_id="s2").batch_id != base


def test_json_round_trip() -> None:
    b = batch(turn_data("a", "我喜欢简洁的回答。", metadata={"lang": "zh"}))
    assert IngestBatch.model_validate_json(b.model_dump_json()) == b


def test_json_schema_export() -> None:
    schema = IngestBatch.model_json_schema()
    props = schema["properties"]
    assert "turns" in props
    assert "schema_version" in props
    assert props["schema_version"].get("const") == "1"
    assert set(schema["required"]) >= {"user_id", "session_id", "turns"}


def test_turn_line_splits_into_turn() -> None:
    line = TurnLine.model_validate(
        {**turn_data("t9", "hi"), "user_id": "u1", "session_id": "s1"})
    assert line.turn() == Turn(turn_id="t9", role="user", content="hi", timestamp=T0)
    assert type(line.turn()) is Turn


def test_models_are_frozen() -> None:
    b = batch(turn_data())
    with pytest.raises(ValidationError):
        b.turns[0].content = "changed"  # type: ignore[misc]
