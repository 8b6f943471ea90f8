"""`scripts/bench changes --dataset FILE`: statements of change, through real worker processes.

Each case of FILE (JSON lines: ``id, before, change, old, new, is_change``; e.g.
``tests/data/zh_changes_heldout.jsonl``, written apart from the rules) is one user: the turn
stating the old value on day 1 (one session), the turn stating the change or a non-change on
day 10 (another session), both through ``Client.enqueue`` and the worker's whole path
(extract, dedupe, merge, both stores). Then, from the stores:

* a **change** is right when the new value is a current memory and every memory stating the
  old value is superseded (by event time), with a ``supersede`` entry in its audit;
* a **non-change** (a plan, a question, someone else's move) is right when the old value is
  still current and nothing was superseded.

"stated" (the old value became a memory at all) is reported beside it: a change cannot be
followed when its first statement was never understood. Prints one row per case that is not
right (``--verbose``: every case), then ``summary changes=<right>/<n> non_changes=<right>/<n>
stated=<share>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DAY10 = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Case:
    id: str
    before: str
    change: str
    old: str
    new: str | None
    is_change: bool


def load(path: str) -> list[Case]:
    """The cases of a JSON-lines file; a file that is not one names its first bad line."""
    cases = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            cases.append(Case(str(row["id"]), row["before"], row["change"], row["old"],
                              row.get("new"), bool(row["is_change"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"bench changes: {path}:{n} is not a case "
                             f"(id, before, change, old, new, is_change): {exc}") from None
    return cases


def user_of(case: Case) -> str:
    return f"bench-change-{case.id}"


def lines(case: Case) -> list[dict[str, Any]]:
    """The two turns as an agent would enqueue them (the ingest contract's JSON lines)."""
    return [
        {"user_id": user_of(case), "session_id": "s1", "turn_id": "t1", "role": "user",
         "content": case.before, "timestamp": DAY1.isoformat()},
        {"user_id": user_of(case), "session_id": "s2", "turn_id": "t1", "role": "user",
         "content": case.change, "timestamp": DAY10.isoformat()},
    ]


def _key(text: str) -> str:
    return re.sub(r"[\s\W_]+", "", text.casefold())


def names(stated: str, value: str) -> bool:
    """Whether a memory's object names the value (spacing, case and punctuation aside; one
    containing the other: "CentOS 7" names "CentOS")."""
    a, b = _key(stated), _key(value)
    return bool(a and b) and (a == b or a in b or b in a)


@dataclass(frozen=True)
class Outcome:
    right: bool
    stated: bool  # the old value became a memory
    why: str


def judge(case: Case, memories: list[Any], audit: list[Any]) -> Outcome:
    """Right or not, from the user's memories (every status) and audit trail."""
    def objects(m: Any) -> list[str]:
        return [t.object for t in m.triples]

    # a memory stating the new value is not one of the old ("CentOS 7" -> "CentOS 8"), unless
    # it states the old one exactly ("护士" -> "护士长": the new names the old)
    old = [m for m in memories if any(names(o, case.old) for o in objects(m))
           and not (case.new and any(names(o, case.new) and _key(o) != _key(case.old)
                                     for o in objects(m)))]
    superseded = {a.memory_id for a in audit if str(a.operation) == "supersede"}
    if not old:
        return Outcome(False, False, "the old value never became a memory")
    if not case.is_change:
        closed = [m for m in old if str(m.status) != "current"]
        return Outcome(not closed, True, "ok" if not closed else
                       f"closed by a non-change: {[m.content for m in closed]}")
    assert case.new is not None
    new = [m for m in memories if str(m.status) == "current"
           and any(names(o, case.new) for o in objects(m))]
    still = [m for m in old if str(m.status) == "current"]
    unaudited = [m for m in old if str(m.status) == "superseded" and m.id not in superseded]
    if not new:
        return Outcome(False, True, "no current memory of the new value")
    if still or unaudited:
        return Outcome(False, True, f"old value still current: {[m.content for m in still]}"
                       if still else "superseded without an audit entry")
    return Outcome(True, True, "ok")


def run(args: argparse.Namespace, ingest: Callable[..., float]) -> None:
    from memq.workers.api import StoresClient as Client  # the stores' ids
    from memq.workers.client import parse_lines

    cases = load(args.dataset)
    if args.limit:
        cases = cases[: args.limit]
    batches = []
    for case in cases:
        parsed, errors = parse_lines(json.dumps(t, ensure_ascii=False) for t in lines(case))
        if errors:
            raise SystemExit(f"bench changes: case {case.id}: {errors[0]}")
        batches += parsed
    client = Client()
    took = ingest([user_of(c) for c in cases], batches, client)
    print(f"ingested {len(cases)} cases ({2 * len(cases)} turns) in {took:.1f} s")
    results = []
    for case in cases:
        user = user_of(case)
        outcome = judge(case, client.memories(user, include_inactive=True), client.audit(user))
        results.append((case, outcome))
        if args.verbose or not outcome.right:
            print(f"{'ok ' if outcome.right else 'BAD'} {case.id}: {outcome.why}")
    changes = [o for c, o in results if c.is_change]
    others = [o for c, o in results if not c.is_change]
    stated = sum(o.stated for _, o in results) / max(1, len(results))
    print(f"summary changes={sum(o.right for o in changes)}/{len(changes)} "
          f"non_changes={sum(o.right for o in others)}/{len(others)} stated={stated:.2f}")
    sys.stdout.flush()
