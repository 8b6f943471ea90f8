"""Domain models of memories: what extraction proposes and what the stores keep."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator


class Kind(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    EVENT = "event"
    INSTRUCTION = "instruction"
    PROFILE = "profile"


class Status(StrEnum):
    CURRENT = "current"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


class Triple(BaseModel):
    """subject–predicate–object; ``subject`` is ``user`` for facts about the user."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=80, pattern=r"^[a-z][a-z0-9_]*$")
    object: str = Field(min_length=1, max_length=200)

    @field_validator("subject", "object")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("blank")
        return value

    @property
    def slot(self) -> tuple[str, str]:
        """What a single-valued predicate can hold only one object for."""
        return (self.subject.casefold(), self.predicate)


Scope = Literal["long_term", "session"]


class CandidateMemory(BaseModel):
    """One self-contained sentence proposed by an extractor, not yet stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str = Field(min_length=3, max_length=1_000)
    kind: Kind
    confidence: float = Field(ge=0.0, le=1.0)
    importance: float = Field(ge=0.0, le=1.0)
    entities: list[str] = Field(default_factory=list, max_length=32)
    triples: list[Triple] = Field(default_factory=list, max_length=16)
    # What this statement ends: the old value of a change ("switched from MySQL to
    # PostgreSQL", "把MySQL换成了PostgreSQL" -> uses MySQL). A current memory stating one of
    # these, older by event time, is superseded by this one, also for multi-valued predicates
    # (single-valued ones are closed by their slot anyway).
    replaces: list[Triple] = Field(default_factory=list, max_length=8)
    source_turn_ids: list[str] = Field(min_length=1)
    valid_at: AwareDatetime
    # When it was (last) said, where that is later than ``valid_at`` (a time said inside it:
    # "we moved to Stockholm in January"; or said again later in the same batch): a statement
    # of another value made before then, inside that span, is older knowledge, and this one
    # ends it too (merge._Planner._dated).
    said_at: AwareDatetime | None = None
    # "session": context that matters only for this session (expires at its end + grace).
    scope: Scope = "long_term"
    expires_at: AwareDatetime | None = None  # an explicit end ("until Friday")


class StoredMemory(BaseModel):
    """A memory as the stores keep it. Superseded memories stay, closed in time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    user_id: str
    content: str
    kind: Kind
    confidence: float
    importance: float
    entities: list[str] = Field(default_factory=list)
    triples: list[Triple] = Field(default_factory=list)
    source_turn_ids: list[str]
    valid_at: AwareDatetime
    invalid_at: AwareDatetime | None = None
    status: Status = Status.CURRENT
    superseded_by: str | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    embedding_model: str
    # lifecycle (see pipeline.lifecycle)
    scope: Scope = "long_term"
    session_id: str | None = None
    expires_at: AwareDatetime | None = None
    last_accessed_at: AwareDatetime | None = None  # None: never recalled, decays from created_at
    derived_from: list[str] = Field(default_factory=list)  # a consolidated memory's sources
    consolidated_into: str | None = None  # a source memory's consolidated memory
    # the facts a statement of change ended when it was made ("switched from MySQL"): a
    # statement of one of them that arrives later but happened before is history at once
    replaces: list[Triple] = Field(default_factory=list, max_length=8)
    said_at: AwareDatetime | None = None  # CandidateMemory.said_at
    # the last time a fact that another's change can end (a role: its employer) was said again:
    # said after that change, it holds on (merge._Planner.dependents)
    restated_at: AwareDatetime | None = None

    def with_changes(self, **changes: object) -> StoredMemory:
        return self.model_validate({**self.model_dump(), **changes})

    @property
    def is_current(self) -> bool:
        return self.status is Status.CURRENT


