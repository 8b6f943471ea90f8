"""The ingest contract: one user's session turns, as an agent enqueues them.

Versioned by ``schema_version``; a consumer refuses a version it does not know
(see :data:`SCHEMA_VERSION`) instead of guessing.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from schemas.memory import CandidateMemory

SCHEMA_VERSION = "1"

Role = Literal["user", "assistant", "system", "tool"]

# Ids travel in Redis keys, Chroma metadata and Neo4j properties: keep them plain.
_ID_PATTERN = r"^[A-Za-z0-9_.:@\-]{1,128}$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Turn(_Frozen):
    """One conversation turn. ``timestamp`` is event time: when it was said.

    ``turn_id`` is unique within its session (a producer may number every session ``t1``,
    ``t2``, ...): memq identifies a turn by (user, session, turn id). Turns with equal
    timestamps keep the order the producer gave them.
    """

    turn_id: str = Field(pattern=_ID_PATTERN)
    role: Role
    content: str = Field(min_length=1, max_length=32_000)
    timestamp: AwareDatetime
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is blank")
        return value


class TurnLine(Turn):
    """One line of ``memq enqueue`` input (JSON Lines): a turn plus its owner."""

    user_id: str = Field(pattern=_ID_PATTERN)
    session_id: str = Field(pattern=_ID_PATTERN)

    def turn(self) -> Turn:
        return Turn(
            turn_id=self.turn_id,
            role=self.role,
            content=self.content,
            timestamp=self.timestamp,
            metadata=self.metadata,
        )


class IngestBatch(_Frozen):
    """A batch of one user's turns from one session: the unit the pipeline works on."""

    schema_version: Literal["1"] = "1"
    user_id: str = Field(pattern=_ID_PATTERN)
    session_id: str = Field(pattern=_ID_PATTERN)
    turns: list[Turn] = Field(min_length=1, max_length=2_000)

    @field_validator("turns")
    @classmethod
    def _unique_turn_ids(cls, turns: list[Turn]) -> list[Turn]:
        seen: set[str] = set()
        for turn in turns:
            if turn.turn_id in seen:
                raise ValueError(f"duplicate turn_id {turn.turn_id!r} in one batch")
            seen.add(turn.turn_id)
        # Event order; equal timestamps keep the producer's order (a stable sort).
        return sorted(turns, key=lambda t: t.timestamp)

    @property
    def batch_id(self) -> str:
        """Deterministic: the same user, session and turns give the same id."""
        body = json.dumps(
            [self.user_id, self.session_id, [[t.turn_id, t.content] for t in self.turns]],
            ensure_ascii=False,
        )
        return "b_" + hashlib.sha256(body.encode()).hexdigest()[:24]

    @property
    def last_event_at(self) -> datetime:
        return self.turns[-1].timestamp

    def refs(self) -> list[str]:
        """Each turn's reference, unique per user: ``<session id>/<turn id>``."""
        return [turn_ref(self.session_id, t.turn_id) for t in self.turns]


def turn_ref(session_id: str, turn_id: str) -> str:
    """A turn's reference within its user: ids never contain ``/``, so this is unambiguous."""
    return f"{session_id}/{turn_id}"


MESSAGE_VERSION = "1"


class StageMessage(_Frozen):
    """What travels on the broker between stages: ids and small fields, never turns, vectors
    or memories (those stay in Redis under the delivery id, or in the stores).

    ``memq.extract`` gets a ``delivery_id``; ``memq.apply`` gets a user and the claim token it
    drains that user's mailbox under.
    """

    v: Literal["1"] = "1"
    user_id: str = Field(pattern=_ID_PATTERN)
    delivery_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")
    token: str | None = Field(default=None, max_length=64)


class ExtractedBatch(_Frozen):
    """What extract found in a delivery, kept in Redis under the delivery id (with a TTL) for
    the user's drain: never on the broker. Vectors are little-endian float32, base64."""

    v: Literal["1"] = "1"
    batch_id: str
    session_id: str = Field(pattern=_ID_PATTERN)
    refs: list[str]  # the turns it covers, ``<session>/<turn>``
    candidates: list[CandidateMemory]
    vectors: list[str]
