"""The small typed interfaces the core talks through, and the plain values they pass.

Adapters in ``pipeline.adapters`` implement these against Chroma, Neo4j, the openai
client and ONNX; unit tests of the core give the pure steps plain values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Literal, Protocol

from ..schemas import AuditEntry, CandidateMemory, StoredMemory, Turn

Vector = list[float]


class Decision(StrEnum):
    DUPLICATE = "duplicate"
    REFINEMENT = "refinement"
    CONFLICT = "conflict"
    NEW = "new"


@dataclass(frozen=True)
class Judgement:
    """How a new candidate relates to one existing memory (0.92–0.95 similarity band)."""

    decision: Decision
    reason: str
    merged_content: str | None = None  # for REFINEMENT: the sentence that replaces both


@dataclass(frozen=True)
class Neighbor:
    memory: StoredMemory
    similarity: float


@dataclass(frozen=True)
class SlotHolder:
    """A current triple of a single-valued predicate, and the memory it came from."""

    memory_id: str
    subject: str
    predicate: str
    object: str
    valid_at: datetime


@dataclass(frozen=True)
class UserVersion:
    """A user's version in the graph (one more with every fenced write) and the version up to
    which Chroma holds every write (``projected``)."""

    version: int
    projected: int


@dataclass(frozen=True)
class IndexEntry:
    """What the memory index holds of one memory: the text its vector is of (content hash),
    the status it is filtered by, the model of the vector."""

    id: str
    status: str
    content_hash: str
    model: str


@dataclass(frozen=True)
class PlanView:
    """What a plan needs from the graph before Chroma is asked anything (one round trip):
    the user's version, which of the batches were applied already, the timelines of the
    candidates' single-valued slots, the current memories of the same texts (by content
    hash), and in full the memories asked for by id and the slot holders'."""

    version: UserVersion
    applied: frozenset[str]
    holders: list[SlotHolder]
    memories: dict[str, StoredMemory]
    exact: dict[str, StoredMemory]
    # current memories whose change ended a fact of one of the ``ends`` slots (their ids; in
    # full in ``memories``)
    enders: list[str] = field(default_factory=list)
    # the memories those changes closed (SUPERSEDED_BY one of them; in full in ``memories``):
    # a second late statement of an ended fact is the same history, not another
    ended: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Hit:
    """One search result, memory or episode."""

    id: str
    type: Literal["memory", "episode"]
    content: str
    score: float
    event_at: datetime
    created_at: datetime
    source_turn_ids: list[str]
    kind: str | None = None
    confidence: float | None = None
    status: str | None = None
    role: str | None = None
    speaker: str | None = None  # an episode's named speaker
    neighbors: tuple[str, ...] = ()  # an episode's: the ids of the turns before and after it
    # what it said is no longer true (a superseded memory, a turn that stated one): the
    # current memory that holds its place now, and what that memory says
    superseded_by: str | None = None
    current: str | None = None


@dataclass(frozen=True)
class Changed:
    """What is no longer true, as search needs it: each superseded memory and each turn that
    stated one, with the current memory that now holds its place (the end of its
    ``superseded_by`` chain; None when nothing current does: a correction was forgotten, the
    successor expired)."""

    refs: dict[str, str | None] = field(default_factory=dict)  # turn ref -> current id
    memories: dict[str, str | None] = field(default_factory=dict)  # superseded id -> current id
    current: dict[str, StoredMemory] = field(default_factory=dict)  # current id -> memory
    # turn refs that a current memory cites too: the turn said more than what changed
    mixed: frozenset[str] = frozenset()

    @classmethod
    def of(cls, superseded: Sequence[tuple[str, Sequence[str], str | None]],
           current: Sequence[StoredMemory], mixed: Sequence[str] = ()) -> Changed:
        """From the superseded memories as (id, source turn refs, superseded_by), the
        current memories they may lead to, and the refs a current memory cites too: each
        chain followed to its current end."""
        nxt = {mid: succ for mid, _, succ in superseded}
        held = {m.id: m for m in current if m.is_current}

        def end(mid: str) -> str | None:
            seen = {mid}
            step = nxt.get(mid)
            while step is not None and step not in held and step in nxt and step not in seen:
                seen.add(step)
                step = nxt[step]
            return step if step in held else None

        memories = {mid: end(mid) for mid, _, _ in superseded}
        refs: dict[str, str | None] = {}
        for mid, sources, _ in sorted(superseded, key=lambda s: s[0]):
            for ref in sources:  # a turn of two superseded statements: the first that leads on
                if refs.get(ref) is None:
                    refs[ref] = memories[mid]
        used = {c for c in memories.values() if c is not None}
        return cls(refs=refs, memories=memories,
                   current={i: m for i, m in held.items() if i in used},
                   mixed=frozenset(mixed) & refs.keys())


@dataclass(frozen=True)
class EpisodeItem:
    """An episode (raw user turn) as a consolidation source."""

    id: str
    content: str
    vector: Vector
    event_at: datetime
    turn_id: str
    speaker: str | None = None  # a named person's turn (multi-party chat), not the user's


@dataclass(frozen=True)
class EpisodeVector:
    """An episode's vector under one model, as the vector index holds it. ``legacy_into``:
    the consolidation mark a record written before the graph held that state may carry (the
    memory the turn was consolidated into; None in every record written since). The graph's
    mark (``GraphStore.mark_consolidated``) is the truth; this one is read only so that such
    a turn is not consolidated twice (``jobs.unconsolidated_episodes`` copies it into the
    graph)."""

    vector: Vector
    legacy_into: str | None = None


class Embedder(Protocol):
    model_id: str

    def embed(self, texts: Sequence[str]) -> list[Vector]: ...


class Extractor(Protocol):
    """Turns dialogue into candidate memories (before the confidence gate)."""

    name: str
    prompt_version: str | None

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]: ...


class Judge(Protocol):
    def judge(self, new: CandidateMemory, existing: StoredMemory) -> Judgement: ...


class MemoryStore(Protocol):
    """The memory index (Chroma): a vector per memory, with the content hash it is of and the
    memory's status; every call is scoped to one user. What a memory is, the graph says."""

    def upsert(
        self, memories: Sequence[StoredMemory], vectors: Sequence[Vector | None]
    ) -> None: ...

    def similar(
        self, user_id: str, vectors: Sequence[Vector], model_id: str, k: int
    ) -> list[list[tuple[str, float]]]:
        """The ids of the k most similar memories of any status, per vector, most similar
        first: the graph says what they are now."""
        ...

    def stored_hashes(self, user_id: str, ids: Sequence[str]) -> dict[str, str]:
        """Of these memory ids, those present, with the content hash their vector is of."""
        ...

    def memory_ids(self, user_id: str) -> set[str]:
        """Every memory record the user has, whatever it holds (what a re-index deletes)."""
        ...

    def delete_ids(self, user_id: str, ids: Sequence[str]) -> None: ...

    def foreign_model(self, user_id: str, model_id: str) -> str | None: ...


class EpisodeStore(Protocol):
    """Raw turns' vectors, append-only, idempotent by (user, turn id). It keeps no words
    (text, speaker, the producer's metadata): those are the graph's, so a forget that deletes
    them there leaves nothing of them in the vector store's process or files. Nor state:
    which turns consolidation has used, and into what, is the graph's too."""

    def add(
        self, user_id: str, session_id: str, turns: Sequence[Turn], vectors: Sequence[Vector],
        model_id: str, now: datetime, passages: Sequence[Sequence[Vector]] = (),
    ) -> int:
        """Each turn with its vector and (``passages``, if given: one list per turn) the
        vectors of its passages (``recall.passages``): the turn's cosine to a query, as
        ``VectorIndex`` reports it, is the best of these."""
        ...

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]: ...

    def episode_vectors(self, user_id: str, model_id: str, episode_ids: Sequence[str]
                        ) -> dict[str, EpisodeVector]:
        """The vectors these turns of the user have under ``model_id``; ids it has none of
        are left out. Which turns to ask for (and their words) is the graph's to say."""
        ...

    def delete_user(self, user_id: str) -> int: ...


class TextIndex(Protocol):
    """What search asks the lexical index (Neo4j's Lucene full-text indexes), per user."""

    def search_text(self, user_id: str, query: str, k: int
                    ) -> tuple[list[tuple[StoredMemory, float]], list[Hit], Changed]:
        """Up to k memories with their BM25 scores, up to k raw turns (Hit.score: BM25),
        best first, and what is no longer true (:class:`Changed`). A query of no words finds
        nothing (but what changed)."""
        ...

    def get(self, user_id: str, ids: Sequence[str]) -> list[StoredMemory]:
        """The memories of these ids, as the state of record holds them (any status)."""
        ...

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        """These raw turns of the user by episode id, with their words (text, speaker): the
        vector index holds none. Ids the user has no turn of are left out."""
        ...


class VectorIndex(Protocol):
    """What search asks the vector index (Chroma), per user and per embedding model: vectors
    of one model are never compared with another's."""

    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        """The k raw turns nearest ``vector`` by their own vectors (Hit.score: the turn's
        cosine, the best of its vector's and its passages'), best first. Without their words
        (``content`` empty, no ``speaker``): those are the graph's (``TextIndex.turns``)."""
        ...

    def similar(self, user_id: str, vectors: Sequence[Vector], model_id: str, k: int
                ) -> list[list[tuple[str, float]]]:
        """The ids of the k memories nearest each vector (any status), with their cosine,
        nearest first."""
        ...

    def cosines(self, user_id: str, record_ids: Sequence[str], vector: Vector, model_id: str,
                *, memories: bool = False) -> dict[str, float]:
        """The cosine of ``vector`` to each of these records (turns, or memories) the user
        has under ``model_id``; ids it does not have are left out."""
        ...


class GraphStore(Protocol):
    """Memories, entities, triples with validity in time, and the audit trail: the state of
    record, which every read of memory state asks."""

    def version(self, user_id: str) -> UserVersion: ...

    def read_memories(self, user_id: str, *, include_inactive: bool = False,
                      as_of: datetime | None = None,
                      exclude: Sequence[str] = ()) -> list[StoredMemory]: ...

    def apply(
        self, user_id: str, memories: Sequence[StoredMemory], audit: Sequence[AuditEntry],
        now: datetime, *, expected: int | None,
    ) -> int:
        """One transaction, fenced: commits only at version ``expected`` (None: any) and
        returns the new version; raises StaleVersion otherwise."""
        ...

    def mark_projected(self, user_id: str, version: int, *, if_at: int | None = None) -> int:
        """Chroma holds every write up to ``version`` (never moves back); with ``if_at``,
        only while the user is still at that version. Returns the user's version now."""
        ...

    def plan_view(self, user_id: str, *, batch_ids: Sequence[str],
                  slots: Sequence[tuple[str, str]], memory_ids: Sequence[str],
                  contents: Sequence[str], ends: Sequence[tuple[str, str]] = ()
                  ) -> PlanView: ...

    def near_current(self, user_id: str, near: Sequence[Sequence[str]],
                     k: int) -> list[StoredMemory]:
        """For each list of memory ids (nearest first, any status), the first ``k`` that are
        current, in full."""
        ...

    def get(self, user_id: str, ids: Sequence[str]) -> list[StoredMemory]: ...

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]: ...

    def changed_since(self, user_id: str, version: int) -> list[StoredMemory]: ...

    def audit(self, user_id: str, memory_id: str | None = None) -> list[AuditEntry]: ...

    def add_episodes(self, user_id: str, session_id: str, turns: Sequence[Turn],
                     now: datetime) -> int:
        """Raw turns for BM25 recall (idempotent)."""
        ...

    def unconsolidated_turns(self, user_id: str) -> list[Hit]:
        """The user's turns of role user that no consolidation has marked, with their words
        (content, speaker; ``source_turn_ids``: the turn's reference), by event time:
        consolidation's candidates (their vectors are the vector index's)."""
        ...

    def mark_consolidated(self, user_id: str, marks: Mapping[str, str], *,
                          expected: int | None) -> int:
        """These turns (episode id -> the memory it was consolidated into) marked, fenced as
        ``apply`` is: only at version ``expected`` (None: any), moving it on by one, and
        raising StaleVersion (nothing marked) otherwise; returns the new version. The mark is
        nothing the vector index holds: when it held every write up to the version before,
        it holds them up to the new one (``projected`` moves too). Ids the user has no turn
        of are left alone; marking again with the same memory changes nothing but the
        version."""
        ...

    def delete_user(self, user_id: str) -> int: ...
