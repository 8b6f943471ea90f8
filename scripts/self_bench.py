"""`scripts/bench extract --set zh_self_heldout.jsonl`: what a person tells about themselves in
Chinese chat, one message at a time, through the offline extractor (``RuleExtractor``).

Each line of the set (``tests/data/zh_self_dev.jsonl``, ``zh_self_heldout.jsonl``: written by
a helper that never read the rules) is a message with the day it was said and what a careful
friend would remember of it: items of a kind (event, habit, likes, plan), each with a gist
(a few characters the memory must hold) and, for an event or a plan, its date. An item is
**found** when a memory holds its gist, **dated right** when that memory holds the date in
absolute words (2026年3月7日, 2026年2月, 2025年). A message with nothing to remember (a question,
someone else's doing, a wish, a negation, sarcasm) must yield no memory. Prints one row per
kind, the misses with ``--verbose``, then ``summary found=… dated=… negatives_with_memory=…``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path


@dataclass
class SelfScore:
    found: dict[str, list[bool]] = field(default_factory=dict)  # kind -> found, per item
    dated: list[bool] = field(default_factory=list)  # per dated item: the right date held
    negatives: list[bool] = field(default_factory=list)  # per empty message: a memory made
    memories: int = 0
    misses: list[str] = field(default_factory=list)

    def share(self, kind: str | None = None) -> float:
        items = [f for k, fs in self.found.items() if kind in (None, k) for f in fs]
        return sum(items) / max(len(items), 1)


def absolute(date: str) -> str:
    """"2026-03-07" -> "2026年3月7日", "2026-02" -> "2026年2月", "2025" -> "2025年"."""
    parts = [int(x) for x in date.split("-")]
    return "".join(f"{n}{unit}" for n, unit in zip(parts, "年月日", strict=False))


def score(path: Path) -> SelfScore:
    from memq.pipeline.rules import RuleExtractor
    from memq.schemas import Turn

    extractor, out = RuleExtractor(), SelfScore()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        day = datetime.fromisoformat(case["said_at"]).replace(hour=9, tzinfo=UTC)
        said = [m.content for m in extractor.extract(
            [Turn(turn_id="t", role="user", content=case["text"], timestamp=day)])
            if m.confidence >= 0.7]  # the gate
        out.memories += len(said)
        if not case["expect"]:
            out.negatives.append(bool(said))
            if said:
                out.misses.append(f"{case['id']}: nothing to remember, got {said}")
        for item in case["expect"]:
            holding = [m for m in said if item["gist"] in m]
            out.found.setdefault(item["kind"], []).append(bool(holding))
            right = True
            if item["date"]:
                right = any(absolute(item["date"]) in m for m in holding)
                out.dated.append(right)
            if not holding or not right:
                out.misses.append(f"{case['id']}: {item['kind']} {item['gist']!r} "
                                  f"{item['date'] or ''} got {said}")
    return out


def run(path: Path, verbose: bool) -> None:
    s = score(path)
    print(f"{path.name}: {sum(map(len, s.found.values()))} items, {len(s.negatives)} messages "
          f"with nothing to remember, {s.memories} memories")
    print(f"{'kind':>8} {'items':>6} {'found':>6}")
    for kind, found in sorted(s.found.items()):
        print(f"{kind:>8} {len(found):>6} {sum(found) / len(found):6.2f}")
    if verbose:
        for line in s.misses:
            print(line)
    print(f"summary found={s.share():.3f} dated={sum(s.dated) / max(len(s.dated), 1):.3f} "
          f"negatives_with_memory={sum(s.negatives)}/{len(s.negatives)}")
