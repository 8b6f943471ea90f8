"""In-memory stand-ins for the stores, shipped with the code they stand in for, so a test of the
core needs no service and no mock. They keep the real semantics that the core relies on, and
``tests/integration/test_contract.py`` runs one suite against them and the real adapters:

- :class:`InMemoryIndex` is a ``TextIndex``, a ``VectorIndex``, a ``MemoryStore`` and an
  ``EpisodeStore``: every read is scoped to one user; vectors of one model are never compared
  with another's; BM25 (k1 1.2, b 0.75, as Lucene) over the same document a turn gets in Neo4j
  (``recall.search_text``), question words dropped as ``recall.lucene_query`` drops them;
  results are best first, at most k; a memory
  written with no vector keeps the one it had (``stored_hashes`` says of which text).
- :class:`FencedGraph` is a ``GraphStore``: memory state with the graph's version fence
  (``apply`` commits at the ``expected`` version only (None: any), moves it on by one, and
  raises ``StaleVersion`` otherwise, writing nothing), how far the index holds it
  (``mark_projected``), the audit trail (which says which batches were applied), the
  slot timelines a plan reads (``plan_view``), and the turns with consolidation's marks on
  them (``unconsolidated_turns``; ``mark_consolidated``, fenced as ``apply``). The index
  keeps no such mark, but one an old record carries (``InMemoryIndex.legacy_mark``).
- :class:`HashEmbedder` embeds deterministically (hashed words, unit length): texts that share
  words are near, as a real model's would be for the cases tests write.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from ..schemas import AuditEntry, StoredMemory, Turn, turn_ref
from . import ids, recall
from .errors import StaleVersion
from .merge_time import ended_on
from .ports import Changed, EpisodeVector, Hit, PlanView, SlotHolder, UserVersion, Vector

# Lucene's standard tokenizer (under the english analyzer): a Han character is a word of its
# own, any other run of word characters one word
_WORDS = re.compile(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+", re.UNICODE)
K1, B = 1.2, 0.75


# Lucene's english analyzer drops these and stems what is left (Porter); a light stemmer gives
# the same meeting of forms for the words tests and benches use ("lives", "living" meet "live")
_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"})


def _stem(word: str) -> str:
    if not word.isascii() or not word.isalpha():
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[:-len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _terms(text: str) -> list[str]:
    words = (w.lower() for w in _WORDS.findall(text.replace("'s ", " ")))
    return [_stem(w) for w in words if w not in _STOP]


def _cosine(a: Vector, b: Vector) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class HashEmbedder:
    """Bag of hashed words in ``dims`` dimensions, unit length."""

    def __init__(self, dims: int = 256, model_id: str = "hash-256") -> None:
        self.dims, self.model_id = dims, model_id

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out = []
        for text in texts:
            v = [0.0] * self.dims
            for term in _terms(text):
                h = int(hashlib.sha256(term.encode()).hexdigest()[:8], 16)
                v[h % self.dims] += 1.0
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v])
        return out


def _bm25(query: Sequence[str], docs: dict[str, list[str]]) -> dict[str, float]:
    """Lucene's BM25 of each document that holds a query term."""
    if not docs:
        return {}
    avg = sum(len(d) for d in docs.values()) / len(docs)
    scores: dict[str, float] = {}
    for term in set(query):
        holding = [key for key, d in docs.items() if term in d]
        if not holding:
            continue
        idf = math.log(1 + (len(docs) - len(holding) + 0.5) / (len(holding) + 0.5))
        for key in holding:
            tf = docs[key].count(term)
            norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(docs[key]) / (avg or 1)))
            scores[key] = scores.get(key, 0.0) + idf * norm
    return scores


def _query_terms(query: str) -> list[str]:
    return [w for term in recall.query_terms(query) for w in _terms(term)]


@dataclass
class _Episode:
    hit: Hit
    document: list[str]
    vectors: dict[str, Vector] = field(default_factory=dict)  # model id -> vector
    # model id -> its passages' vectors (recall.passages)
    passages: dict[str, list[Vector]] = field(default_factory=dict)
    legacy_into: str | None = None  # an old record's consolidation mark (legacy_mark)

    def cosine(self, vector: Vector, model_id: str) -> float:
        """The turn's cosine: the best of its own vector's and its passages'."""
        return max(_cosine(vector, v)
                   for v in (self.vectors[model_id], *self.passages.get(model_id, ())))


@dataclass
class _Memory:
    memory: StoredMemory
    vectors: dict[str, Vector] = field(default_factory=dict)
    vector_of: str | None = None  # the content hash of the text its vectors are of


class InMemoryIndex:
    """The lexical and the vector index of every user, in memory."""

    def __init__(self) -> None:
        self._episodes: dict[str, dict[str, _Episode]] = {}
        self._memories: dict[str, dict[str, _Memory]] = {}

    # -- writes (what the pipeline's projection and episode store do) -----------------------
    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Vector], model_id: str, now: datetime,
            passages: Sequence[Sequence[Vector]] = ()) -> int:
        episode_ids = [ids.episode_id(user_id, turn_ref(session_id, t.turn_id)) for t in turns]
        around = recall.neighbors(episode_ids)
        mine = self._episodes.setdefault(user_id, {})
        for i, (t, vector) in enumerate(zip(turns, vectors, strict=True)):
            hit = Hit(id=episode_ids[i], type="episode", content=t.content, score=0.0,
                      event_at=t.timestamp, created_at=now,
                      source_turn_ids=[turn_ref(session_id, t.turn_id)], role=t.role,
                      speaker=t.speaker, neighbors=tuple(around[i]))
            document = _terms(recall.search_text(t.content, t.speaker,
                                                 recall.replied_to(turns, i), t.timestamp))
            entry = mine.setdefault(hit.id, _Episode(hit, document))
            entry.vectors[model_id] = list(vector)
            entry.passages[model_id] = [list(v) for v in passages[i]] if passages else []
        return len(turns)

    def upsert(self, memories: Sequence[StoredMemory], vectors: Sequence[Vector | None]
               ) -> None:
        for m, vector in zip(memories, vectors, strict=True):
            entry = self._memories.setdefault(m.user_id, {}).setdefault(m.id, _Memory(m))
            entry.memory = m
            if vector is not None:
                entry.vectors[m.embedding_model] = list(vector)
                entry.vector_of = ids.content_hash(m.content)

    def legacy_mark(self, user_id: str, episode_id: str, into: str) -> None:
        """The turn's record as builds before the graph held consolidation's state left it:
        marked consolidated into ``into`` (for tests of such records; nothing else writes
        it)."""
        self._episodes[user_id][episode_id].legacy_into = into

    def delete_ids(self, user_id: str, memory_ids: Sequence[str]) -> None:
        mine = self._memories.get(user_id, {})
        for memory_id in memory_ids:
            mine.pop(memory_id, None)

    def delete_user(self, user_id: str) -> int:
        gone = len(self._memories.pop(user_id, {})) + len(self._episodes.pop(user_id, {}))
        return gone

    # -- MemoryStore ----------------------------------------------------------------------------
    def similar(self, user_id: str, vectors: Sequence[Vector], model_id: str, k: int
                ) -> list[list[tuple[str, float]]]:
        held = [(key, e.vectors[model_id]) for key, e in self._memories.get(user_id, {}).items()
                if model_id in e.vectors]
        return [sorted(((key, _cosine(v, w)) for key, w in held),
                       key=lambda t: (-t[1], t[0]))[:k] for v in vectors]

    def stored_hashes(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        mine = self._memories.get(user_id, {})
        return {i: h for i in memory_ids if i in mine and (h := mine[i].vector_of) is not None}

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        mine = self._memories.get(user_id, {})
        return [mine[i].memory for i in memory_ids if i in mine]

    def memories(self, user_id: str, *, include_inactive: bool,
                 as_of: datetime | None = None) -> list[StoredMemory]:
        return _listed([e.memory for e in self._memories.get(user_id, {}).values()],
                       include_inactive=include_inactive, as_of=as_of)

    def memory_ids(self, user_id: str) -> set[str]:
        return set(self._memories.get(user_id, {}))

    def foreign_model(self, user_id: str, model_id: str) -> str | None:
        models = {model for e in self._memories.get(user_id, {}).values() for model in e.vectors}
        models |= {model for e in self._episodes.get(user_id, {}).values()
                   for model in e.vectors}
        return min(models - {model_id}, default=None)

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]:
        return _exact([e.memory for e in self._memories.get(user_id, {}).values()], contents)

    # -- TextIndex ----------------------------------------------------------------------------
    def search_text(self, user_id: str, query: str, k: int
                    ) -> tuple[list[tuple[StoredMemory, float]], list[Hit], Changed]:
        memories = self._memories.get(user_id, {})
        superseded = Changed.of(
            [(e.memory.id, e.memory.source_turn_ids, e.memory.superseded_by)
             for e in memories.values() if str(e.memory.status) == "superseded"],
            [e.memory for e in memories.values()],
            [ref for e in memories.values() if e.memory.is_current
             for ref in e.memory.source_turn_ids])
        terms = _query_terms(query)
        if not terms:
            return [], [], superseded
        episodes = self._episodes.get(user_id, {})
        e_scores = _bm25(terms, {key: e.document for key, e in episodes.items()})
        m_scores = _bm25(terms, {key: _terms(e.memory.content) for key, e in memories.items()
                                 if str(e.memory.status) != "archived"})
        best_e = sorted(e_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        best_m = sorted(m_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return ([(memories[key].memory, score) for key, score in best_m],
                [_scored(episodes[key].hit, score) for key, score in best_e], superseded)

    def turns(self, user_id: str, episode_ids: Sequence[str]) -> dict[str, Hit]:
        mine = self._episodes.get(user_id, {})
        return {i: mine[i].hit for i in episode_ids if i in mine}

    # -- VectorIndex --------------------------------------------------------------------------
    def search(self, user_id: str, vector: Vector, model_id: str, k: int) -> list[Hit]:
        """As Chroma's: without the turns' words (those are the graph's)."""
        nearest = sorted(((_cosine(vector, e.vectors[model_id]), key, e)
                          for key, e in self._episodes.get(user_id, {}).items()
                          if model_id in e.vectors), key=lambda t: (-t[0], t[1]))[:k]
        scored = [(e.cosine(vector, model_id), key, e) for _, key, e in nearest]
        return [replace(e.hit, score=score, content="", speaker=None) for score, _, e in
                sorted(scored, key=lambda t: (-t[0], t[1]))]

    def episode_vectors(self, user_id: str, model_id: str, episode_ids: Sequence[str]
                        ) -> dict[str, EpisodeVector]:
        mine = self._episodes.get(user_id, {})
        return {i: EpisodeVector(list(e.vectors[model_id]), e.legacy_into)
                for i in episode_ids if (e := mine.get(i)) is not None and model_id in e.vectors}

    def cosines(self, user_id: str, record_ids: Sequence[str], vector: Vector, model_id: str,
                *, memories: bool = False) -> dict[str, float]:
        held: dict[str, _Episode] | dict[str, _Memory] = (
            self._memories.get(user_id, {}) if memories else self._episodes.get(user_id, {}))
        out = {}
        for record in record_ids:
            entry = held.get(record)
            if isinstance(entry, _Episode) and model_id in entry.vectors:
                out[record] = entry.cosine(vector, model_id)
            elif entry is not None and model_id in entry.vectors:
                out[record] = _cosine(vector, entry.vectors[model_id])
        return out


def _scored(hit: Hit, score: float) -> Hit:
    return replace(hit, score=score)


def _listed(found: Sequence[StoredMemory], *, include_inactive: bool,
            as_of: datetime | None) -> list[StoredMemory]:
    if as_of is not None:
        found = [m for m in found if str(m.status) != "archived" and m.valid_at <= as_of
                 and (m.invalid_at is None or m.invalid_at > as_of)]
    elif not include_inactive:
        found = [m for m in found if m.is_current]
    return sorted(found, key=lambda m: (m.valid_at, m.id))


def _exact(held: Sequence[StoredMemory], contents: Sequence[str]) -> dict[str, StoredMemory]:
    """Current memories with the same normalised text, by content hash (the lowest id when
    two have it, as the adapters give it)."""
    hashes = {ids.content_hash(c) for c in contents}
    out: dict[str, StoredMemory] = {}
    for m in sorted(held, key=lambda m: m.id, reverse=True):
        if m.is_current and (h := ids.content_hash(m.content)) in hashes:
            out[h] = m
    return out


class FencedGraph:
    """Memory state with the graph's version fence (see the module docstring)."""

    def __init__(self) -> None:
        self._versions: dict[str, int] = {}
        self._projected: dict[str, int] = {}
        self._memories: dict[str, dict[str, StoredMemory]] = {}
        self._written: dict[str, dict[str, int]] = {}  # memory id -> version that wrote it
        self._episodes: dict[str, dict[str, Hit]] = {}  # episode id -> the turn, words and all
        self._consolidated: dict[str, dict[str, str]] = {}  # episode id -> memory id
        self.audit_log: dict[str, list[AuditEntry]] = {}

    def version(self, user_id: str) -> UserVersion:
        v = self._versions.get(user_id, 0)
        return UserVersion(version=v, projected=min(v, self._projected.get(user_id, 0)))

    def apply(self, user_id: str, memories: Sequence[StoredMemory],
              audit: Sequence[AuditEntry], now: datetime, *, expected: int | None) -> int:
        current = self._versions.get(user_id, 0)
        if expected is not None and expected != current:
            raise StaleVersion(f"user {user_id} is at version {current}, not {expected}")
        if any(m.user_id != user_id for m in memories):
            raise ValueError(f"a memory of another user given to {user_id}'s write")
        mine = self._memories.setdefault(user_id, {})
        written = self._written.setdefault(user_id, {})
        for m in memories:
            mine[m.id] = m
            written[m.id] = current + 1
        self.audit_log.setdefault(user_id, []).extend(audit)
        self._versions[user_id] = current + 1
        return current + 1

    def mark_projected(self, user_id: str, version: int, *, if_at: int | None = None) -> int:
        current = self._versions.get(user_id, 0)
        if if_at is None or current == if_at:
            self._projected[user_id] = max(self._projected.get(user_id, 0), version)
        return current

    def read_memories(self, user_id: str, *, include_inactive: bool = False,
                      as_of: datetime | None = None,
                      exclude: Sequence[str] = ()) -> list[StoredMemory]:
        found = [m for m in self._memories.get(user_id, {}).values() if m.id not in exclude]
        return _listed(found, include_inactive=include_inactive, as_of=as_of)

    def plan_view(self, user_id: str, *, batch_ids: Sequence[str],
                  slots: Sequence[tuple[str, str]], memory_ids: Sequence[str],
                  contents: Sequence[str], ends: Sequence[tuple[str, str]] = ()
                  ) -> PlanView:
        mine = self._memories.get(user_id, {})
        wanted = {(ids.entity_key(s), p) for s, p in slots}
        # as the graph finds them: by a current triple's edge that holds what it ended
        ending = {(ids.entity_key(s), p) for s, p in ends}
        enders = sorted({m.id for m in mine.values() if m.is_current for t in m.triples
                         if (ids.entity_key(t.subject), t.predicate) in ending
                         and ended_on(m, t)})
        holders = sorted({SlotHolder(memory_id=m.id, subject=t.subject, predicate=t.predicate,
                                     object=t.object, valid_at=m.valid_at)
                          for m in mine.values() for t in m.triples
                          if (ids.entity_key(t.subject), t.predicate) in wanted},
                         key=lambda h: (h.memory_id, h.subject, h.predicate, h.object))
        ended = sorted({m.id for m in mine.values() if m.superseded_by in enders})
        asked = {*memory_ids, *(h.memory_id for h in holders), *enders, *ended}
        applied = {e.batch_id for e in self.audit_log.get(user_id, [])} & set(batch_ids)
        return PlanView(version=self.version(user_id), applied=frozenset(applied),
                        holders=holders,
                        memories={i: mine[i] for i in sorted(asked) if i in mine},
                        exact=_exact(list(mine.values()), contents), enders=enders,
                        ended=ended)

    def near_current(self, user_id: str, near: Sequence[Sequence[str]],
                     k: int) -> list[StoredMemory]:
        mine = self._memories.get(user_id, {})
        out: dict[str, StoredMemory] = {}
        for top in near:
            out.update((m.id, m) for m in [mine[i] for i in top
                                           if i in mine and mine[i].is_current][:k])
        return list(out.values())

    def get(self, user_id: str, memory_ids: Sequence[str]) -> list[StoredMemory]:
        mine = self._memories.get(user_id, {})
        return [mine[i] for i in memory_ids if i in mine]

    def exact(self, user_id: str, contents: Sequence[str]) -> dict[str, StoredMemory]:
        return _exact(list(self._memories.get(user_id, {}).values()), contents)

    def changed_since(self, user_id: str, version: int) -> list[StoredMemory]:
        mine, written = self._memories.get(user_id, {}), self._written.get(user_id, {})
        return [m for i, m in mine.items() if written.get(i, 0) > version]

    def audit(self, user_id: str, memory_id: str | None = None) -> list[AuditEntry]:
        return [e for e in self.audit_log.get(user_id, [])
                if memory_id is None or e.memory_id == memory_id]

    def add_episodes(self, user_id: str, session_id: str, turns: Sequence[Turn],
                     now: datetime) -> int:
        mine = self._episodes.setdefault(user_id, {})
        for t in turns:
            ref = turn_ref(session_id, t.turn_id)
            mine[ids.episode_id(user_id, ref)] = Hit(
                id=ids.episode_id(user_id, ref), type="episode", content=t.content, score=0.0,
                event_at=t.timestamp, created_at=now, source_turn_ids=[ref], role=t.role,
                speaker=t.speaker)
        return len(turns)

    def unconsolidated_turns(self, user_id: str) -> list[Hit]:
        marked = self._consolidated.get(user_id, {})
        return sorted((h for i, h in self._episodes.get(user_id, {}).items()
                       if h.role == "user" and i not in marked),
                      key=lambda h: (h.event_at, h.source_turn_ids[0]))

    def mark_consolidated(self, user_id: str, marks: Mapping[str, str], *,
                          expected: int | None) -> int:
        current = self._versions.get(user_id, 0)
        if expected is not None and expected != current:
            raise StaleVersion(f"user {user_id} is at version {current}, not {expected}")
        mine = self._episodes.get(user_id, {})
        self._consolidated.setdefault(user_id, {}).update(
            (i, into) for i, into in marks.items() if i in mine)
        self._versions[user_id] = current + 1
        if self._projected.get(user_id, 0) >= current:  # the index holds nothing of a mark
            self._projected[user_id] = current + 1
        return current + 1

    def delete_user(self, user_id: str) -> int:
        gone = len(self._memories.pop(user_id, {})) + len(self._episodes.pop(user_id, {}))
        for held in (self._versions, self._projected, self._written, self.audit_log,
                     self._consolidated):
            held.pop(user_id, None)
        return gone
