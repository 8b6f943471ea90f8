"""`memq enqueue` input: JSON Lines of turns -> per-session batches plus line errors.

Only ``parse_lines`` (pure); ``enqueue`` needs Redis and is not called here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from memq.schemas import IngestBatch
from memq.workers.client import LineError, parse_lines


def line(turn_id: str = "t1", *, user: str = "u1", session: str = "s1", content: str = "hi",
         ts: str = "2024-05-01T09:00:00+00:00", drop: str | None = None, **extra: Any) -> str:
    data: dict[str, Any] = {"user_id": user, "session_id": session, "turn_id": turn_id,
                            "role": "user", "content": content, "timestamp": ts, **extra}
    if drop:
        del data[drop]
    return json.dumps(data)


def ts(minute: int) -> str:
    return f"2024-05-01T09:{minute:02d}:00+00:00"


def by_key(batches: list[IngestBatch]) -> dict[tuple[str, str], list[str]]:
    return {(b.user_id, b.session_id): [t.turn_id for t in b.turns] for b in batches}


def test_good_lines_grouped_per_user_and_session() -> None:
    batches, errors = parse_lines([
        line("a1", session="s1", ts=ts(1)),
        line("b1", session="s2", ts=ts(2)),
        line("a2", session="s1", ts=ts(0)),
        line("c1", user="u2", session="s1", ts=ts(3)),
    ])
    assert errors == []
    assert by_key(batches) == {
        ("u1", "s1"): ["a2", "a1"],  # event order inside a batch
        ("u1", "s2"): ["b1"],
        ("u2", "s1"): ["c1"],
    }
    (first,) = [b for b in batches if (b.user_id, b.session_id) == ("u1", "s1")]
    assert first.turns[0].timestamp == datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def test_not_json_reported_with_line_number() -> None:
    batches, errors = parse_lines([line("t1"), "{not json", line("t2", ts=ts(1))])
    assert len(errors) == 1
    assert errors[0].line == 2
    assert errors[0].reason.startswith("not JSON")
    assert by_key(batches) == {("u1", "s1"): ["t1", "t2"]}


@pytest.mark.parametrize("field", ["user_id", "session_id", "turn_id", "role", "content",
                                   "timestamp"])
def test_missing_field_names_the_field(field: str) -> None:
    batches, errors = parse_lines([line("ok"), line("t2", drop=field)])
    assert [e.line for e in errors] == [2]
    assert errors[0].reason.startswith(f"{field}: ")
    assert "required" in errors[0].reason.lower()
    assert by_key(batches) == {("u1", "s1"): ["ok"]}


@pytest.mark.parametrize("bad_ts", ["yesterday", "2024-13-01T00:00:00Z",
                                    "2024-05-01T09:00:00"])  # the last one: no timezone
def test_bad_timestamp_names_the_field(bad_ts: str) -> None:
    batches, errors = parse_lines([line("ok"), line("bad", ts=bad_ts)])
    assert [(e.line, e.reason.split(":")[0]) for e in errors] == [(2, "timestamp")]
    assert len(batches) == 1


def test_other_field_errors_name_the_field() -> None:
    _, errors = parse_lines([
        line("t1", role="robot"),
        line("t 2"),
        line("t3", content="   "),
        line("t4", extra_field=1),
        "[1, 2]",
    ])
    assert [(e.line, e.reason.split(":")[0]) for e in errors] == [
        (1, "role"), (2, "turn_id"), (3, "content"), (4, "extra_field"), (5, "line")]


def test_several_problems_in_one_line_all_reported() -> None:
    _, errors = parse_lines([line("t1", role="robot", ts="nope")])
    (err,) = errors
    assert "role: " in err.reason
    assert "timestamp: " in err.reason


def test_blank_lines_skipped_but_counted() -> None:
    batches, errors = parse_lines(["", line("t1"), "   \n", "\n", "oops", line("t2", ts=ts(1))])
    assert errors == [LineError(5, errors[0].reason)]
    assert by_key(batches) == {("u1", "s1"): ["t1", "t2"]}


def test_lines_with_trailing_newlines_as_from_a_file() -> None:
    batches, errors = parse_lines([line("t1") + "\n", line("t2", ts=ts(1)) + "\n"])
    assert errors == []
    assert by_key(batches) == {("u1", "s1"): ["t1", "t2"]}


def test_identical_repeat_folded() -> None:
    batches, errors = parse_lines([line("t1", content="same"), line("t1", content="same")])
    assert errors == []
    (b,) = batches
    assert [(t.turn_id, t.content) for t in b.turns] == [("t1", "same")]


def test_repeat_with_other_content_is_an_error() -> None:
    batches, errors = parse_lines([line("t1", content="first"), line("t1", content="second")])
    assert [e.line for e in errors] == [2]
    assert "'t1'" in errors[0].reason
    assert "repeated" in errors[0].reason
    (b,) = batches
    assert [t.content for t in b.turns] == ["first"]  # the first one stands


def test_same_turn_id_in_other_session_is_not_a_repeat() -> None:
    batches, errors = parse_lines([line("t1", session="s1", content="a"),
                                   line("t1", session="s2", content="b")])
    assert errors == []
    assert by_key(batches) == {("u1", "s1"): ["t1"], ("u1", "s2"): ["t1"]}


def test_nothing_in_nothing_out() -> None:
    assert parse_lines([]) == ([], [])
    assert parse_lines(["", "  "]) == ([], [])


def test_session_longer_than_one_batch_does_not_crash() -> None:
    lines = [line(f"t{i:04d}", ts=f"2024-05-01T{i // 60 % 24:02d}:{i % 60:02d}:00+00:00",
                  content=f"turn {i}") for i in range(2_001)]
    batches, errors = parse_lines(lines)
    accounted = sum(len(b.turns) for b in batches) + len(errors)
    assert accounted == 2_001


def test_every_bad_line_gets_a_verdict_and_the_good_ones_go_through() -> None:
    raw: list[str | bytes] = [
        line("g1").encode(),
        b"\xff\xfe not utf-8\n",
        "[" * 100_000 + "]" * 100_000,
        '{"user_id": "u1", "n": ' + "9" * 5_000 + "}",
        line("old", ts="1969-12-31T23:59:59+00:00"),
        line("far", ts="9999-01-01T00:00:00+00:00"),
        line("meta", metadata={"blob": "x" * 10_000}),
        line("g2", ts=ts(5)),
    ]
    batches, errors = parse_lines(raw)
    assert by_key(batches) == {("u1", "s1"): ["g1", "g2"]}
    verdicts = {e.line: e.reason for e in errors}
    assert sorted(verdicts) == [2, 3, 4, 5, 6, 7]
    assert verdicts[2].startswith("not UTF-8")
    assert "nested too deep" in verdicts[3]
    assert verdicts[4].startswith("not JSON memq can take")
    assert "timestamp must be from 1970-01-01" in verdicts[5]
    assert "timestamp must be from 1970-01-01" in verdicts[6]
    assert "metadata is" in verdicts[7]
    assert all("\n" not in r for r in verdicts.values())  # one line each


def test_a_long_session_is_split_by_text_size() -> None:
    big = "x" * 20_000
    lines = [line(f"t{i}", content=big, ts=ts(i % 60)) for i in range(40)]  # 800 KB
    batches, errors = parse_lines(lines)
    assert errors == []
    assert len(batches) == 4
    assert all(sum(len(t.content) for t in b.turns) <= 256 * 1024 for b in batches)
    assert sum(len(b.turns) for b in batches) == 40


def test_turn_ids_repeat_across_sessions() -> None:
    batches, errors = parse_lines([line("t1", session="s1"), line("t1", session="s2")])
    assert errors == []
    assert sorted(b.refs()[0] for b in batches) == ["s1/t1", "s2/t1"]


def test_a_turn_dated_past_the_servers_clock_is_refused_with_its_reason() -> None:
    from datetime import timedelta

    from memq.workers.client import FutureTurn, check_times, too_late

    now = datetime.now(UTC)
    soon, late = now + timedelta(seconds=60), now + timedelta(days=365 * 73)
    batches, errors = parse_lines([line("t1", ts=soon.isoformat()),
                                   line("t2", ts=late.isoformat())])
    assert by_key(batches) == {("u1", "s1"): ["t1"]}  # within the skew: taken
    assert [e.line for e in errors] == [2]
    assert "later than the server's clock allows" in errors[0].reason
    assert "MEMQ_MAX_CLOCK_SKEW_S" in errors[0].reason and "\n" not in errors[0].reason
    assert too_late(late, now, 300) is not None and too_late(soon, now, 300) is None
    (batch,) = parse_lines([line("t3", ts=now.isoformat())])[0]
    future = batch.model_copy(update={"turns": [batch.turns[0].model_copy(
        update={"timestamp": late})]})
    with pytest.raises(FutureTurn, match="nothing was published"):
        check_times([future], now=now, skew_s=300)
    check_times([batch], now=now, skew_s=300)  # today's turn passes
