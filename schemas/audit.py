"""Audit entries: every change to a user's memories leaves one."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class Operation(StrEnum):
    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    DROP_DUPLICATE = "drop_duplicate"
    REPAIR = "repair"  # memq check --repair restored a memory both stores disagreed on
    ARCHIVE = "archive"  # decay below the floor, expiry, or over capacity: out of search, kept
    CONSOLIDATE = "consolidate"  # a semantic memory derived from a cluster of episodic ones
    FORGET = "forget"  # a tombstone: ids, operation and time only, no content
    RECALL = "recall"  # a recorded recall: importance boosted, decay clock reset


class AuditEntry(BaseModel):
    """What changed, why, and from which turns. ``before``/``after`` are memory snapshots."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    user_id: str
    memory_id: str
    operation: Operation
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    reason: str
    source_turn_ids: list[str] = Field(default_factory=list)
    batch_id: str
    extractor: str
    prompt_version: str | None = None
    at: AwareDatetime
