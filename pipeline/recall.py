"""Hybrid recall, pure: one ranked list of memories and episodes from three rankings.

* memories by the seeds' score (similarity × decay × confidence), those under a similarity
  floor left out: a memory that is merely the nearest of a few is not relevant;
* episodes (raw turns) by embedding similarity, under a floor left out too;
* episodes by BM25 (Lucene's, through Neo4j's full-text index: :func:`lucene_query`).

They are fused by reciprocal rank (RRF: Σ 1/(K + rank) over the lists an item is in), so
scores on different scales never meet. A turn that said what is no longer true (the source
of a superseded memory) is demoted, so the current fact comes first; so is what the
assistant said. A question about the past ("where did she live before?", 以前…) turns that
around: what was superseded is what it asks for, so it comes first (:func:`asks_about_past`).
A memory counts its source turns' BM25 rank as its own (it is those turns, distilled).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from memq.pipeline.ports import Hit

RRF_K = 60
MAX_TERMS = 64
_TERMS = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Floors:
    memory: float = 0.35  # MiniLM cosine: relevant memories measured 0.5-0.65, noise 0.06-0.25
    episode: float = 0.3
    superseded_factor: float = 0.6  # a superseded memory, a turn whose statement was superseded
    past_factor: float = 1.5  # the same, when the question asks about the past
    assistant_factor: float = 0.7  # what the assistant said is weaker evidence than the user


_PAST = re.compile(
    r"\b(?:before|previously|formerly|former|used to|at first|originally|initially|earlier"
    r"|in the past|prior to|no longer|any more|anymore)\b"
    r"|以前|之前|原来|原先|最开始|一开始|最初|当初|起初|先前|从前|曾经|过去|不再",
    re.IGNORECASE)


def asks_about_past(query: str) -> bool:
    """Whether a question asks what was true before ("Where did Maria live before moving?",
    "Which company did Tom work for at first?", 李娜以前在哪家公司工作？): then the superseded
    facts and the turns that stated them are the answer, not noise."""
    return _PAST.search(query) is not None


def user_key(user_id: str) -> str:
    """One token under any analyzer (letters and digits), unique per user: every BM25 query
    requires it, so one user's search never ranks another's turns."""
    return "u" + hashlib.sha256(user_id.encode()).hexdigest()[:30]


def lucene_query(user_id: str, text: str, *, field: str = "text") -> str | None:
    """A Lucene query for ``text`` within the user's turns, or None if it has no words. Only
    word characters pass (no operator, wildcard or field syntax from user text), lower-cased
    (AND, OR, NOT are words here)."""
    terms = [t.lower() for t in _TERMS.findall(text)][:MAX_TERMS]
    if not terms:
        return None
    words = " ".join(terms)
    if field != "text":  # memories: their content (a memory names its person)
        return f"+user_key:{user_key(user_id)} +{field}:({words})"
    return f"+user_key:{user_key(user_id)} +(text:({words}) speaker:({words}))"


def fuse(memories: Sequence[tuple[Hit, float]], dense_episodes: Sequence[Hit],
         bm25_episodes: Sequence[Hit], k: int, *, floors: Floors = Floors(),
         superseded: Collection[str] = (), bm25_memories: Sequence[Hit] = (),
         past: bool = False) -> list[Hit]:
    """Top ``k`` of the fused ranking. ``memories``: (hit, similarity) ordered by the seeds'
    score; ``dense_episodes``: by similarity (the hit's score); ``bm25_episodes`` and
    ``bm25_memories``: by BM25. ``past``: the question asks about the past (superseded
    memories and their turns are raised, not demoted). Each returned hit's score is its fused
    score."""
    changed = floors.past_factor if past else floors.superseded_factor
    fused: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    kept_memories = [h for h, similarity in memories if similarity >= floors.memory]
    kept_dense = [h for h in dense_episodes if h.score >= floors.episode]
    for ranking in (kept_memories, kept_dense, list(bm25_episodes), list(bm25_memories)):
        for rank, hit in enumerate(ranking, start=1):
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            hits.setdefault(hit.id, hit)
    # A memory is its source turns distilled: their BM25 evidence is its evidence too.
    bm25_rank: dict[str, int] = {}
    for rank, hit in enumerate(bm25_episodes, start=1):
        for ref in hit.source_turn_ids:
            bm25_rank.setdefault(ref, rank)
    for hit in {h.id: h for h in [*kept_memories, *bm25_memories]}.values():
        ranks = [bm25_rank[r] for r in hit.source_turn_ids if r in bm25_rank]
        if ranks:
            fused[hit.id] += 1.0 / (RRF_K + min(ranks))
    for hit_id, hit in hits.items():
        if ((hit.type == "episode" and set(hit.source_turn_ids) & set(superseded))
                or (hit.type == "memory" and hit.status == "superseded")):
            fused[hit_id] *= changed
        if hit.type == "episode" and hit.role == "assistant":
            fused[hit_id] *= floors.assistant_factor
    order = sorted(fused, key=lambda i: (-fused[i], hits[i].type != "memory", i))[:k]
    return [replace(hits[i], score=round(fused[i], 6)) for i in order]
