"""The Celery side of memq: app, thin tasks, coordination in Redis, wiring, CLI."""
