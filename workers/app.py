"""The Celery app. ``celery -A workers.app worker`` and ``memq worker`` both start it."""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.schedules import crontab
from celery.signals import worker_process_init, worker_ready

from . import broker, wire, wiring

STRATEGY = f"{broker.__name__}:strategy"  # every memq task: unreadable messages quarantined


def create_app() -> Celery:
    s = wiring.settings()
    app = Celery("memq", include=["memq.workers.tasks", "memq.workers.lifecycle"])
    app.conf.update(
        broker_url=s.redis_url,
        broker_transport="memq.workers.broker:Transport",  # kombu's Redis, poison-proof
        task_ignore_result=True,  # completion is tracked in Redis by memq itself
        result_backend=None,
        task_serializer="json",
        accept_content=["json"],
        task_acks_late=True,  # a task is acknowledged after it ran...
        task_reject_on_worker_lost=True,  # ...and redelivered if its worker died
        worker_prefetch_multiplier=1,
        worker_max_memory_per_child=s.max_memory_per_child_kb,
        worker_max_tasks_per_child=s.max_tasks_per_child,
        # Longer than the longest task: a reserved, unacknowledged task is redelivered after it.
        broker_transport_options={
            "visibility_timeout": s.visibility_timeout_s,
            "unacked_restore_interval": s.restore_sweep_s,
            "unacked_restore_throttle": 1,  # every sweep scans (kombu's default: every 10th)
        },
        task_default_queue=wire.STORE_QUEUE,  # memq.apply, the lifecycle
        task_routes={"memq.extract": {"queue": wire.EXTRACT_QUEUE}},
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,  # memq's log lines go out as they are, not as WARNINGs
        worker_send_task_events=False,
    )
    return app


def _cron(expr: str) -> crontab:
    minute, hour, day_of_month, month, day_of_week = expr.split()
    return crontab(minute=minute, hour=hour, day_of_month=day_of_month, month_of_year=month,
                   day_of_week=day_of_week)


def beat_schedule() -> dict[str, dict[str, Any]]:
    """The lifecycle jobs (workers.lifecycle), each fanned out per user by a worker."""
    s = wiring.settings()
    return {f"memq-{job}": {"task": "memq.lifecycle.fanout", "schedule": _cron(expr),
                            "args": (job,)}
            for job, expr in (("decay", s.beat_decay), ("expire", s.beat_expire),
                              ("consolidate", s.beat_consolidate),
                              ("capacity", s.beat_capacity),
                              ("relocate", s.beat_relocate))}


app = create_app()
app.conf.beat_schedule = beat_schedule()


@worker_process_init.connect
def _init_process(**_: object) -> None:
    wiring.configure_logging()
    wiring.one_blas_thread()
    # each process that runs tasks (prefork's children, or solo's one) loads its own model
    # and driver; the first to rehearse also plans Neo4j's statements for every other
    _warm_in_background("pool process")


@worker_ready.connect
def _start_reaper(**_: object) -> None:
    from . import events, reaper  # noqa: PLC0415

    wiring.configure_logging()
    reaper.start()
    events.start()


def _warm_in_background(where: str) -> None:
    """The write path rehearsed (workers.warm), beside the work: a batch that arrives
    meanwhile is served at once, as it would have been cold."""
    import threading  # noqa: PLC0415

    from .warm import warm  # noqa: PLC0415

    threading.Thread(target=warm, args=(where,), name="memq-warm", daemon=True).start()
