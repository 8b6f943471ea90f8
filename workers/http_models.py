"""The HTTP API's bodies and answers (``memq serve``, :mod:`memq.workers.http`): the request
models the routes validate and the response models the OpenAPI document names, so a
generated client gets them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..schemas import TurnLine
from .api import Message

MAX_BODY_ITEMS = 10_000
MAX_WAIT_S = 30.0


class AddRequest(BaseModel):
    user_id: str
    messages: list[Message] = Field(min_length=1, max_length=MAX_BODY_ITEMS)
    session_id: str | None = None
    metadata: dict[str, Any] | None = None  # kept on each turn


class SearchRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    k: int = Field(default=10, ge=1, le=100)
    record: bool = False  # count as a recall: the agent acts on what it read
    threshold: float | None = None  # a score at least this
    types: list[Literal["memory", "episode"]] | None = None
    kinds: list[str] | None = None  # of memories: fact, preference, event, ...
    statuses: list[str] | None = None  # of memories: current, superseded
    since: datetime | None = None  # event time
    until: datetime | None = None


class ContextRequest(BaseModel):
    user_id: str
    query: str = Field(min_length=1)
    max_tokens: int = Field(default=800, ge=1, le=32_000)
    k: int = Field(default=20, ge=1, le=100)


# -- the answers, typed (the OpenAPI document's schemas: a generated client gets them) --------
class Enqueued(BaseModel):
    delivery_ids: list[str]
    batches: int
    batch_ids: list[str] = Field(default_factory=list)  # each delivery's batch, as audited


class DeliveryState(BaseModel):
    delivery_id: str
    state: Literal["queued", "started", "extracted", "done", "dead_lettered", "unknown"]
    user_id: str | None = None
    reason: str | None = None  # why, when dead-lettered
    finished: bool


class ContextBlock(BaseModel):
    user_id: str
    context: str


class Fact(BaseModel):
    """A triple with its times: valid (world) and created / expired (system)."""

    model_config = ConfigDict(extra="allow")

    subject: str
    predicate: str
    object: str
    memory_id: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime | None = None
    expired_at: datetime | None = None
    source_turn_ids: list[str] = Field(default_factory=list)


class Forgotten(BaseModel):
    """What a forget removed (``graph``: nodes and FACT edges deleted plus audit entries
    stripped of content)."""

    user_id: str
    memory_id: str | None = None
    chroma: int
    graph: int
    redis_keys: int
    queued: int
    dead_letters: int
    episodes: int
    total: int


# the body of POST /v1/turns: a conversation, or the lines of `memq enqueue` (the route
# parses it itself, to answer 400 with a reason per item; this is its documented schema)
TURNS_BODY = TypeAdapter(AddRequest | list[TurnLine])
TURNS_SCHEMA = TURNS_BODY.json_schema(ref_template="#/components/schemas/{model}")
TURNS_DEFS = TURNS_SCHEMA.pop("$defs", {})


class Owner(BaseModel):
    user_id: str | None


class TurnRefs(BaseModel):
    refs: list[str] = Field(max_length=10_000)  # <session>/<turn>


class Correction(BaseModel):
    text: str = Field(min_length=1, max_length=4_000)  # what the memory says from now on


class StoredTurn(BaseModel):
    """One turn as stored: its reference ``<session>/<turn>``, text and producer metadata."""

    ref: str
    text: str
    metadata: dict[str, Any]
    created_at: datetime
    event_at: datetime


class LatestTurn(BaseModel):
    turn: StoredTurn | None  # None: no turn has that prefix


class TurnsForgotten(BaseModel):
    turns: int


class StatusRequest(BaseModel):
    delivery_ids: list[str] = Field(min_length=1, max_length=1_000)
    # wait up to this long for every delivery to finish (done or dead-lettered)
    wait_s: float = Field(default=0.0, ge=0.0, le=MAX_WAIT_S)

