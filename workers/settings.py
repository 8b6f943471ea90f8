"""Configuration, from MEMQ_* environment variables, read in one place (``load``)."""

from __future__ import annotations

from typing import Literal

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipeline.policy import Thresholds


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMQ_", extra="ignore")

    redis_url: str = "redis://127.0.0.1:6379/0"
    chroma_host: str = "127.0.0.1"
    chroma_port: int = 8000
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str | None = None
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None

    # LLM: unset base URL and model -> the offline rule-based extractor.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr = SecretStr("unused")
    llm_timeout_s: float = 60.0
    llm_attempts: int = 4

    embedder: Literal["local", "openai"] = "local"
    embed_model: str = "text-embedding-3-small"
    embed_base_url: str | None = None
    embed_api_key: SecretStr = SecretStr("unused")

    min_confidence: float = 0.7
    duplicate_similarity: float = 0.95
    ambiguous_similarity: float = 0.92
    chunk_tokens: int = 3_000

    lock_lease_s: float = 60.0  # per-user lock; renewed at every stage
    task_retries: int = 6  # transient errors, exponential backoff
    plan_ttl_s: int = 7 * 24 * 3600
    # An unacknowledged task (its worker died) is redelivered after this; keep it longer than
    # the longest task.
    visibility_timeout_s: int = 3600
    restore_sweep_s: int = 60  # how often workers look for such abandoned tasks

    # Failure testing only: sleep this long at the start of the named stage (e.g. memq.merge),
    # so a test can kill the worker in the middle of it. Off unless both are set.
    fault_delay_stage: str | None = None
    fault_delay_s: float = 0.0

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def thresholds(self) -> Thresholds:
        return Thresholds(min_confidence=self.min_confidence,
                          duplicate=self.duplicate_similarity,
                          ambiguous=self.ambiguous_similarity, chunk_tokens=self.chunk_tokens)


def load() -> Settings:
    return Settings()
