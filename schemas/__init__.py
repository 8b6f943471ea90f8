"""The memq contract: ingest messages and domain models (pydantic v2). No I/O here.

Agents in any language produce :class:`IngestBatch` messages (``memq schema`` prints
the JSON Schema); everything downstream speaks the domain models in ``memory`` and
``audit``.
"""

from .audit import AuditEntry, Operation
from .memory import CandidateMemory, Kind, Status, StoredMemory, Triple
from .messages import (
    MESSAGE_VERSION,
    SCHEMA_VERSION,
    ExtractedBatch,
    IngestBatch,
    StageMessage,
    Turn,
    TurnLine,
    turn_ref,
)

__all__ = [
    "MESSAGE_VERSION",
    "SCHEMA_VERSION",
    "AuditEntry",
    "CandidateMemory",
    "ExtractedBatch",
    "IngestBatch",
    "Kind",
    "Operation",
    "StageMessage",
    "Status",
    "StoredMemory",
    "Triple",
    "Turn",
    "TurnLine",
    "turn_ref",
]
