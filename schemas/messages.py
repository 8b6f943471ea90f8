"""The ingest contract: one user's session turns, as an agent enqueues them.

Versioned by ``schema_version``; a consumer refuses a version it does not know
(see :data:`SCHEMA_VERSION`) instead of guessing.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from .memory import CandidateMemory

SCHEMA_VERSION = "1"

Role = Literal["user", "assistant", "system", "tool"]

# Ids travel in Redis keys, Chroma metadata and Neo4j properties: keep them plain.
_ID_PATTERN = r"^[A-Za-z0-9_.:@\-]{1,128}$"
# A tenant owns user ids: the stores see "<tenant>:<user id>" (workers.auth.tenant_user), so a
# tenant's name has no ":".
TENANT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"

# What the door accepts. Event times from the Unix epoch to 2100: the stores keep times as
# epoch seconds, and a turn dated outside would poison its user's later batches.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
MAX_CONTENT_CHARS = 32_000
MAX_METADATA_BYTES = 8_192
MAX_BATCH_CONTENT_BYTES = 1_048_576  # a batch: at most 1 MiB of turn text


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
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    timestamp: AwareDatetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Who said it, when not the agent's own user (OpenAI's message ``name``): a batch may
    # hold several people; what a named speaker says about themselves is about them, never
    # about the user, and one person's facts never override another's.
    speaker: str | None = Field(default=None, min_length=1, max_length=100,
                                pattern=r"^[^\x00-\x1f]+$")

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is blank")
        return value

    @field_validator("timestamp")
    @classmethod
    def _sane_time(cls, value: datetime) -> datetime:
        if not EARLIEST <= value < LATEST:
            raise ValueError(f"timestamp must be from {EARLIEST:%Y-%m-%d} to before "
                             f"{LATEST:%Y-%m-%d}")
        return value

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        size = len(json.dumps(value, ensure_ascii=False, default=str).encode())
        if size > MAX_METADATA_BYTES:
            raise ValueError(f"metadata is {size} bytes; at most {MAX_METADATA_BYTES}")
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
            speaker=self.speaker,
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
        size = sum(len(t.content.encode()) for t in turns)
        if size > MAX_BATCH_CONTENT_BYTES:
            raise ValueError(f"the turns hold {size} bytes of text; a batch takes at most "
                             f"{MAX_BATCH_CONTENT_BYTES} (split the session)")
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
