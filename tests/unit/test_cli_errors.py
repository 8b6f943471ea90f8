"""``memq``'s one-line errors say what to do about the failure they name."""

from __future__ import annotations

from memq.pipeline.errors import TransientError, UserBusy
from memq.workers.cli import one_line


def test_a_busy_user_is_not_blamed_on_the_services() -> None:
    text, code = one_line(UserBusy("user u1 is busy"))
    assert code == 3 and "try again" in text and "service up" not in text


def test_another_transient_failure_points_at_the_services() -> None:
    text, code = one_line(TransientError("chroma timed out"))
    assert code == 3 and "is the service up?" in text
