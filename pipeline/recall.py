"""Hybrid recall, pure: one ranked list of memories and episodes from their signals.

Every candidate (a raw turn, or a memory) carries up to two signals for the query:

* **lexical**: its BM25 score (Lucene's, through Neo4j's full-text index: :func:`lucene_query`);
  a turn is indexed with its speaker, the end of the turn before it and its date
  (:func:`search_text`: an answer is often a reply, and the question it answers holds the
  words);
* **dense**: the cosine of its vector to the query's; a turn is embedded with its speaker and
  its date (:func:`episode_text`), a long one sentence by sentence (:func:`passages`, the
  date said once: :func:`passage_text`; its vector is their mean, its cosine the best of its
  vector's and its passages').

The fusion is score-aware, not by rank: BM25 is divided by the best BM25 in the pool, cosine is
stretched over the pool's range, and the two are mixed with one weight (``Weights.lexical``,
calibrated on the public dev sets: ``scripts/bench memory``). Rank fusion (RRF) let weak lists
veto a strong one -- rank 1 in one list (1/61) lost to rank 30 in two (2/90) -- and fell below
BM25 alone; a weighted sum of normalised scores keeps a strong signal's lead.

Each score is then weighed: a memory is worth a little less as it decays and the less sure it
was (``0.5 + 0.5 × decay × confidence``); what is no longer true (a superseded memory, a turn
that stated one) is demoted -- or raised when the question asks about the past
(:func:`asks_about_past`); what the assistant said is weaker evidence than what a person said.
Last, a person's turn gains a tenth of the scores of the people's turns next to it that are in
the pool (``Weights.neighbor``): the evidence of an exchange between people is often spread over
a question and its answer (it raised LoCoMo dev's recall). The assistant neither lends nor
borrows: its long answers echo the user's words, and lifted the turns beside them over the
evidence (it lowered LongMemEval dev's). The figures behind ``Weights`` and the texts below:
scripts/results/2026-12-07-figures-from-comments.md.

Memories take at most one place in ``Weights.memory_every`` (they distil the turns, they must
not crowd them out); instead, a turn gains what the best memory drawn from it adds by meaning
(``Weights.source``): the memory restates the turn in the terms a question uses. The list for
k is the first k of the list for any larger k.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..schemas import Turn
from .ports import Hit, Vector

MAX_TERMS = 64
POOL = 50  # candidates read per signal: the list is the same for every k up to it
PREVIOUS_CHARS = 200  # of the turn before, indexed with a turn (search_text)
_TERMS = re.compile(r"\w+", re.UNICODE)
# Words that ask, not say: a question's "what", "do", "my" match every turn that has them and
# none of its content ("where do I work?" found "How do I reverse a list?"). Lucene's English
# analyzer drops only articles and the like; these go from the query (never from the index).
# Dropping them raised LoCoMo dev's BM25 recall (figures: the results file named above).
QUERY_STOP = frozenset(_TERMS.findall("""
    what when where who whom whose which why how do does did i me my mine myself you your yours
    we our us he him his she her hers they them their its can could would should shall will may
    might must has have had been being am was were any some ever also about"""))


@dataclass(frozen=True)
class Weights:
    """The fusion's knobs. Defaults calibrated on LoCoMo and LongMemEval dev (see the README's
    benchmark table); change them only with a benchmark run to show for it."""

    lexical: float = 0.5  # BM25's share; dense cosine has the rest
    memory_every: int = 3  # one memory in three places: the 2nd from place 4, the 3rd from 7
    memory_floor: float = 0.2  # a memory whose cosine is under this adds no dense evidence
    superseded_factor: float = 0.6  # a superseded memory, a turn whose statement was superseded
    past_factor: float = 1.5  # the same, when the question asks about the past
    assistant_factor: float = 0.7  # what the assistant said is weaker evidence
    neighbor: float = 0.1  # a turn gains this share of its neighbours' scores (in the pool)
    # a profile (consolidation: one person's topic over the sessions) gains this share of its
    # members' scores (in the pool): a question its members answer in parts is the profile's.
    # Off since turns gain from the memories drawn from them (``source``): with that, lifting
    # profiles by their members no longer helped LoCoMo and cost LongMemEval @5 (figures:
    # the results file named in the module's docstring)
    member: float = 0.0
    # what was said in the span of time the question names ("on October 24, 2023", "in May
    # 2023", "two weeks ago": rules_en.question_window) weighs this much more: the smallest
    # weight that helped LoCoMo's dated questions lowered no category; LongMemEval did not
    # move (its haystacks put many sessions on one day). Figures: the results file named in
    # the module's docstring
    date: float = 0.25
    # cosine is stretched over at least this range: in a small pool (a user of a few turns)
    # the least similar of two near-equals would otherwise count as no match at all. A full
    # pool's range is wider (so the public sets' recall does not move with it)
    min_spread: float = 0.3
    # a turn gains this share of what the best memory drawn from it adds by meaning (its dense
    # part, weighed by its factor): a memory restates the turn in a question's terms ("The user
    # recently had a UTI and was prescribed antibiotics by their primary care physician" for
    # "How many doctors did I visit?") and, taking one place in three, could not bring the
    # turn itself. Only the dense part: the memory's whole score lifted LongMemEval as much
    # and cost LoCoMo @5; a larger share cost LoCoMo @10 (figures: the results file named in
    # the module's docstring)
    source: float = 1.0
    # a turn of another speaker than the one person the question names ("What car does Evan
    # drive?": Sam's "That's great news! What's the car's name?" is no answer): a mild
    # factor, as a stronger one cost LoCoMo @10 (figures: the results file named in the
    # module's docstring)
    others: float = 0.85


@dataclass(frozen=True)
class Candidate:
    """One item and its signals; ``None``: that signal did not find it (it adds nothing)."""

    hit: Hit
    lexical: float | None = None  # BM25 score
    dense: float | None = None  # cosine to the query
    weight: float = 1.0  # a memory's decay x confidence, in [0, 1]
    members: tuple[str, ...] = ()  # a derived memory's (a profile): the memories it is drawn from


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


# A title and its abbreviation are one word to whoever asks ("How many doctors did I visit?" is
# about "Dr. Patel", "Dr. Smith"); Lucene's English analyzer stems the plural, not the
# abbreviation (figures: the results file named in the module's docstring).
_TITLES = {"doctor": "dr", "doctors": "dr", "dr": "doctor", "professor": "prof",
           "professors": "prof", "prof": "professor"}


# The same for Chinese, which has no spaces: a question is one \w+ run, and Lucene reads each
# Han character as a word, so "我现在用的是什么编辑器" matched every turn with 我, 的, 是. The
# words that ask or point cut the run ("用", "编辑器"); "现在" stays (changes say it).
_QUERY_STOP_ZH = re.compile(
    "我们|咱们|我|你们|你|您|的|是|什么|哪个|哪种|哪家|哪所|哪里|哪儿|哪|吗|呢|吧|了|么|啥"
    "|怎么|怎样|如何|有没有|是不是|一个|一下")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _words(term: str) -> list[str]:
    if not _HAN.search(term):
        return [term] if term not in QUERY_STOP else []
    return [w for w in _QUERY_STOP_ZH.split(term) if w]


def query_terms(text: str) -> list[str]:
    """A question's words for BM25, lower-cased: question words dropped (``QUERY_STOP``,
    ``_QUERY_STOP_ZH``), a title's abbreviation added ("doctors": "dr"), at most
    ``MAX_TERMS``."""
    terms = [w for t in _TERMS.findall(text) for w in _words(t.lower())][:MAX_TERMS]
    return terms + [_TITLES[t] for t in terms if t in _TITLES and _TITLES[t] not in terms]


def lucene_query(user_id: str, text: str, *, field: str = "search_text") -> str | None:
    """A Lucene query for ``text`` over one field of the user's turns (``search_text``: speaker,
    text and the turn before; ``text`` alone, ``text+speaker``) or memories (``content``), or
    None if it has no words but question words (``QUERY_STOP``). Only word characters pass (no
    operator, wildcard or field syntax from user text), lower-cased (AND, OR, NOT are words
    here)."""
    terms = query_terms(text)
    if not terms:
        return None
    words = " ".join(terms)
    if field == "text+speaker":
        return f"+user_key:{user_key(user_id)} +(text:({words}) speaker:({words}))"
    return f"+user_key:{user_key(user_id)} +{field}:({words})"


def _day(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


def episode_text(content: str, who: str | None, when: datetime) -> str:
    """What a turn's vector is made from: who said it and when, then what was said ("Caroline
    on 8 May 2023: …"): questions name people, and ask when (figures: the results file
    named in the module's docstring)."""
    return f"{who} on {_day(when)}: {content}" if who else f"On {_day(when)}: {content}"


def passage_text(content: str, who: str | None, when: datetime) -> str:
    """What a long turn's second and later passages are embedded as: who said it, not when
    (the first passage says both, :func:`episode_text`); a turn of no named speaker keeps its
    date on every passage (a passage says who or when). The date's five tokens on every
    passage were a good share of what a turn embeds, and its embedding CPU, for no recall;
    bare passages (no speaker either) cost recall, LongMemEval's (no speaker names) too: so
    they keep their date (figures: the results file named in the module's docstring)."""
    return f"{who}: {content}" if who else episode_text(content, who, when)


# A long turn's vector is mostly about whatever fills most of it: "I still remember the happy
# high school experiences … Speaking of future, what are the average salaries for data
# scientists …" sits at cosine 0.02 to "Should I attend my high school reunion?", its first
# sentence alone at 0.36. So a turn of PASSAGE_MIN_CHARS or more is embedded sentence by
# sentence (its passages, at most MAX_PASSAGES), its vector is their mean (:func:`turn_vectors`:
# no text is embedded twice), and a turn's cosine to a query is the best of its vector's and
# its passages': on LoCoMo that beat one vector of the whole turn, and the whole turn's
# vector beside its passages', and ingested faster than the latter (figures: the results file
# named in the module's docstring). MiniLM, trained on sentence pairs, embeds a sentence
# better than a paragraph
PASSAGE_MIN_CHARS = 120
MAX_PASSAGES = 8
_PASSAGE_CUT = re.compile(r"(?<=[。！？!?])\s*|(?<=\.)\s+|\n+")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def passages(content: str) -> list[str]:
    """The sentences of a long turn that are embedded in its stead (none for a turn under
    ``PASSAGE_MIN_CHARS`` or of one sentence): each of at least 20 characters (8 in Chinese),
    the first ``MAX_PASSAGES``."""
    if len(content) < PASSAGE_MIN_CHARS:
        return []
    pieces = [p.strip() for p in _PASSAGE_CUT.split(content)]
    kept = [p for p in pieces if len(p) >= (8 if _CJK_CHAR.search(p) else 20)]
    return kept[:MAX_PASSAGES] if len(kept) > 1 else []


def turn_vectors(embed: Callable[[list[str]], list[Vector]],
                 turns: Sequence[tuple[str, str | None, datetime]]
                 ) -> tuple[list[Vector], list[list[Vector]]]:
    """Each turn's vector and its passages' (turns as (content, who, when)), in one call of
    ``embed``: a turn of passages is not embedded whole as well (that would embed its text
    twice); its vector is the mean of its passages' (unit length; the first embedded as
    :func:`episode_text`, the others as :func:`passage_text`), a turn of none is embedded
    whole (:func:`episode_text`)."""
    pieces = [passages(content) for content, _, _ in turns]
    texts = [episode_text(content, who, when) for (content, who, when), ps
             in zip(turns, pieces, strict=True) if not ps]
    texts += [episode_text(p, who, when) if n == 0 else passage_text(p, who, when)
              for (_, who, when), ps in zip(turns, pieces, strict=True) for n, p in enumerate(ps)]
    embedded = embed(texts)
    wholes = sum(not ps for ps in pieces)
    whole, rest = iter(embedded[:wholes]), iter(embedded[wholes:])
    parts = [[next(rest) for _ in ps] for ps in pieces]
    return [_mean(vs) if vs else next(whole) for vs in parts], parts


def _mean(vectors: Sequence[Vector]) -> Vector:
    summed = [sum(xs) for xs in zip(*vectors, strict=True)]
    norm = math.sqrt(sum(x * x for x in summed)) or 1.0
    return [x / norm for x in summed]


def search_text(content: str, speaker: str | None, previous: str | None,
                when: datetime) -> str:
    """What a turn's BM25 document holds: its speaker, its text, the end of the turn it replies
    to (:func:`replied_to`; the question is at its end), and its date in words
    (a question "on 24 October 2023" meets the turns of that day); each part raised LoCoMo
    dev's BM25 recall. The whole turn before drowns a user's turn in the assistant's long
    answer (on LongMemEval); its last ``PREVIOUS_CHARS`` keep LoCoMo's gain and cost
    LongMemEval nothing (figures: the results file named in the module's docstring)."""
    tail = previous[-PREVIOUS_CHARS:] if previous else None
    return " ".join(part for part in (speaker, content, tail, _day(when)) if part)


def replied_to(turns: Sequence[Turn], i: int) -> str | None:
    """The text of the turn that turn ``i`` of a batch may reply to: the one before it, when
    someone else said it (a person's next sentence is no reply: "I like hiking." after "I
    like jazz." must not be found for jazz)."""
    if i <= 0:
        return None
    before, turn = turns[i - 1], turns[i]
    if (before.speaker, before.role) == (turn.speaker, turn.role):
        return None
    return before.content


def neighbors(episode_ids: Sequence[str]) -> list[list[str]]:
    """For each turn of a batch (in order), the ids of the turns before and after it: stored
    with the turn, so a search can let a turn's neighbours share its evidence."""
    return [[*episode_ids[max(0, i - 1):i], *episode_ids[i + 1:i + 2]]
            for i in range(len(episode_ids))]


def _merged(candidates: Sequence[Candidate]) -> dict[str, Candidate]:
    """One candidate per id, with each signal it was found by (the best, if found twice)."""
    out: dict[str, Candidate] = {}

    def best(a: float | None, b: float | None) -> float | None:
        return b if a is None else a if b is None else max(a, b)

    for c in candidates:
        seen = out.get(c.hit.id)
        out[c.hit.id] = c if seen is None else replace(
            seen, lexical=best(seen.lexical, c.lexical), dense=best(seen.dense, c.dense))
    return out


@dataclass(frozen=True)
class Signals:
    """How one hit's fused score came about (the console's "why this answer"): each signal
    as found and its share of the score, the factor the score was then weighed by, and what
    the neighbouring turns (a profile: its members) added.
    ``score = (lexical_part + dense_part) * factor + neighbor``."""

    lexical: float | None  # BM25 score as found (None: BM25 did not find it)
    dense: float | None  # cosine to the query as found
    lexical_part: float  # Weights.lexical x BM25 / the pool's best
    dense_part: float  # (1 - Weights.lexical) x cosine stretched over the pool's range
    factor: float  # decay x confidence, superseded, past, assistant, date: all multiplied
    neighbor: float  # added for strong turns next to it and the memories drawn from it (a
    # profile: its members found)
    score: float


def fuse(episodes: Sequence[Candidate], memories: Sequence[Candidate], k: int, *,
         weights: Weights = Weights(), superseded: Collection[str] = (),
         past: bool = False, window: tuple[datetime, datetime] | None = None,
         query: str | None = None, successors: Mapping[str, Hit] | None = None) -> list[Hit]:
    """Top ``k`` of the fused ranking of turns and memories; each hit's score is its fused
    score (comparable within one list, not across queries). ``window``: the span of time the
    question names; what was said in it weighs ``Weights.date`` more. ``query``: the
    question, for the one speaker it names (``Weights.others``). ``successors``: what is no
    longer true (a turn ref, a superseded memory's id) -> the current memory holding its
    place (:func:`current_first`)."""
    return [hit for hit, _ in fuse_explained(episodes, memories, k, weights=weights,
                                             superseded=superseded, past=past,
                                             window=window, query=query,
                                             successors=successors)]


def named_speakers(query: str, speakers: Collection[str | None]) -> frozenset[str]:
    """The speakers (of the turns found) that the question names as a word ("What car does
    Evan drive?": Evan)."""
    words = {w.casefold() for w in _TERMS.findall(query)}
    return frozenset(s for s in speakers if s and s.casefold() in words)


def fuse_explained(episodes: Sequence[Candidate], memories: Sequence[Candidate], k: int, *,
                   weights: Weights = Weights(), superseded: Collection[str] = (),
                   past: bool = False, window: tuple[datetime, datetime] | None = None,
                   query: str | None = None, successors: Mapping[str, Hit] | None = None
                   ) -> list[tuple[Hit, Signals]]:
    """:func:`fuse`, each hit with the :class:`Signals` its score is made of."""
    items = _merged([*episodes, *memories])
    if not items or k <= 0:
        return []
    named = named_speakers(query, {c.hit.speaker for c in items.values()}) if query else set()
    cosines = [c.dense for c in items.values() if c.dense is not None and c.hit.type == "episode"]
    if not cosines:
        cosines = [c.dense for c in items.values() if c.dense is not None]
    lo, hi = (min(cosines), max(cosines)) if cosines else (0.0, 0.0)
    lo = min(lo, hi - weights.min_spread)
    top_lexical = max((c.lexical for c in items.values() if c.lexical), default=0.0)
    changed = weights.past_factor if past else weights.superseded_factor
    superseded = set(superseded)

    def parts(c: Candidate) -> tuple[float, float, float]:
        lexical = (c.lexical or 0.0) / top_lexical if top_lexical > 0 else 0.0
        dense = 0.0
        if c.dense is not None and not (c.hit.type == "memory" and c.dense < weights.memory_floor):
            dense = min(1.0, max(0.0, (c.dense - lo) / (hi - lo))) if hi > lo else 1.0
        factor = 1.0
        if c.hit.type == "memory":
            factor *= 0.5 + 0.5 * max(0.0, min(1.0, c.weight))
            if c.hit.status == "superseded":
                factor *= changed
        else:
            if set(c.hit.source_turn_ids) & superseded:
                factor *= changed
            if c.hit.role == "assistant":
                factor *= weights.assistant_factor
            if len(named) == 1 and c.hit.speaker and c.hit.speaker not in named:
                factor *= weights.others
        if window is not None and window[0] <= c.hit.event_at < window[1]:
            factor *= 1.0 + weights.date
        return weights.lexical * lexical, (1.0 - weights.lexical) * dense, factor

    split = {i: parts(c) for i, c in items.items()}
    own = {i: (lex + den) * factor for i, (lex, den, factor) in split.items()}
    meaning = {i: den * factor for i, (_, den, factor) in split.items()}
    bonus = _bonus(items, own, meaning, weights)
    scored = {i: own[i] + bonus[i] for i in items}
    order = sorted(scored, key=lambda i: (-scored[i], items[i].hit.type != "memory", i))
    chosen = _choose(order, items, len(items), weights.memory_every)  # all: k is a prefix
    out = []
    for i in chosen:
        lex, den, factor = split[i]
        score = round(scored[i], 6)
        out.append((replace(items[i].hit, score=score),
                    Signals(lexical=items[i].lexical, dense=items[i].dense,
                            lexical_part=round(lex, 6), dense_part=round(den, 6),
                            factor=round(factor, 6), neighbor=round(bonus[i], 6), score=score)))
    # what no signal found (no word of the question, a cosine under the floor, nothing from
    # its neighbours) does not pad the list: a short list is short
    found = [(hit, why) for hit, why in out
             if why.lexical or (why.dense or 0.0) >= weights.memory_floor or why.neighbor]
    return current_first(found, successors or {}, past=past)[:k]


def _successor_of(hit: Hit, successors: Mapping[str, Hit]) -> Hit | None:
    if hit.type == "memory":
        return successors.get(hit.id) if hit.status == "superseded" else None
    return next((successors[r] for r in hit.source_turn_ids if r in successors), None)


def current_first(ranked: Sequence[tuple[Hit, Signals]], successors: Mapping[str, Hit], *,
                  past: bool) -> list[tuple[Hit, Signals]]:
    """What is no longer true says so, and yields its place to what is true now.

    A superseded memory or a turn that stated one carries the current memory that holds its
    place (``superseded_by``, ``current``). Unless the question asks about the past, that
    current memory is placed right before the first such hit, at its score: the hit matched
    the question's words ("where do I live?" meets "I live in Lyon."), and the answer to it
    today is its successor ("The user lives in Cork."), however it is worded. The list for k
    stays the head of the list for any larger k (the pass runs over the whole pool)."""
    out: list[tuple[Hit, Signals]] = []
    placed: set[str] = set()
    for found, signals in ranked:
        if found.id in placed:
            continue
        hit, successor = found, _successor_of(found, successors)
        if successor is not None:
            hit = replace(found, superseded_by=successor.id, current=successor.content)
            if not past and successor.id not in placed:
                moved = next((pair for pair in ranked if pair[0].id == successor.id), None)
                lifted = replace(moved[0] if moved else successor, score=hit.score)
                out.append((lifted, replace(moved[1], score=hit.score) if moved else Signals(
                    lexical=None, dense=None, lexical_part=0.0, dense_part=0.0, factor=1.0,
                    neighbor=0.0, score=hit.score)))
                placed.add(successor.id)
        out.append((hit, signals))
        placed.add(hit.id)
    return out


def _choose(order: Sequence[str], items: dict[str, Candidate], k: int, every: int) -> list[str]:
    """The first ``k`` of ``order`` with at most one memory in ``every`` places (a memory past
    its share waits for its place; when nothing else is left, the memories after all)."""
    chosen: list[str] = []
    deferred: list[str] = []  # memories past their share, in order: they come back later
    for i in order:
        while deferred and _memory_fits(chosen, items, every):
            chosen.append(deferred.pop(0))
        if items[i].hit.type == "memory" and not _memory_fits(chosen, items, every):
            deferred.append(i)
        else:
            chosen.append(i)
        if len(chosen) >= k:
            break
    while len(chosen) < k and deferred:
        chosen.append(deferred.pop(0))
    return chosen


def _bonus(items: dict[str, Candidate], own: dict[str, float], meaning: dict[str, float],
           weights: Weights) -> dict[str, float]:
    """What a hit gains from the others in the pool: a person's turn a share of its neighbours'
    scores (the assistant's turns neither lend nor borrow), a profile a share of its members',
    a turn a share of the meaning of the best memory drawn from it (``meaning``: each hit's
    dense part times its factor)."""
    bonus = dict.fromkeys(items, 0.0)
    drawn: dict[str, float] = {}  # turn ref -> the best meaning of a memory citing it
    for i, c in items.items():
        if c.hit.type == "memory":
            for ref in c.hit.source_turn_ids:
                drawn[ref] = max(drawn.get(ref, 0.0), meaning[i])
    for i, c in items.items():
        if c.hit.type == "episode":
            bonus[i] = weights.source * max(
                (drawn.get(ref, 0.0) for ref in c.hit.source_turn_ids), default=0.0)
    for i, c in items.items():
        if weights.neighbor and c.hit.type == "episode" and c.hit.role != "assistant":
            bonus[i] += weights.neighbor * sum(
                own[j] for j in c.hit.neighbors
                if j in items and items[j].hit.role != "assistant")
        elif weights.member and c.members:
            bonus[i] += weights.member * sum(own[j] for j in c.members if j in items)
    return bonus


def _memory_fits(chosen: list[str], items: dict[str, Candidate], every: int) -> bool:
    """Whether a memory may take the next place: at most one memory in every ``every``."""
    memories = sum(items[i].hit.type == "memory" for i in chosen)
    return memories * every <= len(chosen)
