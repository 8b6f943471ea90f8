"""Per-person topic profiles, pure: what consolidation makes of a person's memories.

Real chat rarely repeats itself closely enough for episodes to cluster (LoCoMo: three turns at
cosine >= 0.8 are greetings), but a person's memories do fall into topics over the sessions:
Audrey's dog training course, agility classes and grooming course; Andrew's picnic, farm visit
and wine tasting with his girlfriend. A profile is one memory per topic of one person, its
members in time order with their dates, DERIVED_FROM them and citing their turns, so a
question that spans sessions ("what classes has Audrey taken for her dogs?") meets one memory
holding the answers that sit in many turns.

Topics are clustered on what the memories say *without the person's name*: every memory of
Andrew starts "Andrew …", and with the name in, "Andrew is looking forward to exploring more"
and "Andrew bought a bike" cluster on the name. A topic spans at least two sessions (one
session's memories are one exchange, not a pattern) and holds at most ``max_members``, those
closest to the topic's centre. A profile's id derives from its members, so running the job
again on the same memories makes the same profiles, and a profile whose topic has since grown
is replaced by the new one (see ``jobs.profile``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..schemas import Kind, StoredMemory, Triple
from . import ids
from .lifecycle import clusters
from .ports import Vector

PREDICATE = "profile"  # a profile's triple: (person, profile, its topic: its first member's)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b|\d{4}年")
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November"
           "|December")
# what a topic is not about: when it happened ("the week before 9 June 2023", "上个月"; the
# rules resolve dates into these words) and how it is told ("just", "finally"). With the date
# in, a treat made "the week before 16 April 2023" and a pet-store visit "on 16 October 2023"
# cluster on their dates.
_WHEN = re.compile(
    r"\s*(?:\b(?:on (?:the (?:night|morning|evening) of )?|in |since |by |from |until "
    r"|the (?:day|night|week|weekend|month|year) (?:before|after) "
    r"|(?:a few|a couple of|couple of|several|an?|one|two|three|four|five|six|\d+) "
    rf"(?:days?|weeks?|months?|years?) (?:before|after) )?(?:\d{{1,2}} )?(?:(?:{_MONTHS}) )?"
    r"(?:19|20)\d\d\b|(?:(?:19|20)\d\d年)?\d{1,2}月(?:\d{1,2}[日号])?"
    r"|\b(?:just|recently|finally|actually|really|also|lately|already|even)\b)",
    re.IGNORECASE)


@dataclass(frozen=True)
class Draft:
    """A profile to hold: one person's topic."""

    id: str
    subject: str
    members: tuple[str, ...]  # memory ids, in time order
    content: str
    topic: str  # what its first member says, name and dates left out
    source_turn_ids: tuple[str, ...]
    valid_at: datetime  # the newest member's
    confidence: float  # the least sure member's
    importance: float  # the most important member's

    @property
    def triple(self) -> Triple:
        return Triple(subject=self.subject, predicate=PREDICATE, object=self.topic[:120])


def subject_of(memory: StoredMemory) -> str | None:
    """The one person a memory is about; None when its triples name several (or none)."""
    subjects = {t.subject for t in memory.triples}
    return subjects.pop() if len(subjects) == 1 else None


def is_profile(memory: StoredMemory) -> bool:
    return bool(memory.derived_from) and any(t.predicate == PREDICATE for t in memory.triples)


def eligible(memory: StoredMemory) -> bool:
    """A current memory of one person, not itself derived, not an instruction."""
    return (memory.is_current and not memory.derived_from and memory.kind is not Kind.INSTRUCTION
            and subject_of(memory) is not None)


def _name(subject: str, text: str) -> str:
    if subject == "user":
        return "用户" if _CJK.search(text) else "The user"
    return subject


def topic_text(memory: StoredMemory) -> str:
    """What a memory says of its person, the person's name (and possessive) left out: the text
    topics are clustered on."""
    subject = subject_of(memory) or ""
    text = _strip(memory.content, _name(subject, memory.content), possessive=True)
    return re.sub(r"\s{2,}", " ", _WHEN.sub("", text)).strip(" ,.;。，")


def _strip(content: str, name: str, *, possessive: bool) -> str:
    """``content`` after the name it starts with; the possessive too when ``possessive`` (else
    "Audrey's dogs …" keeps its name: "dogs …" would be nobody's)."""
    if possessive:
        pattern = rf"^{re.escape(name)}(?:'s|’s|的)?\s*"
    else:
        pattern = rf"^{re.escape(name)}(?:\s+|(?=[\u4e00-\u9fff]))(?!的)"
    return re.sub(pattern, "", content.strip(), flags=re.IGNORECASE)


def _line(memory: StoredMemory, name: str) -> str:
    """A member as its profile states it: after the name, with its date unless it has one."""
    zh = bool(_CJK.search(memory.content))
    text = _strip(memory.content, name, possessive=False).rstrip(".!。！")
    if _YEAR.search(text):
        return text
    day = memory.valid_at
    return (f"{text}（{day.year}年{day.month}月{day.day}日）" if zh
            else f"{text} ({day.day} {day:%b %Y})")


def sessions(memory: StoredMemory) -> set[str]:
    """The sessions a memory's turns were said in."""
    return {ref.split("/", 1)[0] for ref in memory.source_turn_ids if "/" in ref}


def profiles(user_id: str, memories: Sequence[StoredMemory], vectors: Mapping[str, Vector], *,
             similarity: float, max_members: int, min_sessions: int = 2,
             pool: int = 2000) -> list[Draft]:
    """The profiles of a user's people: per person, the clusters of their memories' topic
    vectors (``vectors``: memory id -> the vector of its :func:`topic_text`) at ``similarity``
    that span ``min_sessions`` sessions, drawn from each person's ``pool`` newest memories (the
    similarity matrix is pool x pool). Deterministic: same memories, same drafts."""
    people: dict[str, list[StoredMemory]] = {}
    for m in memories:
        if eligible(m) and m.id in vectors:
            people.setdefault(subject_of(m) or "", []).append(m)
    out: list[Draft] = []
    for subject in sorted(people):
        newest = sorted(people[subject], key=lambda m: (m.valid_at, m.id))[-pool:]
        group = {m.id: m for m in newest}
        for keys in clusters([(k, vectors[k]) for k in sorted(group)], similarity=similarity,
                             min_size=2):
            members = _closest([group[k] for k in keys], vectors, max_members)
            if len(set().union(*(sessions(m) for m in members))) < min_sessions:
                continue
            out.append(_draft(user_id, subject, members))
    return out


def _closest(members: list[StoredMemory], vectors: Mapping[str, Vector],
             limit: int) -> list[StoredMemory]:
    """At most ``limit`` members, those closest to the cluster's centre, in time order."""
    if len(members) > limit:
        matrix = np.asarray([vectors[m.id] for m in members], dtype=np.float32)
        matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
        centre = matrix.mean(axis=0)
        order = sorted(range(len(members)), key=lambda i: (-float(matrix[i] @ centre),
                                                            members[i].id))
        members = [members[i] for i in order[:limit]]
    return sorted(members, key=lambda m: (m.valid_at, m.id))


def _draft(user_id: str, subject: str, members: Sequence[StoredMemory]) -> Draft:
    name = _name(subject, members[0].content)
    zh = bool(_CJK.search(members[0].content))
    lines = [_line(m, name) for m in members]
    content = (f"{name}：{'；'.join(lines)}。" if zh else f"{name}: {'; '.join(lines)}.")
    keys = sorted(m.id for m in members)
    return Draft(
        id="m_" + ids.content_hash(f"profile:{user_id}:{subject}:{','.join(keys)}"),
        subject=subject, members=tuple(m.id for m in members), content=content,
        topic=topic_text(members[0]) or content,
        source_turn_ids=tuple(dict.fromkeys(r for m in members for r in m.source_turn_ids)),
        valid_at=max(m.valid_at for m in members),
        confidence=min(m.confidence for m in members),
        importance=max(m.importance for m in members))
