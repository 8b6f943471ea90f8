"""The context block an agent puts in its prompt, pure: from one ranked search list.

Only what the search ranked for the query (never every fact of the user): the memories among
the hits, what is current apart from what is no longer true, then the raw turns, most
relevant first, each with its date and who said it (and the dates its "last week" or
"yesterday" meant: a reader of an old message cannot work them out), and the end of the turn
before it for the best three (an answer is often a reply; the whole turn before, a long answer
of the assistant's, crowded the budget). Cut to the budget at line ends: ~4 characters a
token.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from .ports import Hit
from .recall import QUERY_STOP
from .rules_en import date_notes

CHARS_PER_TOKEN = 4
BEFORE_TOP = 3  # the turn before is shown for the best turns only
BEFORE_CHARS = 200  # and only its end: the question a reply answers, not a long answer
# a longer turn shows its sentences that share a word with the query (else its start): one
# long message must not take the whole budget
LONG_CHARS = 600
# a sentence ends at . ! ? or a line end; not at "Dr." and the like, nor inside "3.5" or "e.g."
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?:(?<=Dr)|(?<=Mr)|(?<=Ms)|(?<=Mrs)|(?<=St)|(?<=vs))\."
                       r"|\.(?=\w))+(?:[.!?]+|\n|$)")
_WORD = re.compile(r"\w+")
# words that ask, not say (search's own, and the words every sentence has); a stem is a word's
# first five letters ("doctors" meets "doctor")
_ASKING = QUERY_STOP | frozenset(_WORD.findall("""it is are be the a an and or of to in on at
    for with this that there"""))


def _day(value: datetime) -> str:
    return f"{value.day} {value:%b %Y}"  # "8 May 2023": as people (and questions) say dates


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.casefold()) if w not in _ASKING and len(w) > 2}


def excerpt(text: str, query: str | None, limit: int = LONG_CHARS) -> str:
    """``text`` if it is at most ``limit`` characters; else its sentences that share a word
    with ``query``, in order, gaps marked "…", within ``limit`` (none shares one: its
    start)."""
    if len(text) <= limit:
        return text
    wanted = _stems(query or "")
    picked: list[tuple[int, str]] = []
    size = 0
    if wanted:
        for m in _SENTENCE.finditer(text):
            sentence = m[0].strip()
            if sentence and _stems(sentence) & wanted and size + len(sentence) + 2 <= limit:
                picked.append((m.start(), sentence))
                size += len(sentence) + 2
    if not picked:  # its start, to the last sentence end that fits
        head = text[:limit]
        cut = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
        return (head[:cut + 1] if cut > limit // 2 else head.rstrip()) + " …"
    parts, end = [], 0
    for start, sentence in picked:
        parts.append(("… " if start > end else "") + sentence)
        end = start + len(sentence) + 1
    return " ".join(parts) + (" …" if end < len(text.rstrip()) else "")


def turn_line(hit: Hit, last: int | None = None, *, dates: bool = True,
              query: str | None = None) -> str:
    """A turn, dated and named; ``last``: only its last characters (where a reply's question
    is), marked as cut; else, given ``query``, a long turn as its excerpt for it; ``dates``:
    each time it names relative to its day, with the date it meant ("(last week = the week
    before 9 June 2023)")."""
    text = hit.content
    if last is not None and len(text) > last:
        text = "…" + text[-last:]
    elif query is not None:
        text = excerpt(text, query)
    notes = date_notes(text, hit.event_at) if dates else []
    meant = f" ({'; '.join(notes)})" if notes else ""
    return f"[{_day(hit.event_at)}] {hit.speaker or hit.role or 'user'}: {text}{meant}"


def _now(hit: Hit) -> str:
    return f"; now: {hit.current}" if hit.current else ""


def _earlier(hit: Hit) -> str:
    """A turn whose statement has since changed says so where it is read."""
    return f" (earlier — now: {hit.current})" if hit.current else ""


def render_context(hits: Sequence[Hit], max_tokens: int, *,
                   before: Mapping[str, Hit] | None = None, query: str | None = None) -> str:
    """The block for ``hits`` (a search's list, best first) within ``max_tokens``.
    ``before``: a turn's preceding turn in its session, by the turn's id, shown under it when
    it is not in the list itself; ``query``: what a long turn's excerpt is chosen for. A turn
    that no longer fits makes way for the shorter ones after it."""
    budget = max(0, max_tokens) * CHARS_PER_TOKEN
    lines: list[str] = []

    def put(line: str) -> bool:
        nonlocal budget
        if len(line) + 1 > budget:
            return False
        lines.append(line)
        budget -= len(line) + 1
        return True

    current = [h for h in hits if h.type == "memory" and h.status != "superseded"]
    old = [h for h in hits if h.type == "memory" and h.status == "superseded"]
    turns = [h for h in hits if h.type == "episode"]
    listed = {h.id for h in turns}
    sections: list[tuple[str, list[str]]] = [
        ("What is known (current):", [f"- {h.content} (since {_day(h.event_at)})"
                                      for h in current]),
        ("No longer true:", [f"- {h.content} (stated {_day(h.event_at)}{_now(h)})"
                             for h in old]),
    ]
    for title, rows in sections:
        if rows and put(title):
            for row in rows:
                if not put(row):
                    break
    if turns and put("Past messages, most relevant first:"):
        for n, hit in enumerate(turns):
            if not put(f"- {turn_line(hit, query=query)}{_earlier(hit)}"):
                continue
            prior = (before or {}).get(hit.id) if n < BEFORE_TOP else None
            if prior is not None and prior.id not in listed:
                put(f"  (before it) {turn_line(prior, BEFORE_CHARS)}")
    return "\n".join(lines)
