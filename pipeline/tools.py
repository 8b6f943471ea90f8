"""What a tool is for: the job a used tool does (its database, its notes app, its phone), so a
change of one ends the one the user had for the same job.

``uses`` holds many tools at once (one uses a database *and* an editor), so "数据库这块上个月全部
迁到 PostgreSQL 15 了" cannot end "MySQL 5.7" as a single-valued slot would, and it names no old
value to end. The job can: both are the user's database. A used tool's memory carries a second
triple, ``uses_<job>`` (single-valued, :file:`predicates.json`), found from the product
(a lexicon of well-known products, :file:`tools.json`) or from the words of the sentence that
name the job ("缓存", "开会", "收银"). Pure: text in, names out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, cast


@dataclass(frozen=True)
class Job:
    name: str
    cue: re.Pattern[str]
    products: tuple[str, ...]  # casefolded
    raw: tuple[str, ...] = ()  # as written


@cache
def _data() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(resources.files("memq.pipeline").joinpath(
        "tools.json").read_text(encoding="utf-8")))


@cache
def jobs() -> tuple[Job, ...]:
    raw = _data()["categories"]
    return tuple(Job(name, re.compile("|".join(spec["cues"]), re.I),
                     tuple(p.casefold() for p in spec["products"]), tuple(spec["products"]))
                 for name, spec in raw.items())


# what production runs on: its cloud, its OS, its orchestration
INFRA = frozenset({"cloud", "operating_system", "container"})
# jobs of tools that production does not run on (a sentence about them is about a tool)
NOT_INFRA = frozenset({"code_hosting", "notes", "documents", "chat", "meetings",
                       "project_management", "crm", "pos", "phone", "computer", "editor",
                       "browser", "design", "email", "ci", "monitoring", "database", "cache",
                       "message_queue"})


def noun(job: str, zh: bool) -> str | None:
    """What a job is called in a memory (``tools.json`` ``nouns``): "editor", "编辑器"."""
    names = _data()["nouns"].get(job) if not job.startswith("_") else None
    return str(names[1 if zh else 0]) if names else None


def predicate(job: str) -> str:
    return f"uses_{job}"


def predicates() -> frozenset[str]:
    return frozenset(predicate(j.name) for j in jobs())


def product_job(value: str) -> str | None:
    """The job of a well-known product the value starts with (the longest name wins:
    "腾讯会议" is for meetings, though "腾讯云" is a cloud)."""
    v = value.casefold().strip() + " "
    best = max(((len(p), j.name) for j in jobs() for p in j.products if v.startswith(p)),
               default=None)
    return best[1] if best else None


def product_pattern() -> str:
    """A pattern (for ``re.I``) of a well-known product written in Latin letters, and nothing
    after it: "Datadog" is no place to move to ("Salt Lake City" is, though Salt is a tool)."""
    names = sorted({p.strip() for j in jobs() for p in j.products if p[:1].isascii()},
                   key=len, reverse=True)
    return rf"(?:{'|'.join(re.escape(n) for n in names if n)})\s*$"


def job_of(value: str, clause: str, sentence: str) -> str | None:
    """The job the value is used for: its product's, else the one the clause names, else the
    one the sentence names (only when it names one job)."""
    if found := product_job(value):
        return found
    for text in (clause, sentence):
        named = {j.name for j in jobs() if j.cue.search(text)}
        if len(named) == 1:
            return named.pop()
    return None


@cache
def _names() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """Every product name with its job and its pattern, the longest first."""
    names = sorted(((p.strip(), j.name) for j in jobs() for p in j.products),
                   key=lambda pj: -len(pj[0]))
    return tuple((name, job, re.compile(re.escape(name))) for name, job in names)


def mentioned(text: str) -> list[tuple[int, str, str]]:
    """Well-known products named in the text: (where, the name as written, job)."""
    low = text.casefold()
    out: list[tuple[int, str, str]] = []
    taken: set[int] = set()
    for name, job, pattern in _names():
        for m in pattern.finditer(low):
            if taken & set(range(m.start(), m.end())):
                continue
            if name[0].isascii() and name[0].isalnum() and m.start() and (
                    low[m.start() - 1].isascii() and low[m.start() - 1].isalnum()):
                continue  # "Go" in "MongoDB"
            end = m.end()
            while end < len(text) and re.match(r"[A-Za-z0-9.]", text[end]):
                end += 1  # "MySQL 5.7" is written "MySQL5.7" too
            if end < len(text) - 1 and text[end] == " " and re.match(r"\d", text[end + 1]):
                end = re.match(r" [\d.]+", text[end:]).end() + end  # type: ignore[union-attr]
            elif model := re.match(r" [A-Z]{1,3}\d+[A-Za-z0-9]*(?![A-Za-z0-9])", text[end:]):
                end += model.end()  # "vivo X100", "Redmi K60": a model's number
            taken |= set(range(m.start(), end))
            out.append((m.start(), text[m.start():end].strip(), job))
    return sorted(out)
