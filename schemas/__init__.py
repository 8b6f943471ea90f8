"""The memq contract: ingest messages and domain models (pydantic v2). No I/O here.

Agents in any language produce :class:`IngestBatch` messages (``memq schema`` prints
the JSON Schema); everything downstream speaks the domain models in ``memory`` and
``audit``.
"""

from schemas.audit import AuditEntry, Operation
from schemas.memory import CandidateMemory, Kind, Status, StoredMemory, Triple
from schemas.messages import SCHEMA_VERSION, IngestBatch, Turn, TurnLine

__all__ = [
    "SCHEMA_VERSION",
    "AuditEntry",
    "CandidateMemory",
    "IngestBatch",
    "Kind",
    "Operation",
    "Status",
    "StoredMemory",
    "Triple",
    "Turn",
    "TurnLine",
]
