"""Deterministic ids: the same input always names the same record, so every write is an upsert
and a redelivered message changes nothing."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def normalize(text: str) -> str:
    """Case-, width- and whitespace-insensitive form used for exact-duplicate checks."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.replace("。", ".").split()).rstrip(".!")


def content_hash(text: str) -> str:
    return _digest(normalize(text))


def memory_id(user_id: str, content: str, source_turn_ids: Iterable[str]) -> str:
    return "m_" + _digest(user_id, normalize(content), *sorted(source_turn_ids))


def episode_id(user_id: str, ref: str) -> str:
    """``ref``: the turn's ``<session id>/<turn id>`` (schemas.turn_ref)."""
    return "e_" + _digest(user_id, ref)


def audit_id(batch_id: str, memory_id: str, operation: str) -> str:
    return "a_" + _digest(batch_id, memory_id, operation)


def triple_id(memory_id: str, subject: str, predicate: str, obj: str) -> str:
    return "t_" + _digest(memory_id, subject.casefold(), predicate, obj.casefold())


def entity_key(name: str) -> str:
    return normalize(name)
