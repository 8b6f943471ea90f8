"""What the offline extractor (:mod:`memq.pipeline.rules`) reads in a turn, clause by clause: the
turn cut into sentences and clauses that may state something about the speaker
(``_statements``), the first fixed rule that takes a clause (``_apply``), and the readers
after them (``_read_zh``: Chinese values and their changes; ``_read_self``: what a person
says of themselves), each making its candidate memory (``_candidate``). Its patterns are in
``rules_tables``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..schemas import CandidateMemory, Kind, Triple, Turn
from . import rules_en, rules_zh, rules_zh_self
from .rules_tables import (
    _CALLED,
    _CJK,
    _CLAUSES,
    _CUT,
    _DIARY_VERB,
    _EMOJI,
    _EXPAND,
    _GERUND_SUBJECT,
    _HEDGE,
    _HEDGE_WORDS,
    _HYPOTHETICAL,
    _JOKE,
    _JUNK,
    _LAUGH,
    _LAUGH_AFTER,
    _LEAD,
    _LEAD_I,
    _LOWER,
    _ONLY_TIME,
    _OTHER_SUBJECT,
    _POINTING,
    _POINTS_BACK,
    _PREFIX,
    _QUESTION,
    _REQUEST,
    _SENTENCE_PREFIX,
    _SENTENCES,
    _SHARED_SUBJECT,
    _STRIP,
    _SUBJECTLESS,
    _TAG_QUESTION,
    _TAIL,
    _ZH_ASKING,
    _ZH_PARTICLES,
    HEDGED_CONFIDENCE,
    MAX_OBJECT_CHARS,
    Rule,
)


def _third_person(text: str, *, zh: bool, lead: bool) -> str:
    """First person to third: "I'm allergic to my cat" → "The user is allergic to their cat"."""
    if zh:
        return re.sub(r"(?<!自)我", "用户", text.replace("我们", "用户团队"))
    if lead:
        for short, long in _EXPAND:
            text = text.replace(short, long) if text.startswith("I") else text
        if m := _LEAD_I.match(text):
            text = f"The user{m[1]} {rules_en.conjugate(m[2])}{m[3]}"
        elif text[:3].lower() == "my ":
            text = "The user's " + text[3:]
    return rules_en.third_person(text)


def _article(word: str) -> str:
    return "an" if re.match(r"[aeio]|u(?!s|ni|x|r[aeiou])", word, re.I) else "a"


def _clean(obj: str, zh: bool, *, whole: bool = False) -> str:
    """The object without its tail ("…, because …", "…了"); ``whole`` keeps "，…" (Chinese)."""
    obj = _CALLED[zh].sub("", _CUT[zh].sub("", obj))
    if zh and not whole:
        obj = obj.split("，")[0].split(",")[0]
    previous = None
    while previous != obj:
        previous = obj
        obj = _LEAD[zh].sub("", _TAIL[zh].sub("", obj.strip(_STRIP)))
    return obj


def _is_question(sentence: str) -> bool:
    return (sentence.endswith(("?", "？")) or bool(_QUESTION.match(sentence))
            or sentence.rstrip(_STRIP).endswith("吗"))


def _statements(text: str) -> Iterator[tuple[str, bool, str]]:
    """(clause, hedged, sentence) of one turn's text that may state something about the user,
    with the whole sentence it is part of (a Chinese change may span its clauses:
    "以前X，现在Y")."""
    text = re.sub(r"[ \t\u3000]+", " ", text.replace("’", "'").replace("‘", "'"))
    if "🙃" in text:  # said the other way round ("我最喜欢加班了🙃")
        return
    if _CJK.search(text):  # in Chinese chat an emoji is tone, where a sentence ends
        text = _EMOJI.sub("。", text)
    if _JOKE.search(text):
        return
    for raw in _SENTENCES.split(text):
        sentence = _REQUEST.sub(r"\1", _SENTENCE_PREFIX.sub("", raw.strip(), count=1), count=1)
        if _is_question(sentence):  # "I'm off to Oslo next week, any tips?": keep the statement
            # a Chinese question may go without its mark: "…用的Memcached，有啥坑要注意吗"
            sentence = (_TAG_QUESTION.sub("", sentence) if _TAG_QUESTION.search(sentence)
                        else sentence if _CJK.search(sentence) else "")
            while _CJK.search(sentence) and _ZH_ASKING.search(sentence):
                sentence = _ZH_ASKING.sub("", sentence)  # "…，你觉得呢，有啥建议"
        sentence = _LAUGH_AFTER.sub("", sentence)  # "…，加班更多了哈哈": said, then laughed
        if (not sentence or _is_question(sentence) or _HYPOTHETICAL.search(sentence)
                or _LAUGH.search(sentence)):
            continue
        hedged = bool(_HEDGE.search(sentence))
        if not _GERUND_SUBJECT.search(sentence):  # "Learning from X is important": no diary
            sentence = _SUBJECTLESS.sub(r"I \1", sentence, count=1)  # "Moved to Oslo."
            sentence = _DIARY_VERB.sub(  # "Met with the team": the self-statement reader's
                lambda m: f"I {m[1].lower()}", sentence, count=1)
        subject = ""
        for part in _glued(_CLAUSES.split(sentence.rstrip(_STRIP))):
            shared = subject and _SHARED_SUBJECT.match(part.strip())
            clause = _PREFIX.sub("", _HEDGE_WORDS.sub("", part).strip(), count=1)
            clause = _ZH_PARTICLES.sub("", clause.rstrip(_STRIP)).strip()
            if shared:  # "I live in Oslo and work at X", "我已经离职了，现在在X上班"
                clause = subject + clause
            elif not subject:  # the first clause's subject, if it is the user
                subject = "" if _OTHER_SUBJECT.match(clause) else (
                    "I " if re.match(r"I\b", clause) else "我" if clause.startswith("我") else "")
            if clause := rules_en.time_last(clause):
                yield clause, hedged, sentence


def _glued(parts: Sequence[str]) -> list[str]:
    """A clause that is only a time ("Last Friday, I finished …" cut at the comma) goes with
    the next one."""
    out: list[str] = []
    carry = ""
    for part in parts:
        if _ONLY_TIME.fullmatch(part.strip()):
            carry = f"{carry}{part.strip()} "
            continue
        out.append(f"{carry}{part.strip()}" if carry else part)
        carry = ""
    return out + ([carry.strip()] if carry else [])


def _apply(rule: Rule, clause: str, turn: Turn, hedged: bool) -> CandidateMemory | None:
    match = rule.pattern.fullmatch(clause)
    if not match:
        return None
    zh = bool(_CJK.search(rule.template))
    obj = _clean(match["obj"], zh, whole=rule.predicate == "remembers")
    if (not obj or len(obj) > MAX_OBJECT_CHARS or _JUNK.fullmatch(obj)
            or (rule.reject is not None and rule.reject.match(obj))
            or (not zh and (_POINTING.match(obj) or (
                rule.kind is not Kind.INSTRUCTION
                and _POINTS_BACK.search(obj.split(",")[0]))))):
        return None
    obj = _third_person(obj, zh=zh, lead=rule.template.startswith("{Obj}"))
    values = {k: (v.lower() if k in _LOWER else v) if v else ""  # unmatched optional: ""
              for k, v in match.groupdict().items() if k != "obj"}
    values.update(obj=obj, Obj=obj[:1].upper() + obj[1:], a=_article(obj))
    target, content = rule.object_template.format(**values), rule.template.format(**values)
    content = re.sub(r" +(?=[ .])", "", content)  # an optional group left empty: no gap
    if len(content) < 3:
        return None
    triples = [(rule.predicate, target)] + [
        (predicate, template.format(**values).strip(_STRIP)) for predicate, template, needs
        in rule.also if values.get(needs)]
    if turn.speaker and rule.kind == Kind.INSTRUCTION:
        return None  # how the assistant behaves is for its own user to say
    return _candidate(turn, rule.kind, triples, content, rule.confidence, rule.importance,
                      hedged=hedged, zh=zh, old=_clean(match.groupdict().get("old") or "", zh))


def _candidate(turn: Turn, kind: Kind, triples: Sequence[tuple[str, str]], content: str,
               confidence: float, importance: float, *, hedged: bool, zh: bool,
               old: str | None) -> CandidateMemory:
    """The memory a rule proposes: about the user, or about the named speaker in their name;
    ``old``, the value a change ends ("switched from {old}"), is what it replaces."""
    subject = "user"
    if zh:  # "用户计划下个月去日本" said in March 2026: "…2026年4月…"
        content = rules_zh_self.resolve_dates(content, turn.timestamp)
    if turn.speaker:  # a named person: the memory is about them, in their name
        subject, content = turn.speaker, _about(content, turn.speaker, zh=zh)
    predicate, target = triples[0]
    replaces = [Triple(subject=subject, predicate=predicate, object=old)] if (
        old and len(old) <= MAX_OBJECT_CHARS and old.casefold() != target.casefold()
        and not _JUNK.fullmatch(old)) else []
    return CandidateMemory(
        content=content, kind=kind, importance=importance,
        confidence=min(confidence, HEDGED_CONFIDENCE) if hedged else confidence,
        entities=[o for _, o in triples],
        triples=[Triple(subject=subject, predicate=p, object=o) for p, o in triples],
        replaces=replaces, source_turn_ids=[turn.turn_id], valid_at=turn.timestamp)


def _read_self(clause: str, turn: Turn, hedged: bool, sentence: str = ""
               ) -> list[CandidateMemory]:
    """What a person says they did, do, own, love or plan (:mod:`memq.pipeline.rules_en`,
    :mod:`memq.pipeline.rules_zh_self`), when no fixed rule took the clause. A Chinese
    clause gets back the 了 that ended it in the sentence ("我上周辞职了": done, not a plan)."""
    zh = bool(_CJK.search(clause))
    if zh and not clause.endswith("了") and re.search(f"{re.escape(clause)}[了啦]", sentence):
        clause = f"{clause}了"
    st = (rules_zh_self if zh else rules_en).read(clause, turn.timestamp)
    if st is None:
        return []
    return [_candidate(turn, st.kind, [(st.predicate, st.object)], st.content, 0.75, 0.5,
                       hedged=hedged, zh=zh, old=None)]


def _read_zh(clause: str, turn: Turn, hedged: bool, *, changes: bool,
             plain_only: bool = False, sentence: str | None = None) -> list[CandidateMemory]:
    """The slot statements :func:`memq.pipeline.rules_zh.read` finds in a Chinese clause: its
    changes only (``changes``: of a whole sentence, before the fixed rules, which take many
    a change for a plain use), or its plain statements too (after the rules found nothing);
    ``plain_only``: no change at all (a clause of a sentence that only plans one)."""
    if not _CJK.search(clause):
        return []
    return [_candidate(turn, st.kind, [(st.predicate, st.value)],
                       st.template.format(obj=st.value).rstrip("。")
                       + (f"（之前是{st.old}）。" if st.old else "。"), 0.9, 0.7,
                       hedged=hedged and (not changes or _hedged_at(clause, st.value)),
                       zh=True, old=st.old)
            for st in rules_zh.read(clause, sentence)
            if (st.change or not changes) and not (st.change and plain_only)]


def _hedged_at(sentence: str, value: str) -> bool:
    """Whether the clause that states the value is hedged ("线下可能约不了了，我上个月…去了武汉":
    the doubt is about meeting, not about the move)."""
    clause = next((c for c in re.split(r"[，,；;]", sentence) if value in c), sentence)
    return bool(_HEDGE.search(clause))


def _about(content: str, name: str, *, zh: bool) -> str:
    """"The user's team uses X." -> "Maria's team uses X."; "用户住在X。" -> "李娜住在X。"."""
    if zh:
        return content.replace("用户团队", f"{name}的团队").replace("用户", name)
    return re.sub(r"\b[Tt]he user\b", name, content)
