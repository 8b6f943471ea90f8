"""What a person tells about themselves in English, in the shape real chat has it: "I just got a
new cutting-edge gaming system", "I've worked with Python and C++", "I'm learning this
instrument", "I had a big win in my game last week". The fixed rules of
:mod:`memq.pipeline.rules` catch known slots (job, city, pets, family …); this reader is their
last resort, for the events, projects and pastimes people talk about, which is most of what
a conversation partner would remember (LoCoMo's observations are mostly such sentences in
the third person).

A clause qualifies when the speaker is its subject ("I …"), its verb is one of things done,
made, started, owned, learned or loved (:data:`_VERBS`; not "I think", "I hope", "I'm glad"),
and what follows names something: no "you", no pronoun left dangling ("I love it", "they
picked it up fast"), at least two words. Pure: a clause in, a statement out. The verbs, the
time words and the patterns are data, in :mod:`memq.pipeline.rules_en_lexicon`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..schemas import Kind
from .rules_en_lexicon import (
    _AGO,
    _AIM,
    _AUX,
    _CUT,
    _DANGLING,
    _DAYS,
    _DEMONSTRATIVE,
    _DEMONSTRATIVES,
    _DIARY,
    _DOING,
    _FOND,
    _FRONT_TIME,
    _FUNCTION,
    _HARD,
    _IN_MONTH,
    _INNER,
    _IRREGULAR,
    _LAST,
    _ME_WITH,
    _MEET,
    _MINE,
    _MONTHS,
    _N_WORDS,
    _NEWS_STATE,
    _NO_NEWS,
    _NOT_ABOUT_SELF,
    _ON_DAY,
    _PAST,
    _PLAN,
    _RELATIVE,
    _SELF,
    _SOME,
    _THEIR_PLAN,
    _TOGETHER,
    _UNCHANGED,
    _UNIT_DAYS,
    _VAGUE,
    _VERBS,
    _WE,
    _WE_AUX,
    _WHEN,
    _WITH,
    FUTURE,
    MAX_OBJECT,
    PRONOUNS,
    TIME,
)

__all__ = [
    "FUTURE", "MAX_OBJECT", "PRONOUNS", "TIME", "SelfStatement", "conjugate", "date_notes",
    "question_window", "read", "resolve_dates", "third_person", "time_last",
]


@dataclass(frozen=True)
class SelfStatement:
    kind: Kind
    predicate: str  # did (an event), does (a habit, a project), likes, has, plans
    object: str  # the verb phrase, short: the triple's object
    content: str  # "The user bought a metal detector."


def _indefinite(text: str) -> str:
    """ "this candle" -> "a candle", "this old car" -> "an old car", "these photos" -> "some
    photos"."""
    text = _DEMONSTRATIVE.sub(
        lambda m: "an" if re.match(r" [aeiou]", text[m.end():m.end() + 2], re.I) else "a", text)
    return _DEMONSTRATIVES.sub("some", text)


def conjugate(verb: str) -> str:
    """Third person singular of a verb said after "I" ("bought" and "learning" stay)."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb in _UNCHANGED or verb.endswith(("ed", "ing")) or verb in _PAST:
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    return verb[:-1] + "ies" if re.search(r"[^aeiou]y$", verb) else verb + "s"


def third_person(text: str) -> str:
    """First-person words to third ("my dog" -> "their dog")."""
    for pattern, repl in PRONOUNS:
        text = pattern.sub(repl, text)
    return text


def _day(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


def time_last(clause: str) -> str:
    """"Next Friday I fly to Oslo" -> "I fly to Oslo next Friday", "Three days ago my
    apartment lost power - so annoying" -> "my apartment lost power three days ago": the time
    where the rules expect it, before what a dash adds."""
    if (m := _FRONT_TIME.match(clause.strip())) is None:
        return clause
    rest = re.split(r"\s[-–—]\s", m["rest"])[0].rstrip(" .!")
    # before what the reader cuts off ("…, which holds …", "…, it was awesome")
    said = ((cut := _CUT.search(rest)) and cut.start()) or len(rest)
    when = f"{m['time'][0].lower()}{m['time'][1:]}"
    return f"{rest[:said].rstrip(' ,')} {when}{rest[said:]}"


def _absolute(m: re.Match[str], when: datetime) -> str:
    """One match of _RELATIVE, said at ``when``, in absolute words ("on 8 June 2023")."""
    rel = m["rel"].casefold()
    if m["unit"]:
        return f"{m['n']} {m['unit']} before {_day(when)}"
    if rel == "yesterday":
        return f"on {_day(when - timedelta(days=1))}"
    if rel in ("today", "tonight", "this morning"):
        return f"on {_day(when)}"
    if rel == "this month":
        return f"in {when:%B %Y}"
    if rel == "this year":
        return f"in {when.year}"
    if rel == "last night":
        return f"on the night of {_day(when - timedelta(days=1))}"
    which, unit = rel.split()
    if unit in _DAYS:
        back = (when.weekday() - _DAYS.index(unit)) % 7 or 7
        step = timedelta(days=back) if which == "last" else -timedelta(
            days=(_DAYS.index(unit) - when.weekday()) % 7 or 7)
        return f"on {_day(when - step)}"
    if unit == "year":
        return f"in {when.year - 1 if which == 'last' else when.year + 1}"
    if unit == "month":
        month = (when.month - 2) % 12 + 1 if which == "last" else when.month % 12 + 1
        year = when.year - (which == "last" and when.month == 1) + (
            which == "next" and when.month == 12)
        return f"in {datetime(year, month, 1):%B %Y}"
    return f"the {unit} {'before' if which == 'last' else 'after'} {_day(when)}"


def resolve_dates(text: str, when: datetime) -> str:
    """Times relative to when it was said, made absolute, in the words LoCoMo's answers use:
    "last week" said on 9 June 2023 is "the week before 9 June 2023", "yesterday" is "on 8 June
    2023", "last Friday" the date of that Friday, "two months ago" "two months before …"."""
    # "booked a trip for next month": "for July 2023", not "for in July 2023"
    return re.sub(r"\b(for|by|until|till) (?:in|on) ", r"\1 ",
                  _RELATIVE.sub(lambda m: _absolute(m, when), text))


def date_notes(text: str, when: datetime) -> list[str]:
    """Each relative time of ``text`` said at ``when``, with the date it meant ("last week = the
    week before 9 June 2023", "yesterday = 8 June 2023"): what a reader of an old message needs
    and cannot work out from the message alone."""
    notes = []
    for m in _RELATIVE.finditer(text):
        note = f"{m[0]} = {re.sub(r'^(?:on|in) ', '', _absolute(m, when))}"
        if note not in notes:
            notes.append(note)
    return notes


def question_window(text: str, when: datetime) -> tuple[datetime, datetime] | None:
    """The span of time a question names, from ``when`` it is asked: "on October 24, 2023" that
    day, "in May 2023" that month, "two weeks ago" the days around then, "last month" that
    month; None if it names none. A date "before"/"after" ("the Monday before July 24, 2023")
    widens to the week on that side. Only the first time named counts."""
    day = timedelta(days=1)
    if m := _ON_DAY.search(text):
        month = _MONTHS.index((m["month"] or m["month2"]).lower()) + 1
        try:
            at = datetime(int(m["year"] or m["year2"]), month, int(m["day"] or m["day2"]),
                          tzinfo=when.tzinfo)
        except ValueError:  # "February 30"
            return None
        before = re.search(r"\bbefore\b", text[:m.start()], re.I) is not None
        after = re.search(r"\bafter\b", text[:m.start()], re.I) is not None
        return at - (7 * day if before else day), at + (8 * day if after else 2 * day)
    if m := _IN_MONTH.search(text):
        month = _MONTHS.index(m["month"].lower()) + 1
        year = int(m["year"]) if m["year"] else when.year - (month > when.month)
        start = datetime(year, month, 1, tzinfo=when.tzinfo)
        end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=when.tzinfo)
        return start, end
    if m := _AGO.search(text):
        n = int(m["n"]) if m["n"].isdigit() else _N_WORDS[m["n"].lower()]
        days = _UNIT_DAYS[m["unit"].lower().rstrip("s")]
        back, slack = n * days * day, max(day, n * days * day / 4)
        return when - back - slack, when - back + slack
    if m := _LAST.search(text):
        rel = m["rel"].lower()
        today = when.replace(hour=0, minute=0, second=0, microsecond=0)
        if rel in ("today", "tonight", "this morning"):
            return today, today + day
        if rel in ("yesterday", "last night"):
            return today - day, today
        which, unit = rel.split()
        return _calendar(which, unit, today)
    return None


def _calendar(which: str, unit: str, today: datetime) -> tuple[datetime, datetime]:
    """The span "last/this/past week|weekend|month|year|<weekday>" names, seen from ``today``
    (midnight)."""
    day = timedelta(days=1)
    if unit in _DAYS:
        back = (today.weekday() - _DAYS.index(unit)) % 7 or (7 if which != "this" else 0)
        return today - back * day, today - back * day + day
    if which == "past":
        span = {"week": 7, "weekend": 3, "month": 31, "year": 366}[unit] * day
        return today - span, today + day
    if unit == "week":
        monday = today - today.weekday() * day
        return (monday - 7 * day, monday) if which == "last" else (monday, monday + 7 * day)
    if unit == "weekend":
        saturday = today - ((today.weekday() - 5) % 7) * day
        if which == "last" and today.weekday() >= 5:  # said on the weekend: the one before
            saturday -= 7 * day
        if which == "this" and today.weekday() < 5:  # the coming one
            saturday += 7 * day
        return saturday, saturday + 2 * day
    if unit == "month":
        first = today.replace(day=1)
        if which == "this":
            return first, (first + 32 * day).replace(day=1)
        return (first - day).replace(day=1), first
    year = today.year - (which == "last")
    return today.replace(year=year, month=1, day=1), today.replace(year=year + 1, month=1, day=1)


def read(clause: str, when: datetime | None = None) -> SelfStatement | None:
    """What the speaker says they did, do, own, love or plan, in the third person ("The user
    …", :mod:`rules` puts the speaker's name in), its relative times made absolute from
    ``when`` it was said; None for anything else. A clause after a dash ("It's been a rough
    week - I gave in and bought …") is read too."""
    text = clause.strip()
    for n, piece in enumerate((text, *re.split(r"\s[-–—]\s|:\s", text)[1:])):
        part = piece.strip()
        part = time_last(part)  # "Last week I went …": "I went … last week"
        if n and _DIARY.match(part):  # "I was busy too - went to a meetup"
            part = f"I {part}"
        if (st := _read(part, when)) is not None:
            return st
    return None


def _dated(content: str, when: datetime | None) -> str:
    return resolve_dates(content, when) if when is not None else content


def _undangled(rest: str, pointing: re.Pattern[str] = _DANGLING) -> str:
    """What comes before the last "and" ahead of a pronoun pointing back (``pointing``):
    "taking care of my pets and spending time with them" -> "taking care of my pets" (the
    rest, if none)."""
    if (m := pointing.search(rest)) is None:
        return rest
    head = rest[:m.start()]
    cut = head.rfind(" and ")  # (the self-reader keeps its clause whole: cut, LoCoMo's
    # precision fell for next to no recall: scripts/results/2026-12-07-figures-from-comments.md)
    return head[:cut] if cut > 0 else rest


def _names_something(rest: str, *, at_least: int) -> bool:
    """A phrase that names something of the speaker's: enough words beyond function words
    and vague ones, nothing about the one spoken to, no pronoun pointing back."""
    words = [w for w in re.findall(r"[\w'-]+", rest.casefold()) if w not in _FUNCTION]
    named = set(words) - _WHEN  # "a setback last week" names no more than "a setback"
    return (len(words) >= at_least and not named <= _VAGUE | _SOME and len(rest) <= 160
            and not _NOT_ABOUT_SELF.search(rest) and not _DANGLING.search(rest))


def _fond(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "I'm passionate about fixing up things" -> "The user loves fixing up things." """
    if not (fond := _FOND.match(clause)):
        return None
    rest = _undangled(_CUT.sub("", fond["rest"]).strip(" ,.")).strip(" ,.")
    rest = re.sub(r"^th(?:is|at)\b(?=[\w ]+ (?:called|named)\b)", "a", rest)  # "this game called X"
    if not _names_something(rest, at_least=1):
        return None
    rest = third_person(rest)
    said = f"is {fond['how']}" if fond["how"] else "loves"  # "interested in" is no love yet
    return SelfStatement(Kind.PREFERENCE, "likes", rest[:MAX_OBJECT],
                         _dated(f"The user {said} {rest}.", when))


def _verb(m: re.Match[str]) -> tuple[str, str, str, tuple[str, Kind] | None]:
    """(aux, verb, what follows, its class) of an "I …" clause."""
    aux, verb, tail = m["aux"] or "", m["verb"], m["rest"]
    if aux in (" have", " had") and verb not in _VERBS:  # "I have two cats": the verb itself
        aux, verb, tail = "", aux.strip(), f" {verb}{tail}"
    if verb == "gonna" and aux in ("'m", " am"):  # "I'm gonna be in Japan for a few months"
        return "'m", "going", f" to{tail}", ("plans", Kind.EVENT)
    if verb not in _VERBS and aux in ("'ve been", " have been", "'m", " am") and verb.endswith(
            "ing") and verb not in _INNER:  # "I've been slogging away at …", "I'm contacting …"
        return aux, verb, tail, ("does", Kind.FACT)
    return aux, verb, tail, _VERBS.get(verb)


def _phrase(raw: str, at_least: int = 2) -> str | None:
    """What a statement's form leaves to say, in the third person: cut where the reader cuts,
    before a pronoun pointing back after "and", "this X" as "a X"; None if it names nothing."""
    rest = _indefinite(_undangled(_CUT.sub("", raw).strip(" ,.")).strip(" ,."))
    return third_person(rest) if _names_something(rest, at_least=at_least) else None


def _aim(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "My plan for now is to expand my brand" -> "The user's plan is to expand their
    brand." """
    if not (m := _AIM.match(clause)) or (said := _phrase(m["rest"])) is None:
        return None
    return SelfStatement(Kind.EVENT, "plans", f"to {said}"[:MAX_OBJECT],
                         _dated(f"The user's {m['what']} is to {said}.", when))


def _hard(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "Finding balance has been challenging" -> "The user finds finding balance
    challenging." """
    if not (m := _HARD.match(clause)) or (said := _phrase(m["what"])) is None:
        return None
    said = said[0].lower() + said[1:]
    return SelfStatement(Kind.FACT, "finds", f"{said} {m['how']}"[:MAX_OBJECT],
                         _dated(f"The user finds {said} {m['how']}.", when))


def _meet(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "meet Toby, my puppy" -> "The user's puppy is named Toby." """
    if not (m := _MEET.match(clause)):
        return None
    name = m["name"] or m["named"]
    what = third_person(m["what"])  # "my mother's cat": "their mother's cat"
    return SelfStatement(Kind.FACT, "has", f"{what} named {name}",
                         f"The user's {what} is named {name}.")


def _doing(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "I'm currently on the hunt for a new job" -> "The user is on the hunt for a new job." """
    if not (m := _DOING.match(clause)) or (said := _phrase(m["rest"])) is None:
        return None
    return SelfStatement(Kind.FACT, "does", said[:MAX_OBJECT],
                         _dated(f"The user is {said}.", when))


def _mine(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "My mother passed away last year" -> "The user's mother passed away last year." """
    if not (m := _MINE.match(clause)):
        return None
    rest = _CUT.sub("", m["rest"]).strip(" ,.")
    if _THEIR_PLAN.match(rest):
        return None  # "my parents are thinking about retiring to Portugal": theirs, not done
    if not _NEWS_STATE.fullmatch(rest) and (not _names_something(rest, at_least=1) or re.fullmatch(
            r"(?:is|are|was|were)(?: (?:so|really|very|super|pretty|such|a|an))*(?: \w+)?", rest)):
        return None  # "my dog is cute": no news (but "my partner is pregnant" is)
    said = third_person(f"{m['who']} {rest}")
    obj = said if len(said) <= MAX_OBJECT else said[:MAX_OBJECT].rsplit(" ", 1)[0]
    return SelfStatement(Kind.EVENT, "did", obj, _dated(f"The user's {said}.", when))


def _as_speaker(clause: str) -> tuple[str, int] | None:
    """The clause said by the speaker alone, and how many words it must name: "We found …" is
    read as "I found …" and must say more; what the two of them share is not read."""
    if (we := _WE.match(clause)) is None:
        return clause, 2
    if _TOGETHER.search(we["rest"]):
        return None  # "we make a good team", "we push each other": about the two of them
    aux = we["aux"] or ""
    return f"I{_WE_AUX.get(aux, aux)}{we['rest']}", 3


def _plural(said: str, aux: str, verb: str) -> str:
    """The verb phrase of two: "has been" -> "have been", "plans" -> "plan"."""
    if aux in ("'ve", " have", "'ve been", " have been"):
        return said.replace("has been", "have been").replace("has ", "have ", 1)
    return said if aux else said.replace(conjugate(verb), verb, 1)


def _said(aux: str, adverbs: str, verb: str, rest: str) -> str:
    """The verb phrase in the third person, adverbs after the auxiliary: "I'm really enjoying
    …" -> "is really enjoying …", "I just got …" -> "just got …"."""
    if aux:
        return " ".join(p for p in (_AUX[aux], adverbs, verb, rest) if p)
    return " ".join(p for p in (adverbs, conjugate(verb), rest) if p)


def _read(clause: str, when: datetime | None) -> SelfStatement | None:
    if (st := _fond(clause, when) or _aim(clause, when) or _mine(clause, when)
            or _doing(clause, when) or _hard(clause, when) or _meet(clause, when)):
        return st
    if (speaker := _as_speaker(clause)) is None:
        return None
    clause, at_least = speaker
    who = None
    if (both := _WITH.match(clause) or _ME_WITH.match(clause)) and not _NOT_ABOUT_SELF.search(
            both["who"]):
        who, clause = both["who"], "I" + both["rest"]
    if not (m := _SELF.match(clause)):
        return None
    aux, verb, tail, got = _verb(m)
    if got is None or (aux in ("'m", " am") and not verb.endswith("ing")):
        return None
    predicate, kind = got
    # "I have plans for a hike and thought you could come along": what is the speaker's
    rest = _indefinite(_undangled(_CUT.sub("", tail).strip(" ,."), _NOT_ABOUT_SELF).strip(" ,."))
    if _NO_NEWS.match(f"{verb} {rest}"):
        return None  # "I'm doing better now", "I'm working on something complicated"
    if (verb == "used" and not re.match(r"to (?!live|work|drive|be|have)\w+", rest)) or (
            (predicate == "plans" or (verb == "going" and rest.startswith("to ")))
            and not _PLAN.match(rest)):
        return None  # "I used it", "I want one so bad"; "I used to live in X" is the slot's
    if predicate == "has" and not re.match(r"(?:a|an|two|three|four|five|some|my|\d+|quite (?:a|an"
                                            r"|the)|plans for|the (?:opportunity|chance|pleasure"
                                            r"|honou?r) to)\b", rest):
        return None  # "I had fun", "I have to go"
    habit = bool(re.search(r"\b(?:often|usually|always|sometimes|regularly)\b", m.group(0)))
    if aux in ("'ve been", " have been") and at_least == 2 and re.match(r"(?:on|at|in|into) ",
                                                                     rest):
        at_least = 1  # a doing of some time names its one thing: "I've been focusing on fitness"
    if not _names_something(rest, at_least=at_least) or (who is not None and not (
            aux or verb in _PAST or predicate == "plans" or habit)):
        return None
    rest = third_person(rest)
    adverbs = m.group(0)[1 + len(m["aux"] or ""): m.start("verb")].strip() if aux or not (
        m["aux"]) else ""
    said = _said(aux, adverbs, verb, rest)
    obj = f"{verb} {rest}"
    if len(obj) > MAX_OBJECT:
        obj = obj[:MAX_OBJECT].rsplit(" ", 1)[0]
    if who is not None:  # plural: "The user and their GF just had …" (past, have, or a plan)
        return SelfStatement(kind, predicate, obj,
                             _dated(f"The user and their {who} {_plural(said, aux, verb)}.", when))
    return SelfStatement(kind, predicate, obj, _dated(f"The user {said}.", when))
