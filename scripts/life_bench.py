"""`scripts/bench life --dataset FILE`: does what memq believes now follow the user?

Each scenario of FILE (JSON lines: ``id, lang, slot, before, filler, change, question,
past_question, old, new, is_change, control``; e.g. ``tests/data/life_changes_dev.jsonl``,
written by people who had not read the rules; the statement-of-change sets, ``id, before,
change, old, new, is_change``, are scored for what is current only) is one user: the old
statement and a few other turns in a first session, the change (or, for a control, a turn
that changes nothing of the user's: someone else's move, a plan, a question, a wish) months
later in a second, then a present-tense question and a past-tense one.

The turns go through the drain round as a worker runs it (``service.extract`` and
``service.apply_round``) with the offline extractor and judge, the offline embedder, and the
shipped in-memory stores (``pipeline.testing``, held to the real stores' answers by the
contract suite); search is ``pipeline.search``. Scored per scenario:

* **current**: a change ends with a current memory naming the new value and none naming the old
  one; a control ends with the old value still current and nothing superseded;
* **first**: the top hit for the present-tense question names the new value (a control: the
  old one);
* **past**: the top three hits for the past-tense question name the old value (changes only).

Prints a row per scenario that is not right (``--verbose``: every one), then per language and
overall ``summary current=<right>/<n> first=<right>/<n> past=<right>/<n> controls=<right>/<n>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# the first session well before the second: a change said with its time ("we moved in
# January", "去年底") took effect then, after the old value was said
DAY1 = datetime(2025, 9, 1, 9, 0, tzinfo=UTC)
DAY30 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
ASKED = datetime(2026, 4, 20, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Scenario:
    id: str
    lang: str
    slot: str
    before: str
    change: str
    question: str
    past_question: str
    old: str
    new: str | None
    is_change: bool
    control: str | None
    filler: list[str] = field(default_factory=list)


def load(path: str) -> list[Scenario]:
    """The scenarios of a JSON-lines file; a file that is not one names its first bad line."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(Scenario(  # a statement-of-change case (zh_changes_*.jsonl): no questions
                id=str(row["id"]), lang=row.get("lang", "zh"), slot=row.get("slot", "-"),
                before=row["before"], change=row["change"], question=row.get("question", ""),
                past_question=row.get("past_question", ""), old=row["old"], new=row.get("new"),
                is_change=bool(row["is_change"]),
                control=row.get("control") or (None if row["is_change"] else "control"),
                filler=list(row.get("filler") or [])))
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"bench life: {path}:{n} is not a scenario: {exc}") from None
    return out


def _key(text: str) -> str:
    return re.sub(r"[\s\W_]+", "", text.casefold())


def names(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` (case, spaces and punctuation aside; a value of
    several words also by one of its proper names: "Civic" names "Honda Civic", "designer"
    does not name "junior designer")."""
    if _key(value) and _key(value) in _key(text):
        return True
    words = value.split()
    proper = [w for w in words if len(w) >= 4 and w[:1].isupper() and len(words) > 1]
    return any(_key(w) in _key(text) for w in proper)


@dataclass
class Outcome:
    current: bool
    first: bool
    past: bool | None
    why: str


def judge(s: Scenario, memories: Sequence[Any], top: Sequence[Any],
          past_top: Sequence[Any]) -> Outcome:
    def said(m: Any) -> str:  # what a memory states: its facts' objects, else its sentence
        return " | ".join(t.object for t in m.triples) or m.content

    current = [said(m) for m in memories if str(m.status) == "current"]
    gone = [said(m) for m in memories if str(m.status) == "superseded"]
    old_now = [c for c in current if names(c, s.old)]
    first = top[0].content if top else ""
    if s.is_change and s.new is not None:
        new_now = [c for c in current if names(c, s.new)]
        ok = bool(new_now) and not old_now
        why = ("ok" if ok else f"new current: {new_now or '-'}; old current: {old_now or '-'}")
        return Outcome(ok, names(first, s.new) or not s.question,
                       any(names(h.content, s.old) for h in past_top[:3]) or not s.past_question,
                       f"{why}; top: {first[:70]!r}")
    ok = bool(old_now) and not gone
    return Outcome(ok, names(first, s.old) or not s.question, None,
                   f"old current: {old_now or '-'}; superseded: {gone or '-'}; "
                   f"top: {first[:70]!r}")


def run(args: argparse.Namespace) -> None:
    from memq.pipeline import search, service
    from memq.pipeline.lifecycle import Policy
    from memq.pipeline.merge import OfflineJudge
    from memq.pipeline.policy import Thresholds
    from memq.pipeline.predicates import Predicates
    from memq.pipeline.rules import RuleExtractor
    from memq.pipeline.testing import FencedGraph, HashEmbedder, InMemoryIndex
    from memq.schemas import ExtractedBatch, Turn

    if args.hash:
        embedder: Any = HashEmbedder()
    else:
        from memq.pipeline.adapters.embed_local import DEFAULT, build
        embedder = build(os.environ.get("MEMQ_LOCAL_MODEL", DEFAULT))  # type: ignore[arg-type]
    scenarios = load(args.dataset)
    if args.lang:
        scenarios = [s for s in scenarios if s.lang == args.lang]
    th, pred = Thresholds(), Predicates.default()
    index, graph = InMemoryIndex(), FencedGraph()
    ports = service.Ports(embedder=embedder, extractor=RuleExtractor(), judge=OfflineJudge(),
                          memories=index, episodes=index, graph=graph)

    def session(user: str, sid: str, texts: list[str], at: datetime) -> ExtractedBatch:
        turns = [Turn(turn_id=f"t{i}", role="user", content=t, timestamp=at + timedelta(
            minutes=i)) for i, t in enumerate(texts)]
        out = service.extract(ports, user, sid, turns, thresholds=th, now=at)
        return ExtractedBatch(batch_id=f"{user}-{sid}", session_id=sid,
                              refs=[f"{sid}/{t.turn_id}" for t in turns],
                              candidates=out.candidates,
                              vectors=[service.pack(v) for v in out.vectors])

    rows: list[tuple[Scenario, Outcome]] = []
    for s in scenarios:
        user = f"life-{s.id}"
        for sid, texts, at in (("s1", [s.before, *s.filler], DAY1), ("s2", [s.change], DAY30)):
            service.apply_round(ports, user, [session(user, sid, texts, at)], thresholds=th,
                                predicates=pred, now=at)
        top = search.search(index, index, embedder, user, s.question, 5, ASKED, Policy()
                            ) if s.question else []
        past = search.search(index, index, embedder, user, s.past_question, 5, ASKED,
                             Policy()) if s.past_question else []
        o = judge(s, graph.read_memories(user, include_inactive=True), top, past)
        rows.append((s, o))
        right = o.current and o.first and o.past is not False
        if args.verbose or not right:
            marks = f"current={'ok' if o.current else 'NO'} first={'ok' if o.first else 'NO'}"
            if o.past is not None:
                marks += f" past={'ok' if o.past else 'NO'}"
            print(f"{s.id} [{s.slot}{'/' + s.control if s.control else ''}] {marks}: {o.why}")
    for lang in [*sorted({s.lang for s, _ in rows}), "all"]:
        mine = [(s, o) for s, o in rows if lang in ("all", s.lang)]
        changes = [o for s, o in mine if s.is_change]
        controls = [o for s, o in mine if not s.is_change]
        print(f"summary lang={lang} current={sum(o.current for o in changes)}/{len(changes)} "
              f"first={sum(o.first for o in changes)}/{len(changes)} "
              f"past={sum(bool(o.past) for o in changes)}/{len(changes)} "
              f"controls={sum(o.current and o.first for o in controls)}/{len(controls)}")
    sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="bench life", description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default=str(Path(__file__).resolve().parents[1] / "tests"
                                            / "data" / "life_changes_dev.jsonl"))
    p.add_argument("--lang", choices=["en", "zh"], help="only this language's scenarios")
    p.add_argument("--hash", action="store_true", help="the hashing embedder (no model)")
    p.add_argument("--verbose", action="store_true", help="a line for every scenario")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
