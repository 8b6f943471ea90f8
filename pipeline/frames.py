"""Frames: the things that change in a life, read from English chat as data plus a small engine.

A frame is one slot (where one works, lives, studies; a partner; what one eats, drives, uses
for a job) and one way of saying it, a pattern over spans (:file:`frames_en.json`): "I joined
{NEW:ORG} as {ROLE}", "traded my {OLD:THING} for a {NEW:THING}", "broke up with {OLD:NAME}".
Whatever the pattern says, the engine does the rest the same way for every frame:

* a statement counts only when the user says it of themselves, now: the clause it stands in
  (from the last comma, dash or semicolon before it) must not ask, plan, wish, deny, or have
  someone else as its subject (the data's ``guards``), and a time it names must not lie ahead;
* the time it names (:mod:`memq.pipeline.when`) sets when the value holds from, never its text;
* one turn says one thing per slot: a new value and the old ones named beside it ("left
  Deloitte last month ... I'm at Google now") are one change;
* a new employer ends the role held there too (``predicates.json``: ``closes_with``).

Every frame carries examples it must read and counter-examples it must not; one test runs them
all (``tests/unit/test_frames.py``). What fits no frame is left to the other readers of
:mod:`memq.pipeline.rules`, or to the LLM path. Pure: text and the moment it was said in,
readings out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from . import tools, when

_MACRO = re.compile(r"\{(?P<role>NEW|OLD)?:?(?P<kind>[A-Z]+)\}")
# a value of a case-sensitive kind keeps its own case in the pattern
_CASED = frozenset({"WORD", "ORG", "PLACE", "NAME", "THING"})
_WE = re.compile(r"\b(?:we|we're|we've|our|us)\b", re.I)
_PROD = re.compile(r"\b(?:prod|production|servers?|cluster|infra(?:structure)?)\b"
                   r"|生产|线上|服务器|集群", re.I)


@dataclass(frozen=True)
class Frame:
    slot: str
    change: bool
    pattern: re.Pattern[str]
    examples: tuple[dict[str, Any], ...]
    counter: tuple[str, ...]


@dataclass(frozen=True)
class Reading:
    """One statement a frame read: the slot's predicate, the new value (None: only an end),
    the old value named, the role said with a job, whether it states a change, and the time
    it names."""

    slot: str
    new: str | None
    old: str | None
    role: str | None
    change: bool
    span: when.Span | None = None
    team: bool = False  # said of "we" / "our …": the user's team's tool
    at: int = 0  # where in its sentence


@dataclass(frozen=True)
class Frames:
    frames: tuple[Frame, ...]
    guards: dict[str, re.Pattern[str]]
    slots: dict[str, dict[str, str]]
    diet: dict[str, str]
    cars: re.Pattern[str] | None
    sentence: re.Pattern[str]  # where a sentence ends
    clause: re.Pattern[str]  # where a clause ends
    subject_carries: bool = False  # a clause without a subject has its sentence's (Chinese)


def _expand(pattern: str, spans: dict[str, str]) -> str:
    """The pattern with each ``{NEW:KIND}`` / ``{OLD:KIND}`` as a numbered named group and
    each ``{KIND}`` as its span (a span may use others: ``{WORD}``)."""
    seen: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        kind = m["kind"]
        body = spans[kind]
        while _MACRO.search(body):
            body = _MACRO.sub(lambda inner: spans[inner["kind"]], body)
        body = f"(?-i:{body})" if kind in _CASED else f"(?:{body})"
        name = (m["role"] or kind).lower()
        seen[name] = seen.get(name, 0) + 1
        return f"(?P<{name}{seen[name]}>{body})"

    return _MACRO.sub(sub, pattern)


@cache
def load(lang: str) -> Frames:
    """The frames of one language: ``frames_en.json`` or ``frames_zh.json``."""
    raw = json.loads(resources.files("memq.pipeline").joinpath(f"frames_{lang}.json").read_text(
        encoding="utf-8"))
    spans = {**raw["spans"], "PRODUCT": _products(raw["lexicons"].get("products", {}),
                                                 latin_only=lang == "en")}
    frames = tuple(Frame(f["slot"], bool(f["change"]),
                         re.compile(_expand(f["pattern"], spans), re.IGNORECASE),
                         tuple(f["examples"]), tuple(f["not"])) for f in raw["frames"])
    guards = {name: re.compile(p, re.IGNORECASE) for name, p in raw["guards"].items()}
    makes = raw["lexicons"]["car_makes"]
    cars = re.compile(r"\b(?:" + "|".join(re.escape(m) for m in makes) + r")\b",
                      re.IGNORECASE) if makes else None
    return Frames(frames, guards, raw["slots"], raw["lexicons"]["diet"], cars,
                  re.compile(raw["sentence_end"]), re.compile(raw["clause_end"]),
                  bool(raw.get("subject_carries")))


# what may follow a product's name in its value: a version, a model, an edition
# (or, after a space, a name in capitals: "IntelliJ IDEA", "阿里云 ACK"); it ends where Latin
# letters and digits do (Chinese has no spaces: "Mate 60 Pro了")
_MODEL = (r"(?:\s?(?:[0-9][0-9.]*[a-z]?|[A-Z]{1,2}[0-9]+[A-Za-z]*)"
          r"|\s(?:Pro|Max|Plus|Ultra|Mini|mini|LTS|Lite|SE|Fold|Flip|XL|Server|Enterprise"
          r"|Community|Stream|[IVX]{1,4}|(?-i:(?!I\b)[A-Z]{2,6})))(?![A-Za-z0-9])")


def _products(lexicon: dict[str, list[str]], *, latin_only: bool) -> str:
    """The ``{PRODUCT}`` span: a well-known product (``tools.json``; in English, those written
    in Latin letters) with its model or version ("iPhone 12", "Ubuntu 22.04", "Galaxy S21",
    "小米14"). Names that are also everyday words match only as written there ("Go",
    "Linear"); some are left out (``lexicons.products.not``: "Coding", "Office"). Chinese has
    no spaces: a name ends where Latin letters and digits do."""
    cased = set(lexicon.get("cased", []))
    left_out = {n.casefold() for n in lexicon.get("not", [])}
    jobs = [j for j in tools.jobs() if j.name not in lexicon.get("not_jobs", [])]
    names = sorted({p.strip() for j in jobs for p in j.raw
                    if (p[:1].isascii() or not latin_only)
                    and p.strip() and p.strip().casefold() not in left_out},
                   key=len, reverse=True)
    alts = [f"(?-i:{re.escape(n)})" if n in cased else re.escape(n) for n in names]
    before, after = ((r"[\w.-]", r"[\w+#]") if latin_only
                     else (r"[A-Za-z0-9.-]", r"[A-Za-z0-9+#]"))
    # in Chinese a Latin word after the name is its release's ("macOS Sonoma"): English
    # words around a name would be taken too ("Linear Tuesday")
    model = _MODEL if latin_only else _MODEL + r"|\s(?-i:[A-Z][a-z]{2,})(?![A-Za-z0-9])"
    return rf"(?<!{before})(?:{'|'.join(alts)})(?:{model}){{0,3}}(?!{after})"


def _group(m: re.Match[str], name: str) -> str | None:
    values = [v for k, v in m.groupdict().items() if v and re.fullmatch(rf"{name}\d+", k)]
    return values[0].strip() if values else None


def _clause(clause: re.Pattern[str], text: str, start: int, end: int) -> tuple[str, str]:
    """What stands before the match in its clause, and after it to the clause's end (with the
    mark that ends it: "?" asks)."""
    cuts = [c.end() for c in clause.finditer(text, 0, start)]
    head = text[cuts[-1] if cuts else 0:start]
    after = clause.search(text, end)
    return head, text[end:after.end() if after else len(text)]


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = when.without_time(value).strip(" ,.;:!?'\"")
    return value or None


def _guarded(frames: Frames, sentence: str, head: str, tail: str, slot: str = "") -> bool:
    """Whether the clause asks, plans, wishes, denies, or is about someone else (for a
    tool, the user's own team or company is no one else: ``other_tools``)."""
    g = frames.guards
    other = g.get("other_tools", g["other"]) if slot == "uses" else g["other"]
    if g["question"].search(head.strip()) or tail.rstrip().endswith(("?", "？")) or (
            g["question"].match(sentence.strip()) and sentence.rstrip().endswith("?")):
        return True
    if "question_after" in g and g["question_after"].search(tail.strip()):
        return True
    return bool(g["plan"].search(head) or g["negation"].search(head) or other.search(head)
                or g["future"].search(tail))


def read(text: str, said_at: datetime, lang: str = "en") -> list[Reading]:
    """Every frame's reading of the text, sentence by sentence, in order."""
    frames = load(lang)
    out: list[Reading] = []
    for sentence in frames.sentence.split(text):
        if not sentence or not sentence.strip():
            continue
        taken: list[tuple[int, int]] = []
        found: list[Reading] = []
        for frame in frames.frames:
            for m in frame.pattern.finditer(sentence):
                if any(a < m.end() and m.start() < b for a, b in taken):
                    continue  # an earlier frame read these words
                head, tail = _clause(frames.clause, sentence, m.start(), m.end())
                if _guarded(frames, sentence, head, tail, frame.slot) or (
                        frames.subject_carries
                        and frames.guards["other"].search(sentence[:m.start()])):
                    continue
                span = when.find(head + sentence[m.start():m.end()] + tail, said_at)
                if span is not None and span.ahead(said_at):
                    continue  # "moving to Denver next month"
                reading = _reading(frames, frame, m, sentence, span, head)
                if reading is not None:
                    taken.append((m.start(), m.end()))
                    found.append(reading)
        out += sorted(found, key=lambda r: r.at)
    return out


def _reading(frames: Frames, frame: Frame, m: re.Match[str], sentence: str,
             span: when.Span | None, head: str = "") -> Reading | None:
    new, old = _clean(_group(m, "new")), _clean(_group(m, "old"))
    role = _clean(_group(m, "role"))
    slot: str | None = frame.slot
    if slot == "eats" and new:
        new = frames.diet.get(new.lower(), frames.diet.get(new, new.lower()))
    if slot == "drives" and not any(frames.cars and frames.cars.search(v)
                                    for v in (new, old) if v):
        return None  # "I have a MacBook": no car
    if slot == "lives_in" and any(product_job(v) for v in (new, old) if v):
        return None  # "moved to VS Code": a product is no place (the tool frames read it)
    if slot == "uses":
        slot = _tool_slot(new or old or "", sentence)
        if slot is None:
            return None
    if slot is None or (new is None and old is None):
        return None
    team = slot.startswith("uses_") and bool(_WE.search(head + m.group()))
    return Reading(slot, new, old, role, frame.change or old is not None, span, team,
                   m.start())


_EDITION = re.compile(r"(?:\s(?:Pro|Max|Plus|Ultra|Mini|LTS|Lite|SE|Edge|Fold|Flip|XL|"
                      r"Server|Enterprise|Community|Cloud|[\dIVX.]+[a-z]?))*\s*$")


_NAMED = re.compile(r"\s[A-Z][a-z]+(?:\s[\dIVX.]+)?\s*$")  # "Sublime Text", "Rocky Linux 9"


def product_job(value: str) -> str | None:
    """The job of the well-known product a value names (``tools.json``): the product, with
    its version, edition or second name ("PostgreSQL 16", "iPhone 15 Pro", "Sublime Text"),
    ends the value; "Salt Lake City" names no product though Salt is one."""
    for start, name, job in reversed(tools.mentioned(value)):
        if _EDITION.fullmatch(value[start + len(name):]) or _NAMED.fullmatch(
                value[start + len(name):]):
            return job
    return None


def _tool_slot(value: str, sentence: str) -> str | None:
    """A tool's slot: where production runs (an OS or cloud said of production), else the
    job of a well-known product (:func:`product_job`); None for a thing of no known job."""
    job = product_job(value)
    if job is None:
        return None
    if job in tools.INFRA and _PROD.search(sentence):
        return "production_environment"
    return tools.predicate(job)


def said(frames: Frames, r: Reading, *, at: str | None = None) -> str:
    """The memory's sentence for a reading (the slot's template, ``frames_en.json``); ``at``:
    where a role is held ("The user is a staff engineer at Stripe.")."""
    says = frames.slots.get(r.slot) or frames.slots["uses"]
    if r.new is None:
        return says["left"].format(old=r.old)
    template = says["say"]
    if at and "say_at" in says:
        template = says["say_at"]
    elif r.old and "say_from" in says:
        template = says["say_from"]
    elif r.team and "say_team" in says:
        template = says["say_team"]
    article = "an" if r.new[:1].lower() in "aeiou" else "a"
    return template.format(new=r.new, old=r.old, a=article, at=at)


def kind_of(frames: Frames, slot: str) -> tuple[str, float]:
    """The kind and importance of a slot's memories."""
    says = frames.slots.get(slot) or frames.slots["uses"]
    return says["kind"], float(says["importance"])
