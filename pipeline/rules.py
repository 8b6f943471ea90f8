"""Offline rule-based extractor: the :class:`~pipeline.ports.Extractor` used without an LLM.

Pure: no I/O, no clock, no environment. Only ``user`` turns are read, split into sentences
(``. ! ? ;`` ``。！？；``) and clauses ("… and I …", "…, we …", "…，我…"); each clause is
matched against :data:`RULES`, a table of compiled regexes (first usable match wins). The
tables are data, in :mod:`memq.pipeline.rules_tables`; a turn is read clause by clause in
:mod:`memq.pipeline.rules_clauses`; this module puts together what the clauses and the frames
read in a turn.

Coverage, predicate (kind): English / Chinese

* role, name, lives_in, works_at (profile): "I am a X", "I'm an X", "I work as X", "my name
  is X", "call me X", "I live in X", "I work at/for X" / 我是X (not 我是说), 我叫X,
  我住在X, 我在X工作
* cares_about, likes, prefers, dislikes (preference): "I care (a lot) about X", "I (really)
  like/love X", "I'm a fan of X", "I prefer X", "I don't like/dislike/hate X" /
  我关心X, 我很在意X, 我喜欢X, 我更喜欢X, 我不喜欢X, 我讨厌X
* uses, production_environment (fact): "we use X", "our team uses X", "I use X", "our
  production servers run X", "prod is now on X", "we moved production to X" /
  我们用X, 我们使用X, 我们的生产环境是X, 生产环境迁移到了X
* reply_language, answer_style, remembers (instruction): "please always answer in X", "always
  be concise", "remember/note that X" (rewritten in the third person), "always/never X" /
  以后请用中文回答, (请)记住X

* diet, takes_medication, has_condition, has_relative, has_pet, plans_trip_to, has_goal,
  speaks, age (fact/profile): "I'm vegan", "I take metformin", "I have celiac disease", "my wife,
  Grace, …", "my kids are A and B", "I have a dog named A and a cat named B", "next Friday I fly
  to Oslo", "I'm training for X", "I speak X and Y", "I'm 34" / 我吃素, 我每天吃二甲双胍,
  我乳糖不耐受, 我老公叫X，…, 我家有两只猫，一只叫A，一只叫B, 下个月我要去成都, 我在准备X,
  我会说X和Y, 我今年28岁

Clauses share the user as subject ("I live in Oslo and work at X", "我已经离职了，现在在X上班");
a fronted time moves behind the clause ("Next Friday I fly …"); a statement before a tag
question is kept ("Heading to Lisbon next month, any tips?"); a standing request phrased as a
question is an instruction ("Could you always keep replies short?").
Nothing from greetings, thanks, questions, hypotheticals ("if I were", 假如 …) or turns with a
joke ("haha", 哈哈, 😂 …). Hedged sentences ("maybe", "I think", 可能 …) get
:data:`HEDGED_CONFIDENCE`, under the downstream gate. English input gives "The user …."
sentences, Chinese input "用户…。". One (kind, predicate, object) said twice is one candidate
with every source turn id and the earliest ``valid_at`` (it holds from its first mention).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..schemas import CandidateMemory, Kind, Triple, Turn
from . import frames, rules_zh, tools, when
from .rules_clauses import _about, _apply, _read_self, _read_zh, _statements
from .rules_tables import (
    _ALSO,
    _CJK,
    _CLAUSE_CUT,
    _HEDGE,
    _KIDDING,
    _SENTENCES,
    HEDGED_CONFIDENCE,
    MAX_OBJECT_CHARS,
    RULES,
    Rule,
)

__all__ = ["HEDGED_CONFIDENCE", "MAX_OBJECT_CHARS", "RULES", "Rule", "RuleExtractor"]


def _with_job(c: CandidateMemory, clause: str, sentence: str, *, change: bool
              ) -> CandidateMemory:
    """A used tool's job as a second, single-valued triple (``uses_<job>``,
    :mod:`memq.pipeline.tools`), so the next tool for the same job ends it; a change also
    ends the other tools for that job its sentence names ("Jira 太贵了，改用飞书项目"), and takes
    the job of the tool it replaces when its own is unknown. Where production runs carries its
    cloud's, OS's or platform's job (a move of the game servers to another cloud ends it).
    Chinese only; not for a tool used beside others ("MySQL 和 MongoDB都用", "也用X")."""
    t = c.triples[0]
    if t.predicate not in ("uses", "production_environment") or not _CJK.search(sentence):
        return c
    job = tools.job_of(t.object, clause, sentence) if t.predicate == "uses" else (
        tools.product_job(t.object))  # where production runs: its cloud, OS, platform
    if job is None and change:  # the job of the tool it replaces ("把 Presto 换成 Trino")
        job = next((j for r in c.replaces if (j := tools.product_job(r.object))), None)
    if job is None or (t.predicate != "uses" and job not in tools.INFRA):
        return c
    same = [name for _, name, j in tools.mentioned(sentence) if j == job]
    new = t.object.casefold().replace(" ", "")
    others = [n for n in same if not (n.casefold().replace(" ", "") in new
                                      or new in n.casefold().replace(" ", ""))]
    retired = [n for n in others if rules_zh.put_away(n, sentence)]
    if retired and not change and not _ALSO.search(clause):
        change, others = True, retired  # "我现在写代码都用VS Code了，Sublime基本吃灰"
    if not change and (others or _ALSO.search(clause)):
        return c
    triples = [*c.triples, Triple(subject=t.subject, predicate=tools.predicate(job),
                                  object=t.object)]
    gone = {r.object.casefold() for r in c.replaces}
    replaces = [*c.replaces, *(Triple(subject=t.subject, predicate="uses", object=n)
                               for n in dict.fromkeys(others) if n.casefold() not in gone)]
    return c.model_copy(update={"triples": triples, "replaces": replaces if change else
                                c.replaces})


def _merge(old: CandidateMemory, new: CandidateMemory) -> CandidateMemory:
    ids = old.source_turn_ids + [i for i in new.source_turn_ids if i not in old.source_turn_ids]
    first = old if old.valid_at <= new.valid_at else new  # a fact holds from its first mention
    # and was said again up to its last (CandidateMemory.said_at)
    last = max(c.said_at or c.valid_at for c in (old, new))
    return first.model_copy(update={"source_turn_ids": ids,
                                     "confidence": max(old.confidence, new.confidence),
                                     "said_at": last if last > first.valid_at else None})


def _framed(turn: Turn, others: Sequence[CandidateMemory] = ()) -> list[CandidateMemory]:
    """What the frames read in a turn (:mod:`memq.pipeline.frames`), one memory per slot: the
    last new value said, ending the old values named beside it; an end alone ("I quit
    Initech") when no new value is said. Its time sets when it holds from. In Chinese, a tool
    the clause reader already read is its (``others``: it reads what a change replaced)."""
    lang = "zh" if _CJK.search(turn.content) else "en"
    data = frames.load(lang)
    text = re.sub(r"[’‘]", "'", turn.content)
    if _KIDDING.search(text):
        return []
    readings = frames.read(text, turn.timestamp, lang)
    if lang == "zh":
        tools_read = {t.object.casefold() for c in others for t in c.triples
                      if t.predicate == "uses" or t.predicate.startswith("uses_")
                      or t.predicate == "production_environment"}
        readings = [r for r in readings if not (
            (r.slot.startswith("uses_") or r.slot == "production_environment")
            and (r.new or r.old or "").casefold() in tools_read)]
    subject = turn.speaker or "user"
    out = []
    for slot in dict.fromkeys(r.slot for r in readings):
        mine = [r for r in readings if r.slot == slot]
        news = [r for r in mine if r.new]
        lead = news[-1] if news else mine[-1]
        olds = [o for o in dict.fromkeys(r.old for r in mine if r.old) if not lead.new
                or o.casefold() != lead.new.casefold()]
        tool = slot.startswith("uses_")
        beside = tool and not olds and len({r.new.casefold() for r in news if r.new}) > 1
        if beside:  # "our stack is C# and we use C++ too": tools used side by side
            out += [_framed_tool(turn, data, r) for r in news if r.new]
            continue
        # a tool: "uses" and its job's slot (as the Chinese reader's, :func:`_with_job`)
        triples = (([("uses", lead.new)] if tool else []) + [(slot, lead.new)]
                   if lead.new else [("left", lead.old or "")])
        ends = [("uses", o) for o in olds if tool] + [(slot, o) for o in olds]
        span = lead.span or next((r.span for r in mine if r.span), None)
        valid_at = when.valid_from(span, turn.timestamp)
        said = [(lead, triples, ends)]
        if lead.role and lead.new:  # a job is two slots: the role ends on its own too
            said.append((frames.Reading("role", lead.role, None, None, lead.change),
                         [("role", lead.role)], []))
        for told, facts, gone in said:
            reading = replace(told, old=olds[0]) if (  # "(switched from …)"
                told is lead and olds and not told.old) else told
            content = frames.said(data, reading, at=lead.new if reading.slot != lead.slot
                                  else None)
            if turn.speaker:
                content = _about(content, turn.speaker, zh=lang == "zh")
            kind_name, importance = frames.kind_of(data, reading.slot)
            kind = Kind.EVENT if not reading.new else Kind(kind_name)
            out.append(CandidateMemory(
                content=content, kind=kind,
                confidence=HEDGED_CONFIDENCE if _hedged_about(text, reading) else 0.9,
                importance=importance,
                entities=list(dict.fromkeys(o for _, o in facts)),
                triples=[Triple(subject=subject, predicate=p, object=o) for p, o in facts],
                replaces=[Triple(subject=subject, predicate=p, object=o) for p, o in gone],
                source_turn_ids=[turn.turn_id], valid_at=valid_at,
                said_at=turn.timestamp if valid_at < turn.timestamp else None))
    return out


def _in_order(text: str, found: Sequence[CandidateMemory], framed: int
              ) -> list[CandidateMemory]:
    """A turn's memories in the order the turn says them, whichever reader read them: the
    frames' (the first ``framed``) by where their value is said, the others' in their own
    order (one whose value is not said as written goes where the one before it is)."""
    def at(c: CandidateMemory) -> int:
        return text.find(c.triples[0].object) if c.triples else -1

    keys: list[int] = [max(0, at(c)) for c in found[:framed]]
    last = 0
    for c in found[framed:]:
        last = max(last, at(c))
        keys.append(last)
    order = sorted(range(len(found)), key=lambda i: (keys[i], i >= framed, i))
    return [found[i] for i in order]


def _hedged_about(text: str, reading: frames.Reading) -> bool:
    """Whether the clause that names the value is hedged, or opens its sentence hedged ("I'm
    not sure but I live in Oslo"; not "we use Asana, it's fine I guess", nor "traded my
    Civic for a Model 3 and I'm kind of obsessed")."""
    value = reading.new or reading.old or ""
    for sentence in _SENTENCES.split(text):
        if value not in sentence:
            continue
        clauses = _CLAUSE_CUT.split(sentence)
        mine = next((c for c in clauses if value in c), sentence)
        opening = sentence[:sentence.find(value)]
        if _HEDGE.search(mine) or (_HEDGE.search(opening) and not _CLAUSE_CUT.search(
                opening.rstrip() + " ")):
            return True
        if re.search(r"\b(?:not sure|no idea|don't know)\b", opening, re.I):
            return True
    return False


def _framed_tool(turn: Turn, data: frames.Frames, r: frames.Reading) -> CandidateMemory:
    """A tool said beside another of its job: used, without ending the other."""
    subject = turn.speaker or "user"
    content = frames.said(data, replace(r, slot="uses"))
    if turn.speaker:
        content = _about(content, turn.speaker, zh=bool(_CJK.search(content)))
    return CandidateMemory(
        content=content, kind=Kind.FACT, confidence=0.9, importance=0.5,
        entities=[r.new or ""], triples=[Triple(subject=subject, predicate="uses",
                                                object=r.new or "")],
        source_turn_ids=[turn.turn_id], valid_at=turn.timestamp)


def _ends_joined(framed: Sequence[CandidateMemory], legacy: Sequence[CandidateMemory]
                 ) -> tuple[list[CandidateMemory], list[CandidateMemory]]:
    """A frame that read only an end ("钉钉已经卸了", "Jira is history") and another reader's
    new value of the same slot in the same turn ("公司改用飞书了") are one change: the new
    value, ending the old one."""
    kept, legacy = [], list(legacy)
    for f in framed:
        ends = [r for r in f.replaces if r.predicate != "uses"]
        slots = {r.predicate for r in ends}
        if f.triples[0].predicate != "left" or not slots:
            kept.append(f)
            continue
        new = next((i for i, c in enumerate(legacy) if any(
            t.predicate in slots and all(t.object.casefold() != r.object.casefold()
                                         for r in ends) for t in c.triples)), None)
        if new is None:
            kept.append(f)
            continue
        c = legacy[new]
        have = {(r.predicate, r.object.casefold()) for r in c.replaces}
        legacy[new] = c.model_copy(update={"replaces": [*c.replaces, *(
            r for r in f.replaces if (r.predicate, r.object.casefold()) not in have)]})
    return kept, legacy


def _job_named(c: CandidateMemory) -> CandidateMemory:
    """A tool's memory names the job it does ("The user uses VS Code as their editor.",
    "用户使用编辑器VS Code。"), so a question that asks for the job by its name meets it
    by its words, as a question about a home meets "lives in"."""
    job = next((t for t in c.triples if t.predicate.startswith("uses_")), None)
    if job is None or job.object not in c.content or any(
            t.predicate == "production_environment" for t in c.triples):  # it says so
        return c
    zh = bool(_CJK.search(c.content))
    name = tools.noun(job.predicate.removeprefix("uses_"), zh)
    if name is None or name.casefold() in c.content.casefold():
        return c
    named = f"{name}{job.object}" if zh else f"{job.object} as their {name}"
    return c.model_copy(update={"content": c.content.replace(job.object, named, 1)})


def _covered(c: CandidateMemory, framed: Sequence[CandidateMemory]) -> bool:
    """Whether another reader's memory says what a frame read in the same turn: a fact of one
    of its slots, or one naming one of its values ("The user left Deloitte last month...")."""
    slots = {t.predicate for f in framed for t in [*f.triples, *f.replaces]}
    slots |= {covered for lang in ("en", "zh") for slot in list(slots)
              for covered in frames.load(lang).slots.get(slot, {}).get("covers", [])}
    values = {t.object.casefold() for f in framed for t in [*f.triples, *f.replaces]}
    return any(t.predicate in slots or any(v in t.object.casefold() for v in values)
               for t in c.triples) or any(v in c.content.casefold() for v in values)


class RuleExtractor:
    """Regex rules over user turns; deterministic, offline, for when no LLM is configured."""

    name: str = "rules-1"
    prompt_version: str | None = None
    rules: tuple[Rule, ...] = RULES

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]:
        found: dict[tuple[str, str, str, str], CandidateMemory] = {}
        for turn in sorted(turns, key=lambda t: t.timestamp):  # ties: the given order
            if turn.role != "user":
                continue
            legacy: list[CandidateMemory] = []
            whole: dict[str, list[CandidateMemory]] = {}  # a sentence's change, read once
            for clause, hedged, sentence in _statements(turn.content):
                first = sentence not in whole
                if first:
                    whole[sentence] = _read_zh(sentence, turn, hedged, changes=True)
                if whole[sentence]:  # taken whole, with its first clause
                    candidates = whole[sentence] if first else []
                else:
                    candidates = self._from_clause(clause, turn, hedged, sentence)
                legacy += [_with_job(said, clause if not first else sentence, sentence,
                                     change=bool(whole[sentence])) for said in candidates]
            framed, legacy = _ends_joined(_framed(turn, legacy), legacy)
            # the frames read these slots in this turn: the other readers' take on them goes
            mine = framed + [c for c in legacy if not (framed and _covered(c, framed))]
            for candidate in _in_order(turn.content, mine, len(framed)):
                t = candidate.triples[0]
                key = (t.subject, candidate.kind.value, t.predicate, t.object.casefold())
                found[key] = _merge(found[key], candidate) if key in found else candidate
        # a workplace read twice is no team ("我在协和医院消化内科工作": works_at, not team too)
        workplaces = {(s, o) for s, _, p, o in found if p == "works_at"}
        return [_job_named(c) for (s, _, p, o), c in found.items()
                if not (p == "team" and (s, o) in workplaces)]

    def _from_clause(self, clause: str, turn: Turn, hedged: bool, sentence: str = ""
                     ) -> list[CandidateMemory]:
        """The first fixed rule's memory and any other slot the Chinese reader finds beside it;
        else the Chinese reader's plain statements; else what the speaker says of themselves."""
        candidate = next((c for rule in self.rules
                          if (c := _apply(rule, clause, turn, hedged)) is not None), None)
        # a clause of a planned change, read alone, states no change
        plain = _read_zh(clause, turn, hedged, changes=False,
                         plain_only=rules_zh.planned(sentence), sentence=sentence or None)
        if candidate is None and not plain and sentence not in ("", clause):
            # the clause names the value, another clause of its sentence the slot ("手机摔坏了，
            # 现在用的华为Pura 70"): the sentence's plain statements of values in this clause
            plain = [c for c in _read_zh(sentence, turn, hedged, changes=False,
                                         plain_only=rules_zh.planned(sentence))
                     if c.triples[0].object in clause]
        if candidate is None:
            return plain or _read_self(clause, turn, hedged, sentence)
        said = {t.predicate for t in candidate.triples}
        return [candidate] + [c for c in plain if c.triples[0].predicate not in said | {"uses"}]
