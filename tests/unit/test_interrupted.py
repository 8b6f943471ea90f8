"""A task failing because its process is being stopped is an interruption, not a failure."""

from __future__ import annotations

import pytest

from memq.workers.tasks import _interrupted


def _raise_during(first: BaseException, then: Exception) -> Exception:
    try:
        try:
            raise first
        except (SystemExit, KeyboardInterrupt, ValueError):
            raise then  # noqa: B904  (implicit context, as in the Neo4j driver's cleanup)
    except BufferError as exc:
        return exc


@pytest.mark.parametrize("first", [SystemExit(-15), KeyboardInterrupt()])
def test_an_error_raised_while_the_process_exits_is_an_interruption(
        first: BaseException) -> None:
    exc = _raise_during(first, BufferError("Existing exports of data"))
    assert _interrupted(exc)
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = exc
    assert _interrupted(wrapped)


def test_an_ordinary_error_is_not() -> None:
    assert not _interrupted(_raise_during(ValueError("bad"), BufferError("x")))
    assert not _interrupted(BufferError("x"))
    loop = ValueError("loop")
    loop.__context__ = loop
    assert not _interrupted(loop)
