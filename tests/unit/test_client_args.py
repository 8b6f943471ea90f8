"""The agent API refuses nonsense before it reaches a store: k and max_tokens (one line)."""

from __future__ import annotations

import pytest

from memq.workers.api import Client
from memq.workers.cli import main


@pytest.mark.parametrize("k", [0, -1, 101])
def test_search_wants_1_to_100_hits(k: int) -> None:
    with pytest.raises(ValueError, match=f"k is {k}: ask for 1 to 100 hits"):
        Client().search("u1", "anything", k)


def test_context_wants_a_positive_budget() -> None:
    with pytest.raises(ValueError, match="max_tokens is 0"):
        Client().context("u1", "anything", max_tokens=0)


@pytest.mark.parametrize("argv", [["search", "--user", "u", "--k", "-1", "q"],
                                  ["context", "--user", "u", "--k", "0", "q"],
                                  ["context", "--user", "u", "--max-tokens", "x", "q"]])
def test_the_cli_refuses_them_as_usage_errors(argv: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "must be 1 or more" in err or "is not a whole number" in err, err


def test_one_string_is_one_message_of_the_users() -> None:
    from datetime import UTC, datetime

    from memq.workers.api import messages_to_batches

    (batch,) = messages_to_batches("u1", "I live in Lisbon.", None, datetime(2026, 3, 1,
                                                                              tzinfo=UTC))
    assert [(t.role, t.content) for t in batch.turns] == [("user", "I live in Lisbon.")]


def test_a_dead_url_says_nothing_answered() -> None:
    import pytest

    from memq.workers.http_client import ApiError, HttpClient

    with pytest.raises(ApiError) as raised:
        HttpClient("http://127.0.0.1:9", api_key="mq_x").memories("u1")
    assert str(raised.value).startswith("nothing answered at http://127.0.0.1:9")
    assert "answered 503" not in str(raised.value) and raised.value.status == 503
