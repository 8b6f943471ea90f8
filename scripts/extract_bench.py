"""`scripts/bench extract --dataset locomo10.json`: the memories memq extracts from real chat,
scored against LoCoMo's own reference of what is worth remembering.

LoCoMo's samples carry ``observation``: per session and speaker, the facts worth keeping, each
with the turn(s) it comes from (``["Andrew started a new job as a Financial Analyst last
week.", "D1:2"]``). The conversations go through real worker processes (``Client.enqueue``,
the configured extractor: offline rules, or ``--llm-base-url``/``--llm-model`` for any
OpenAI-compatible endpoint), then, per user:

* an observation is **found** when a memory cites one of its evidence turns *and* says the
  same thing: cosine of the two sentences (the index's embedder) >= ``SUPPORT``;
* **observation recall**: the share of observations found;
* **supported precision**: the share of memories that find an observation;
* **questions cited**: the share of the benchmark's questions (categories 1-4) for which some
  memory cites a gold evidence turn;
* per speaker (the memory's subject), per kind; and a seeded random sample of memories with
  the turn they came from, to judge by hand.

``SUPPORT`` is fixed, not tuned per run: 0.68 with the default int8 MiniLM, between what
noise sharing a person's name scores against an observation of its turn ("Andrew's name is
Fox Hollow." / "Andrew enjoys spotting pretty birds while hiking in places like Fox Hollow.":
0.64; "Audrey likes it." / "Audrey's dogs … love exploring new parks": 0.50; "John is a
shooting guard." / "John is a total movie fan.": 0.53) and what a restatement scores ("Jon lost
his job as a banker." / "Jon lost his banking job.": 0.94; "Audrey has three dogs." / "Audrey
has had her dogs named Pepper, Precious, and Panda for 3 years.": 0.70). The rule is the
same for every extractor, so extractors are compared fairly.
Last line: ``summary observation_recall=… supported_precision=… memories=… questions_cited=…``.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memory_bench
import numpy as np

SUPPORT = 0.68


@dataclass(frozen=True)
class Observation:
    speaker: str
    text: str
    evidence: tuple[str, ...]  # turn refs


def observations(sample: dict[str, Any], refs: dict[str, str]) -> list[Observation]:
    """A LoCoMo sample's observations, their evidence as turn refs (malformed ids split and
    normalised; ids of skipped turns dropped; an observation left with none is dropped)."""
    out = []
    for session in (sample.get("observation") or {}).values():
        for speaker, items in (session or {}).items():
            for item in items:
                if not isinstance(item, list) or len(item) < 2:
                    continue
                raw = item[1] if isinstance(item[1], list) else [str(item[1])]
                evidence = tuple(refs[e] for e in memory_bench.evidence_ids(raw) if e in refs)
                if evidence:
                    out.append(Observation(speaker, str(item[0]), evidence))
    return out


@dataclass(frozen=True)
class Scored:
    """One user's memories against its observations."""

    found: list[bool]  # per observation
    supported: list[bool]  # per memory
    best: list[tuple[float, str]]  # per memory: its best similarity to an observation of its turns


def score(memories: Sequence[Any], obs: Sequence[Observation],
          embed: Callable[[list[str]], list[list[float]]]) -> Scored:
    if not memories or not obs:
        return Scored([False] * len(obs), [False] * len(memories), [(0.0, "")] * len(memories))
    mv = _unit(embed([m.content for m in memories]))
    ov = _unit(embed([o.text for o in obs]))
    sims = mv @ ov.T
    cites = np.array([[bool(set(m.source_turn_ids) & set(o.evidence)) for o in obs]
                      for m in memories])
    match = cites & (sims >= SUPPORT)
    best = []
    for i in range(len(memories)):
        cited = np.where(cites[i])[0]
        j = cited[np.argmax(sims[i, cited])] if len(cited) else -1
        best.append((float(sims[i, j]), obs[j].text) if j >= 0 else (0.0, ""))
    return Scored(list(match.any(axis=0)), list(match.any(axis=1)), best)


def _unit(vectors: list[list[float]]) -> Any:
    a = np.asarray(vectors, dtype=np.float32)
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)


def _share(xs: Sequence[bool]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _derived(memories: Sequence[Any], supported: Sequence[bool]) -> list[tuple[bool, float]]:
    """Each current derived memory's support: its own, and the share of its members supported
    (a profile archived by a later run is history, not what consolidation holds)."""
    by_id = {m.id: ok for m, ok in zip(memories, supported, strict=True)}
    return [(ok, _share([by_id.get(d, False) for d in m.derived_from]))
            for m, ok in zip(memories, supported, strict=True)
            if m.derived_from and str(m.status) == "current"]


def _print_derived(derived: Sequence[tuple[bool, float]]) -> None:
    if derived:
        print(f"\nderived (consolidation) {len(derived)}: {_share([ok for ok, _ in derived]):.2f}"
              f" supported as memories; members supported "
              f"{sum(m for _, m in derived) / len(derived):.2f} on average; "
              f"{_share([m >= 0.85 for _, m in derived]):.2f} with >= 85 % of members "
              "supported (not counted in the rows above)")


def _prepare(args: Any, convs: Sequence[Any], client: Any, ingest: Callable[..., float]) -> None:
    """The conversations ingested (unless --no-ingest), then consolidated (--consolidate)."""
    turns = sum(c.turns for c in convs)
    if not args.no_ingest:
        took = ingest([c.user_id for c in convs], [b for c in convs for b in c.batches],
                      client, args.workers)
        print(f"ingested {turns} turns of {len(convs)} conversations in {took:.1f} s "
              f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    if args.consolidate:
        memory_bench.consolidate([c.user_id for c in convs], datetime.now(UTC))


def run(args: Any, ingest: Callable[..., float]) -> None:
    from memq.workers import wiring
    from memq.workers.api import StoresClient as Client  # the stores' ids

    try:
        fmt, convs = memory_bench.load(args.dataset)
        samples = json.loads(Path(args.dataset).read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"bench extract: {exc}") from None
    if fmt != "locomo":
        raise SystemExit(f"bench extract: {args.dataset} is {fmt}; observations come with "
                         "LoCoMo only")
    if args.llm_base_url or args.llm_model:  # the workers started here extract with it
        os.environ["MEMQ_LLM_BASE_URL"] = args.llm_base_url or ""
        os.environ["MEMQ_LLM_MODEL"] = args.llm_model or ""
    if args.limit:
        convs, samples = convs[: args.limit], samples[: args.limit]
    client = Client()
    _prepare(args, convs, client, ingest)
    embedder = wiring.embedder()
    found: dict[str, list[bool]] = defaultdict(list)
    supported: dict[str, list[bool]] = defaultdict(list)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    cited: list[bool] = []
    # consolidation's memories (derived_from): supported as any memory (cosine to an
    # observation of a turn it cites) and through their members (the share supported)
    derived: list[tuple[bool, float]] = []
    pool: list[tuple[Any, bool, tuple[float, str], str]] = []
    for conv, sample in zip(convs, samples, strict=True):
        memories = client.memories(conv.user_id, include_inactive=True)
        obs = observations(sample, conv.refs)
        s = score(memories, obs, embedder.embed)
        for o, f in zip(obs, s.found, strict=True):
            found[o.speaker].append(f)
            found["all"].append(f)
        texts = {f"{b.session_id}/{t.turn_id}": t.content for b in conv.batches for t in b.turns}
        derived += _derived(memories, s.supported)
        for m, ok, best in zip(memories, s.supported, s.best, strict=True):
            if m.derived_from:
                continue
            who = m.triples[0].subject if m.triples else "?"
            supported[who].append(ok)
            supported["all"].append(ok)
            by_kind[str(m.kind)].append(ok)
            pool.append((m, ok, best, texts.get(m.source_turn_ids[0], "")))
        sources = {r for m in memories for r in m.source_turn_ids}
        cited += [bool(set(q.gold) & sources) for q in conv.questions]
    print(f"\n{'who':<14} {'observations':>12} {'recall':>7} {'memories':>9} {'precision':>9}")
    for who in sorted(set(found) | set(supported), key=lambda w: (w == "all", w)):
        print(f"{who:<14} {len(found[who]):>12} {_share(found[who]):>7.3f} "
              f"{len(supported[who]):>9} {_share(supported[who]):>9.3f}")
    print("\nby kind: " + ", ".join(f"{k} {len(v)} ({_share(v):.2f} supported)"
                                   for k, v in sorted(by_kind.items())))
    _print_derived(derived)
    rng = random.Random(args.seed)
    print(f"\na random sample of {min(args.sample, len(pool))} memories, to judge by hand "
          "(memory | best observation of its turn, cosine | the turn):")
    for m, ok, (sim, text), turn in rng.sample(pool, min(args.sample, len(pool))):
        print(f"- [{'supported' if ok else 'no match'} {sim:.2f}] {m.content}\n"
              f"    obs: {text or '-'}\n    turn: {turn[:160]}")
    print(f"\nsummary observation_recall={_share(found['all']):.3f} "
          f"supported_precision={_share(supported['all']):.3f} memories={len(pool)} "
          f"questions_cited={_share(cited):.3f}")
