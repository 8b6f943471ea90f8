"""The pipeline's two stage messages, ids only (schemas.StageMessage), published as an agent's
enqueue publishes: built by workers.wire, pushed by workers.queues, without Celery. Whatever
publishes -- the tasks, the reaper, and whoever holds a user's claim and hands it off (check,
correct, forget, the lifecycle jobs, a shard move: ``section.hold``) -- loads no Celery app."""

from __future__ import annotations

from ..schemas import StageMessage
from . import queues, wiring
from .wire import task_message


def publish_extract(delivery_id: str, user_id: str) -> None:
    """``memq.extract`` of a delivery (any worker)."""
    body = StageMessage(user_id=user_id, delivery_id=delivery_id).model_dump()
    queues.publish(wiring.coord(), *task_message("memq.extract", [body]))


def publish_apply(user_id: str, token: str) -> None:
    """``memq.apply``: the user's drain, carrying the claim (a ``section.Handoff``)."""
    body = StageMessage(user_id=user_id, token=token).model_dump()
    queues.publish(wiring.coord(), *task_message("memq.apply", [body]))
