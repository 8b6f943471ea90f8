"""Public memory benchmarks as published, read as an agent would send them, and scored.

* **LoCoMo** (``locomo10.json``: a list of samples, two named people over ~20 dated sessions):
  one memq user per sample, one batch per session, each turn with its speaker's name; a shared
  photo comes as its ``blip_caption`` ("[shares a photo: …]"). Questions of categories 1-4
  (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 has no answer); evidence ids
  normalised (``D8:6; D9:17``, ``D:11:26``, ``D30:05``).
* **LongMemEval** (a list of instances, each a question over its own haystack of sessions
  between a user and an assistant): one memq user per instance, roles as given; evidence =
  the turns flagged ``has_answer`` (turn level) and ``answer_session_ids`` (session level).

Published turns with no text are skipped and counted. Session dates carry no zone: read as UTC.
Loading and scoring are pure (``load``, ``recall_at``, ``answers``: unit-tested); ``run`` is
``scripts/bench memory``: it ingests through real workers, searches as an agent does and prints.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memq.schemas import IngestBatch, Turn, turn_ref


@dataclass
class Question:
    text: str
    gold: list[str]  # turn refs (<session>/<turn>)
    category: str
    answer: str
    sessions: list[str] = field(default_factory=list)  # answer sessions (LongMemEval)
    # when it was asked (LongMemEval's question_date): "two weeks ago" is from then; LoCoMo
    # gives none (its questions name dates), so it is asked now
    asked: datetime | None = None

    def at(self, now: datetime) -> datetime:
        return self.asked or now


@dataclass
class Conversation:
    user_id: str
    batches: list[IngestBatch]
    questions: list[Question]
    skipped_empty: int = 0
    refs: dict[str, str] = field(default_factory=dict)  # LoCoMo dia_id -> the turn's ref

    @property
    def turns(self) -> int:
        return sum(len(b.turns) for b in self.batches)


LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
_SAFE = re.compile(r"[^A-Za-z0-9_.:@\-]")


def _id(text: str) -> str:
    return _SAFE.sub("-", text)[:128]


def evidence_ids(raw: Iterable[str]) -> list[str]:
    """LoCoMo's evidence ids, normalised: ``D8:6; D9:17`` is two, ``D:11:26`` is ``D11:26``,
    ``D30:05`` is ``D30:5``."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = _EVIDENCE.fullmatch(part.strip())
            if m and (ref := f"D{int(m.group(1))}:{int(m.group(2))}") not in out:
                out.append(ref)
    return out


def _locomo(samples: list[dict], prefix: str) -> list[Conversation]:
    out = []
    for s in samples:
        c, user = s["conversation"], f"{prefix}-{_id(str(s['sample_id']))}"
        batches, refs, skipped = [], {}, 0
        n = 1
        while f"session_{n}" in c:
            sid = f"session_{n}"
            start = datetime.strptime(c[f"{sid}_date_time"], "%I:%M %p on %d %B, %Y"
                                      ).replace(tzinfo=UTC)
            turns = []
            for i, t in enumerate(c[sid]):
                text = (t.get("text") or "").strip()
                if t.get("blip_caption"):
                    text = f"{text} [shares a photo: {t['blip_caption']}]".strip()
                if not text:
                    skipped += 1
                    continue
                m = _EVIDENCE.fullmatch(t["dia_id"])
                dia = f"D{int(m.group(1))}:{int(m.group(2))}" if m else _id(t["dia_id"])
                refs[dia] = turn_ref(sid, _id(dia))
                turns.append(Turn(turn_id=_id(dia), role="user", content=text,
                                  speaker=t["speaker"], timestamp=start + timedelta(seconds=i)))
            if turns:
                batches.append(IngestBatch(user_id=user, session_id=sid, turns=turns))
            n += 1
        questions = []
        for q in s["qa"]:
            cat = int(q.get("category", 0))
            gold = [refs[e] for e in evidence_ids(q.get("evidence", [])) if e in refs]
            if cat in LOCOMO_CATEGORIES and gold:
                questions.append(Question(q["question"], gold, LOCOMO_CATEGORIES[cat],
                                          str(q.get("answer", ""))))
        out.append(Conversation(user, batches, questions, skipped, refs))
    return out


def _lme_time(text: str) -> datetime:
    # "2023/05/20 (Sat) 07:47"
    return datetime.strptime(text[:10] + text[-6:], "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def _longmemeval(instances: list[dict], prefix: str) -> list[Conversation]:
    out = []
    for x in instances:
        user = f"{prefix}-{_id(str(x['question_id']))}"
        batches, gold, skipped = [], [], 0
        for n, (hsid, date, session) in enumerate(zip(
                x["haystack_session_ids"], x["haystack_dates"], x["haystack_sessions"],
                strict=True)):
            sid, start = _id(f"s{n}-{hsid}"), _lme_time(date)
            turns = []
            for i, t in enumerate(session):
                if not (t.get("content") or "").strip():
                    skipped += 1
                    continue
                turns.append(Turn(turn_id=f"t{i}", role=t["role"], content=t["content"],
                                  timestamp=start + timedelta(seconds=i)))
                if t.get("has_answer"):
                    gold.append(turn_ref(sid, f"t{i}"))
            if turns:
                batches.append(IngestBatch(user_id=user, session_id=sid, turns=turns))
        answer_sessions = {str(a) for a in x.get("answer_session_ids", [])}
        sessions = [_id(f"s{n}-{h}") for n, h in enumerate(x["haystack_session_ids"])
                    if str(h) in answer_sessions]
        asked = _lme_time(x["question_date"]) if x.get("question_date") else None
        q = Question(x["question"], gold, str(x["question_type"]), str(x["answer"]), sessions,
                     asked)
        out.append(Conversation(user, batches, [q], skipped))
    return out


def load(path: str | Path, prefix: str = "bench") -> tuple[str, list[Conversation]]:
    """(format name, conversations) of a LoCoMo or LongMemEval file, told apart by shape."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ValueError(f"{path}: not a LoCoMo or LongMemEval file (a JSON list of samples)")
    if "conversation" in data[0] and "qa" in data[0]:
        return "locomo", _locomo(data, f"{prefix}-locomo")
    if "haystack_sessions" in data[0]:
        return "longmemeval", _longmemeval(data, f"{prefix}-lme")
    raise ValueError(f"{path}: neither LoCoMo (conversation, qa) nor LongMemEval "
                     "(haystack_sessions) samples")


def refs_of(hits: Sequence[object], k: int) -> list[str]:
    """The turn refs the top k hits cite, in order: a memory cites its source turns."""
    out: list[str] = []
    for h in hits[:k]:
        out += [r for r in getattr(h, "source_turn_ids", []) if r not in out]
    return out


def recall_at(hits: Sequence[object], gold: Sequence[str], k: int) -> float:
    """Evidence recall@k: the share of the gold turns the top k hits cite."""
    return len(set(refs_of(hits, k)) & set(gold)) / len(gold) if gold else 0.0


def session_recall_at(hits: Sequence[object], sessions: Sequence[str], k: int) -> float:
    """The share of the answer sessions that one of the top k hits comes from."""
    got = {r.split("/", 1)[0] for r in refs_of(hits, k)}
    return len(got & set(sessions)) / len(sessions) if sessions else 0.0


_STOP = frozenset(re.findall(r"\w+", """a an and are as at be but by for from has have he her
    his i if in into is it its me my no not of on or our she so such that the their them then
    there these they this to was we were will with you your"""))
_WORD = re.compile(r"\w+")


def answer_words(answer: str) -> set[str]:
    """The key words of a gold answer: its words less stop words, lower-cased."""
    return {w for w in _WORD.findall(answer.lower()) if w not in _STOP}


# Chinese is written without spaces: a `\w+` run is a whole clause ("我家猫叫芝麻"), so a key
# word of Chinese characters is looked for inside the block's text, not among its words.
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def answers(block: str, answer: str) -> bool:
    """Whether a context block holds every key word of the gold answer (none: not scored)."""
    words = answer_words(answer)
    text = block.lower()
    held = set(_WORD.findall(text))
    return bool(words) and all(w in text if _CJK.search(w) else w in held for w in words)


# -- the run (scripts/bench memory) ----------------------------------------------------------
KS = (5, 10, 20)


def _bm25_block(hits: Sequence[Any], budget: int) -> str:
    """The top BM25 turns, dated and named, cut to ``budget`` characters: what a plain
    keyword search would put in the prompt."""
    from memq.pipeline.context import turn_line

    lines = [turn_line(h, dates=False) for h in hits]  # as said, no dates worked out
    return "\n".join(lines)[:budget]


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def run(args: Any, ingest: Callable[..., float]) -> dict[str, Any]:
    from memq.workers import wiring
    from memq.workers.api import StoresClient as Client  # the stores' ids
    from memq.workers.search import search

    try:
        fmt, convs = load(args.dataset)
    except (OSError, ValueError) as exc:  # not there, not JSON, not a benchmark: one line
        raise SystemExit(f"bench memory: {exc}") from None
    if args.limit:
        convs = convs[: args.limit]
    client = Client()
    turns = sum(c.turns for c in convs)
    skipped = sum(c.skipped_empty for c in convs)
    print(f"{fmt}: {len(convs)} users, {turns} turns ({skipped} empty published turns skipped), "
          f"{sum(len(c.questions) for c in convs)} questions", flush=True)
    ingest_s = None
    if not args.no_ingest:
        ingest_s = ingest([c.user_id for c in convs], [b for c in convs for b in c.batches],
                          client, args.workers)
        print(f"ingested in {ingest_s:.1f} s: {turns / ingest_s:.1f} turns/s "
              f"({args.workers} worker processes of 2; load average "
              f"{os.getloadavg()[0]:.2f})", flush=True)
    now = datetime.now(UTC)
    graph, k_max = wiring.graph(), max(KS)
    # memq, then each of its turn signals alone (a fusion must beat its best component), then
    # plain keyword search over the raw turns
    systems: tuple[str, ...] = ("memq", "memq bm25 alone", "memq dense alone", "bm25",
                                "bm25+speaker")
    # --consolidate: the lists before the job (a row of their own), then the job, then the rest
    before = _unconsolidated(convs, k_max, now) if args.consolidate else {}
    systems = ("memq", "memq unconsolidated", *systems[1:]) if before else systems
    rows, latencies = _rank_all(convs, before, k_max, now)
    context = _context_rates(convs, client, graph, args.max_tokens, args.context_questions, now)
    # once done, the same question must get the same list: asked again, minutes later
    questions = [(c.user_id, q.text, q.at(now)) for c in convs for q in c.questions]
    moved = sum([h.id for h in search(user, text, k_max, at)] != row["ids"]
                for (user, text, at), row in zip(questions, rows, strict=True))
    report = _report(fmt, rows, systems, latencies, context, ingest_s, turns)
    report["moved_lists"] = {"moved": moved, "of": len(rows)}
    # per question, in the dataset's order (ids and scores, no text): what a change moved
    report["questions"] = rows
    report["dead_weight"] = dw = dead_weight(convs, rows, graph)
    print(f"dead weight: {dw['never@10']} of {dw['memories']} current memories "
          f"({dw['share@10']:.0%}) are in no question's top 10, {dw['never@20']} in no top 20")
    print(f"lists that moved when asked again after the first pass: {moved} of {len(rows)}")
    _emit(report, systems, args.out, args.png)
    return report


def _rank_all(convs: Sequence[Conversation], before: dict[tuple[str, str], list[Any]],
              k_max: int, now: datetime) -> tuple[list[dict[str, Any]], list[float]]:
    """Every question asked of memq and of each signal alone: one row per question (ids and
    scores, no text), and memq's search latencies."""
    from memq.workers import wiring
    from memq.workers.search import search

    graph, chroma, embed = wiring.graph(), wiring.chroma(), wiring.embedder()
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    for conv in convs:
        for q in conv.questions:
            t0 = time.perf_counter()
            ranked = {"memq": search(conv.user_id, q.text, k_max, q.at(now))}
            latencies.append(time.perf_counter() - t0)
            if before:
                ranked["memq unconsolidated"] = before[(conv.user_id, q.text)]
            ranked["memq bm25 alone"] = graph.search_episodes(conv.user_id, q.text, k_max)
            ranked["memq dense alone"] = chroma.search(conv.user_id, embed.embed([q.text])[0],
                                                       embed.model_id, k_max)
            ranked["bm25"] = graph.search_episodes(conv.user_id, q.text, k_max, field="text")
            ranked["bm25+speaker"] = graph.search_episodes(conv.user_id, q.text, k_max,
                                                           field="text+speaker")
            row: dict[str, Any] = {"user": conv.user_id, "category": q.category,
                                   "ids": [h.id for h in ranked["memq"]]}
            for name, hits in ranked.items():
                for k in KS:
                    row[f"{name} R@{k}"] = recall_at(hits, q.gold, k) if q.gold else None
                    row[f"{name} hit@{k}"] = (float(bool(set(refs_of(hits, k)) & set(q.gold)))
                                              if q.gold else None)
                    if q.sessions:
                        row[f"{name} S@{k}"] = session_recall_at(hits, q.sessions, k)
                row[f"{name} memories@10"] = sum(h.type == "memory" for h in hits[:10])
            rows.append(row)
    return rows, latencies


def _emit(report: dict[str, Any], systems: Sequence[str], out: str, png: str) -> None:
    _print(report, systems)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(report, indent=1))
    print(f"json: {out}")
    _png(report, systems, png)


def _unconsolidated(convs: Sequence[Conversation], k: int,
                    now: datetime) -> dict[tuple[str, str], list[Any]]:
    """Every question's list as it is, then the consolidation job on every user."""
    from memq.workers.search import search

    before = {(c.user_id, q.text): search(c.user_id, q.text, k, q.at(now))
              for c in convs for q in c.questions}
    consolidate([c.user_id for c in convs], now)
    return before


def consolidate(users: Sequence[str], now: datetime) -> None:
    """The nightly consolidation job, now, for each user (under the user's claim, as beat runs
    it): topic profiles and clusters, fenced and audited like any write."""
    from memq.workers.lifecycle import timed

    for user in users:
        result, seconds = timed("consolidate", user, now, wait_s=60.0)
        print(f"consolidate {user}: examined {result.examined}, changed {result.changed} "
              f"({seconds:.1f} s)", flush=True)


def dead_weight(convs: Sequence[Conversation], rows: Sequence[dict[str, Any]],
                graph: Any) -> dict[str, Any]:
    """The current memories that no question's list (memq, top 10 and top 20) holds: what
    extraction keeps that no benchmark question ever reads back."""
    shown: dict[str, dict[int, set[str]]] = {}
    for row in rows:
        mine = shown.setdefault(row["user"], {10: set(), 20: set()})
        mine[10].update(row["ids"][:10])
        mine[20].update(row["ids"][:20])
    total, never = 0, {10: 0, 20: 0}
    for conv in convs:
        current = {m.id for m in graph.read_memories(conv.user_id)}
        total += len(current)
        for k in (10, 20):
            never[k] += len(current - shown.get(conv.user_id, {}).get(k, set()))
    return {"memories": total, "never@10": never[10], "never@20": never[20],
            "share@10": never[10] / total if total else 0.0,
            "share@20": never[20] / total if total else 0.0}


def _context_rates(convs: Sequence[Conversation], client: Any, graph: Any, max_tokens: int,
                   limit: int, now: datetime) -> dict[str, Any]:
    """The share of questions whose context block holds every key word of the gold answer,
    beside the top BM25 turns cut to the same budget; per category."""
    got: dict[str, list[float]] = {}
    base: dict[str, list[float]] = {}
    sizes: list[int] = []
    asked = 0
    for conv in convs:
        for q in conv.questions:
            if limit and asked >= limit:
                break
            if not answer_words(q.answer):
                continue
            asked += 1
            block = client.context(conv.user_id, q.text, max_tokens=max_tokens, now=q.at(now))
            sizes.append(len(block))
            plain = _bm25_block(graph.search_episodes(conv.user_id, q.text, 40, field="text"),
                                max_tokens * 4)
            for cat in (q.category, "all"):
                got.setdefault(cat, []).append(float(answers(block, q.answer)))
                base.setdefault(cat, []).append(float(answers(plain, q.answer)))
    return {"memq": {c: _mean(v) for c, v in got.items()},
            "bm25": {c: _mean(v) for c, v in base.items()},
            "n": {c: len(v) for c, v in got.items()},
            "chars_mean": _mean([float(s) for s in sizes]),
            "chars_max": max(sizes, default=0), "max_tokens": max_tokens}


def _report(fmt: str, rows: list[dict[str, Any]], systems: Sequence[str],
            latencies: list[float], context: dict[str, Any], ingest_s: float | None,
            turns: int) -> dict[str, Any]:
    cats = sorted({r["category"] for r in rows})
    table: dict[str, dict[str, dict[str, float]]] = {}
    for cat in [*cats, "all"]:
        chosen = [r for r in rows if cat in ("all", r["category"])]
        table[cat] = {s: {m: _mean([r[f"{s} {m}"] for r in chosen
                                    if r.get(f"{s} {m}") is not None])
                          for m in [*(f"R@{k}" for k in KS), "hit@10",
                                    *((f"S@{k}" for k in KS) if "memq S@10" in rows[0] else ()),
                                    "memories@10"]}
                      for s in systems}
        table[cat]["n"] = {"questions": float(len(chosen))}
    lat = sorted(latencies)
    return {"dataset": fmt, "table": table, "context": context,
            "search_ms": {"p50": 1000 * lat[len(lat) // 2],
                          "p95": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.95))]},
            "ingest": {"seconds": ingest_s, "turns": turns,
                       "turns_per_s": turns / ingest_s if ingest_s else None},
            "load_average": list(os.getloadavg())}


def _print(report: dict[str, Any], systems: Sequence[str]) -> None:
    table = report["table"]
    metrics = [m for m in table["all"]["memq"] if m != "memories@10"]
    print(f"\n{'category':>26} {'n':>4} {'system':>16} " + " ".join(f"{m:>7}" for m in metrics)
          + "  mem@10")
    for cat, by in table.items():
        for s in systems:
            print(f"{cat:>26} {int(by['n']['questions']):4} {s:>16} "
                  + " ".join(f"{by[s][m]:7.3f}" for m in metrics)
                  + f"  {by[s]['memories@10']:6.2f}")
    c = report["context"]
    print(f"\ncontext block (max_tokens={c['max_tokens']}): answer key words present "
          + ", ".join(f"{cat} {c['memq'][cat]:.3f} (bm25 {c['bm25'][cat]:.3f}, n={c['n'][cat]})"
                      for cat in sorted(c["memq"]))
          + f"; {c['chars_mean']:.0f} chars mean, {c['chars_max']} max")
    print(f"search in-process: p50 {report['search_ms']['p50']:.0f} ms, "
          f"p95 {report['search_ms']['p95']:.0f} ms")
    print("load average: " + " ".join(f"{x:.2f}" for x in report["load_average"]))
    a = table["all"]
    print(f"summary dataset={report['dataset']} recall10_memq={a['memq']['R@10']:.3f} "
          f"recall10_bm25={a['bm25']['R@10']:.3f} "
          f"recall10_bm25_speaker={a['bm25+speaker']['R@10']:.3f} "
          f"context_all={c['memq']['all']:.3f} context_bm25={c['bm25']['all']:.3f}")


def _png(report: dict[str, Any], systems: Sequence[str], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no chart: matplotlib is not installed (pip install matplotlib)")
        return
    table = report["table"]
    cats = list(table)
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(systems)
    for j, s in enumerate(systems):
        ax.bar([i + j * width for i in range(len(cats))], [table[c][s]["R@10"] for c in cats],
               width, label=s)
    ax.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(cats))], cats,
                  rotation=15)
    ax.set_ylabel("evidence recall@10")
    ax.set_ylim(0, 1)
    ax.set_title(f"{report['dataset']}: recall@10 by category "
                 f"(load {report['load_average'][0]:.2f})")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=len(systems))
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def sweep(args: Any) -> dict[str, Any]:
    """``scripts/bench fusion``: each question of ``--dataset`` asked once of the stores an
    earlier ``bench memory`` run left (same MEMQ_HOME and ports), its candidates kept, then
    fused again with each ``--lexical`` share (``recall.Weights.lexical``): what the weight
    alone changes, the signals held fixed."""
    from dataclasses import replace

    from memq.pipeline import recall
    from memq.workers.search import search

    fmt, convs = load(args.dataset)
    fuse, kept = recall.fuse_explained, []

    def keep(*a: Any, **kw: Any) -> Any:
        kept.append((a, kw))
        return fuse(*a, **kw)

    now, k_max = datetime.now(UTC), max(KS)
    asked: list[tuple[tuple[Any, ...], dict[str, Any], list[str]]] = []
    recall.fuse_explained = keep  # type: ignore[assignment]  (search reaches it through recall)
    try:
        for conv in convs:
            for q in conv.questions:
                if q.gold:
                    kept.clear()
                    search(conv.user_id, q.text, k_max, q.at(now))
                    asked.append((*kept[-1], q.gold))
    finally:
        recall.fuse_explained = fuse  # type: ignore[assignment]
    rows = []
    for share in (float(x) for x in args.lexical.split(",")):
        weights = replace(recall.Weights(), lexical=share)
        fused = [[h for h, _ in fuse(*a, **{**kw, "weights": weights})] for a, kw, _ in asked]
        row = {"lexical": share, **{f"R@{k}": _mean([recall_at(hits, gold, k) for hits, (
            *_, gold) in zip(fused, asked, strict=True)]) for k in KS}}
        rows.append(row)
        print(f"{fmt} lexical={share:.2f} " + " ".join(
            f"R@{k} {row[f'R@{k}']:.3f}" for k in KS), flush=True)
    report = {"dataset": args.dataset, "questions": len(asked), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    return report
