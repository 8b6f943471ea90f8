"""Fail points: named places in a task's path where a test or a bench may act, e.g. stall a
worker there so that it can be frozen or killed at that very moment (tests/faults.py).

memq registers nothing here and no setting turns anything on: :func:`at` does nothing until a
plugin loaded into the worker registers a callback (:func:`register`). The points, the name
each callback is given:

    memq.extract, memq.apply   a stage's start (workers.tasks.Stage.guard)
    memq.upsert_graph          a plan made, not yet committed (workers.tasks._apply)
"""

from __future__ import annotations

from collections.abc import Callable

Callback = Callable[[str], None]  # (point)

_callbacks: list[Callback] = []


def register(callback: Callback) -> None:
    """Call ``callback(point)`` at every fail point this process passes from now on."""
    _callbacks.append(callback)


def unregister(callback: Callback) -> None:
    _callbacks.remove(callback)


def at(point: str) -> None:
    """The fail point ``point``: each registered callback, in the order registered."""
    for callback in _callbacks:
        callback(point)
