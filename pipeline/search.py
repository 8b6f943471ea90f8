"""Search, as one port-taking function: the reads each signal needs, then the pure fusion
(``pipeline.recall.fuse``).

One ranked list of up to k memories and episodes (raw turns): each found by BM25 (the
``TextIndex``) and by its vector's similarity (the ``VectorIndex``), and what one signal found
the other scores too. The pools are ``recall.POOL`` deep whatever k, so the list for k is the
head of the list for any larger k. Superseded memories are found by BM25 only; archived ones
are not recalled. Current memories are weighed by their decay (``lifecycle.recall_score``).

``submit`` runs a read; the shell passes a thread pool's (the reads then overlap: latency is
the slowest read, not their sum), tests the default, which runs it at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..schemas import StoredMemory
from . import lifecycle, recall, rules_en
from .lifecycle import Policy
from .ports import Changed, Embedder, Hit, TextIndex, VectorIndex


class _Done:
    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self) -> Any:
        return self._value


def at_once(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> _Done:
    """A ``submit`` that runs the read now (no threads)."""
    return _Done(fn(*args, **kwargs))


def memory_hit(m: StoredMemory) -> Hit:
    return Hit(id=m.id, type="memory", content=m.content, score=0.0, event_at=m.valid_at,
               created_at=m.created_at, source_turn_ids=m.source_turn_ids, kind=str(m.kind),
               confidence=m.confidence, status=str(m.status))


def search(text: TextIndex, vectors: VectorIndex, embedder: Embedder, user_id: str,
           query: str, k: int, now: datetime, policy: Policy, *,
           submit: Callable[..., Any] = at_once) -> list[Hit]:
    """The user's best k hits for ``query`` (see the module docstring)."""
    return [hit for hit, _ in search_explained(text, vectors, embedder, user_id, query, k, now,
                                               policy, submit=submit)]


def search_explained(text: TextIndex, vectors: VectorIndex, embedder: Embedder, user_id: str,
                     query: str, k: int, now: datetime, policy: Policy, *,
                     submit: Callable[..., Any] = at_once
                     ) -> list[tuple[Hit, recall.Signals]]:
    """:func:`search`, each hit with the signals its score is made of
    (``recall.fuse_explained``)."""
    model = embedder.model_id
    pool = max(k, recall.POOL)
    found_text = submit(text.search_text, user_id, query, pool)
    vector = embedder.embed([query])[0]
    dense_e = submit(vectors.search, user_id, vector, model, pool)
    (similar,) = vectors.similar(user_id, [vector], model, pool)
    bm25_memories, bm25_episodes, changed = found_text.result()
    # what holds the place of what is no longer true, and how near it is to the question
    cos_now = submit(vectors.cosines, user_id, sorted(changed.current), vector, model,
                     memories=True)
    dense_found: list[Hit] = dense_e.result()
    # the vector index holds no words: the graph gives those of the turns BM25 did not find
    lexical_e = {h.id: h for h in bm25_episodes}
    said = submit(text.turns, user_id, [h.id for h in dense_found if h.id not in lexical_e])
    # what one signal found, the other scores too: BM25's turns and memories get their cosine
    near = {h.id: h.score for h in dense_found}
    missing = [h.id for h in bm25_episodes if h.id not in near]
    cos_e = submit(vectors.cosines, user_id, missing, vector, model)
    near_m = dict(similar)
    cos_m = submit(vectors.cosines, user_id,
                   [m.id for m, _ in bm25_memories if m.id not in near_m], vector, model,
                   memories=True)
    words: dict[str, Hit] = {**said.result(), **lexical_e}
    # a turn the graph no longer has (forgotten meanwhile) is not found
    dense_episodes = [replace(h, content=words[h.id].content, speaker=words[h.id].speaker)
                      for h in dense_found if h.id in words]
    # what the nearest memories are, the state of record says (BM25's came from it)
    lexical_found = {m.id: m for m, _ in bm25_memories}
    state = {m.id: m for m in text.get(user_id, [i for i, _ in similar
                                                 if i not in lexical_found])} | lexical_found
    near.update(cos_e.result())
    near_m.update(cos_m.result())
    episodes = [recall.Candidate(h, dense=h.score) for h in dense_episodes] + [
        recall.Candidate(h, lexical=h.score, dense=near.get(h.id)) for h in bm25_episodes]
    found = {i: state[i] for i, _ in similar if i in state and state[i].is_current
             } | lexical_found
    lexical_m = {m.id: score for m, score in bm25_memories}
    memories = [recall.Candidate(
        memory_hit(m), lexical=lexical_m.get(m.id), dense=near_m.get(m.id),
        weight=lifecycle.recall_score(1.0, m, now, policy) if m.is_current else 1.0,
        members=tuple(m.derived_from))  # a profile's (or a consolidation's) sources
        for m in found.values()]
    return recall.fuse_explained(episodes, memories, k, superseded=changed.refs.keys(),
                                 past=recall.asks_about_past(query),
                                 window=rules_en.question_window(query, now), query=query,
                                 successors=successors(changed, cos_now.result()))


def successors(changed: Changed, cosines: dict[str, float],
               floor: float = recall.Weights().memory_floor) -> dict[str, Hit]:
    """Each superseded memory and each turn that stated one -> the current memory holding its
    place (``recall.current_first``). A superseded memory's successor is of its own slot, and
    so is that of a turn whose every statement has changed; a turn that said more than what
    changed ("I work at Deloitte and love jazz": ``Changed.mixed``) yields only to a
    successor near the question by meaning (``floor``)."""
    hits = {i: memory_hit(m) for i, m in changed.current.items()}
    out = {mid: hits[c] for mid, c in changed.memories.items() if c is not None}
    out.update({ref: hits[c] for ref, c in changed.refs.items() if c is not None and (
        ref not in changed.mixed or cosines.get(c, 0.0) >= floor)})
    return out
