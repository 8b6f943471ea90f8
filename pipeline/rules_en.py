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
picked it up fast"), at least two words. Pure: a clause in, a statement out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..schemas import Kind


@dataclass(frozen=True)
class SelfStatement:
    kind: Kind
    predicate: str  # did (an event), does (a habit, a project), likes, has, plans
    object: str  # the verb phrase, short: the triple's object
    content: str  # "The user bought a metal detector."


_ADV = (r"(?: (?:just|recently|finally|also|really|actually|always|usually|often|still|already"
        r"|even|now|totally|definitely|officially|slowly|lately|first|both|all|currently|mostly"
        r"|sometimes|generally|normally|regularly|constantly|seriously|personally))*")
_SELF = re.compile(rf"^I(?P<aux>'ve been|'ve| have been| have|'m| am| was| had){{0,1}}{_ADV}"
                   r" (?P<verb>[a-z]+)\b(?!')(?P<rest>.*)$")  # "I won't" is no win
# verb -> (predicate, kind); base, past and -ing forms
_CLASSES = {
    "did": (Kind.EVENT, """started joined got bought adopted moved went visited finished
        graduated took made built created worked lived played learned learnt volunteered
        attended won lost found signed ran read wrote painted cooked baked traveled travelled
        hiked camped practiced practised trained taught studied decided tried met became
        received completed launched opened organized organised participated competed
        celebrated raised donated spent collected grew picked gave sold left quit entered
        performed recorded released published designed planted rescued fostered hosted
        helped passed earned booked explored discovered posted shared saw noticed restored
        fixed repaired rehearsed experimented joined used held threw arranged scored landed
        accepted switched upgraded renovated redecorated remodeled adopted reached reconnected
        struggled bonded streamed replaced installed purchased ordered renewed enrolled
        registered subscribed"""),
    "does": (Kind.FACT, """experimenting focusing looking restoring fixing rehearsing
        start join get buy adopt work live play learn volunteer attend
        run read write paint cook bake travel hike camp practice train teach study try
        make build create collect grow own do perform record design plant foster host help
        explore watch listen go did watching listening going starting joining getting
        working living playing learning volunteering
        running reading writing painting cooking baking traveling travelling hiking camping
        practicing practising training teaching studying trying making building creating
        collecting growing doing performing recording designing planting fostering hosting
        helping exploring taking attending saving preparing organizing organising donate
        use using take find"""),
    "likes": (Kind.PREFERENCE, "love loved enjoy enjoyed adore appreciate value cherish"),
    "plans": (Kind.EVENT, "plan planned planning want wanted hope gonna"),
    "has": (Kind.FACT, "have had"),
}
_VERBS = {v: (p, k) for p, (k, words) in _CLASSES.items() for v in words.split()}
_NOT_ABOUT_SELF = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b", re.I)
# (a relative "that" or "those who" points at nothing: "an organization that provides items to
# those who need them")
_DANGLING = re.compile(r"\b(?:it|^that|that(?! (?:\w+s|\w+ed|was|were|is|are|has|had|have|led"
                       r"|made|got|took|gave|brought|kept|helped|taught|changed)\b)"
                       r"|this(?! (?:morning|evening|afternoon|week|weekend|month"
                       r"|year|summer|winter|spring|fall|season)\b)|these|those(?! who\b)|they|them"
                       r"|he|she"
                       r"|him|her|one(?! of| (?:day|summer|winter|spring|fall|autumn|weekend|night"
                       r"|morning|evening|afternoon|time)\b)|ones|there|here|(?-i:so)"
                       r"|too(?! much| many))\b", re.I)
_CUT = re.compile(r",? (?:but|because|since|(?-i:so)|which|though|although|and then|and it|and that"
                  r"|and something|and someone|and everything"
                  r"|and they|and I'm|and I am|and I feel|and wow|and oh)\b.*$|[;!?].*$|:\s.*$"
                  r"|\s-\s.*$|\s*[–—].*$|\s*\[.*$"
                  r"|,\s+(?:it|that|this|they|he|she)(?:'s|'re|\s+[a-z]+)\b.*$"
                  r"|,\s+(?:especially|particularly|and now)\b.*$|\s+as well$"
                  # "and found that turbinado adds …", "25 rare coins that I need to store …"
                  r"|,? and (?:found|realized|realised|noticed|learned|discovered) that\b.*$"
                  r"|\s+that I(?:'ll| will| need| want| have to| plan| hope| am going| was going)"
                  r"\b.*$",
                  re.I)
# a demonstrative before a noun points at a photo or a thing just named: "bought this candle"
# is "bought a candle" ("that" is left: "learned that patience matters" is no demonstrative)
_DEMONSTRATIVE = re.compile(r"\bthis\b(?= (?!(?:i|you|he|she|it|we|they|the|a|an|my|now|one|way"
                            r"|time|morning|evening|afternoon|week|weekend|month|year|summer"
                            r"|winter|spring|fall|autumn|season|semester|term"
                            r"|is|was|are|were|has|had|will|would|can|could|for|from|with|to|at"
                            r"|in|on|of|and|or|but|so|because|when|while|yesterday|today|last"
                            r"|too|again|now|as|like|right)\b)[a-z]+\b)", re.I)
def _indefinite(text: str) -> str:
    """ "this candle" -> "a candle", "this old car" -> "an old car", "these photos" -> "some
    photos"."""
    text = _DEMONSTRATIVE.sub(
        lambda m: "an" if re.match(r" [aeiou]", text[m.end():m.end() + 2], re.I) else "a", text)
    return _DEMONSTRATIVES.sub("some", text)


_DEMONSTRATIVES = re.compile(r"\bthese\b(?= (?!(?:are|were|have|had)\b)[a-z]+\b)",
                             re.I)
# first person to third, in any text ("my" -> "their", "I was" -> "they were")
PRONOUNS = tuple((re.compile(p), r) for p, r in (
    (r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI've\b", "they've"),
    (r"\bI'll\b", "they'll"), (r"\bI'd\b", "they'd"), (r"\bI was\b", "they were"),
    (r"\bI\b", "they"), (r"\b[Mm]yself\b", "themselves"), (r"\b[Mm]ine\b", "theirs"),
    (r"\b[Mm]y\b", "their"), (r"\b[Mm]e\b", "them"), (r"\b[Oo]urs\b", "theirs"),
    (r"\b[Oo]ur\b", "their"), (r"\b[Oo]urselves\b", "themselves")))
_AUX = {"'ve been": "has been", " have been": "has been", "'ve": "has", " have": "has",
        "'m": "is", " am": "is", " was": "was", " had": "had"}
_PLAN = re.compile(r"^(?:to|on) (?!(?:keep(?! (?:learning|working on|practi[cs]ing|improving"
                   r"|exploring|building|studying)\b)|stay|bring|make sure|try|give|look|see"
                   r"|find|think"
                   r"|get|have|let|say|tell|ask|share|show|send|take a look|hang|chill|rest|relax"
                   r"|check(?! out)"
                   r"|solidify|figure|work on|be(?! in| at| on| back))\b)\w+"
                   r"|^an? (?:\w+ ){0,2}(?:trip|visit|party|vacation|holiday|wedding|move|hike"
                   r"|getaway|tour|retreat|reunion|celebration|fundraiser|ceremony|concert"
                   r"|festival|camping|picnic)\b")
# "want to …", "plan on …" something to remember; not "going to bring some snacks", "want to
# make sure …"
MAX_OBJECT = 80
_VAGUE = frozenset({
    "news", "challenge", "challenges", "milestone", "adventure", "setback", "time", "times",
    "blast", "day", "days", "week", "feeling", "idea", "ideas", "question", "questions", "work",
    "fun", "chance", "thing", "things", "stuff", "experience", "moment", "incident", "plan",
    "plans", "update", "updates", "recommendations", "tips", "success", "progress", "do",
    "recently", "lately", "today", "well", "going", "break", "rough", "patch", "skill",
    "skills", "something", "someone", "anything", "everything", "lesson", "lessons", "call",
    "decision", "choice"})
# words of when, not of what
_WHEN = frozenset({
    "last", "next", "this", "week", "weeks", "weekend", "month", "months", "year", "years",
    "yesterday", "today", "tonight", "ago", "night", "morning", "evening", "afternoon",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "earlier",
    "couple", "few", "two", "three", "other"})
_SOME = frozenset({
    "some", "awesome", "great", "big", "good", "personal", "bit", "major", "huge", "new",
    "unexpected", "little", "amazing", "few", "similar", "exciting", "cool", "nice", "crazy",
    "wild", "hard", "tough", "busy", "fantastic", "incredible", "wonderful", "real", "an", "of",
    "super", "rad", "fun", "blast", "accomplishment", "eventful", "interesting", "hectic",
    "productive", "lovely", "memorable"})
_FUNCTION = frozenset({
    "to", "the", "a", "an", "of", "in", "on", "at", "for", "with", "and", "or", "some", "all",
    "my", "their", "from", "by", "into", "out", "up", "about", "over", "just", "really", "so",
    "very", "more", "much", "lot", "lots"})


_PAST = set(_CLASSES["did"][1].split()) | {"had", "loved", "enjoyed", "wanted", "planned",
                                            "did"}

_UNCHANGED = {"can", "cannot", "could", "should", "must", "might", "may", "will", "would",
              "shall", "had", "did", "was"}
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes"}


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



_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_N = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
      "a few": 3, "a couple of": 2, "couple of": 2, "few": 3, "several": 4}
_RELATIVE = re.compile(
    r"\b(?P<rel>yesterday|today|tonight|this morning|last night|this (?:month|year)"
    r"|(?:last|next) (?:week(?:end)?|month"
    r"|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?P<n>a few|a couple of"
    r"|couple of|several|an?|one|two|three|four|five|six|\d+) (?P<unit>days?|weeks?|months?"
    r"|years?) ago)\b(?!')", re.I)


def _day(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


FUTURE = (r"(?:next|this coming|this) (?:week|weekend|month|year|summer|winter|spring|fall"
          r"|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight"
          r"|in (?:a|an|one|two|three|four|five|six|a few|a couple of|\d+) (?:days?|weeks?"
          r"|months?)|later this (?:week|month|year)|(?:in|on) (?-i:[A-Z])\w+")
TIME = (rf"(?:{FUTURE}|(?:last|this) (?:week|weekend|month|year|summer|winter|spring|fall"
        r"|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|last night"
        r"|this morning|yesterday|today|recently|lately|these days|earlier this (?:week|month"
        r"|year)|(?:a few|a couple of|couple of|several|\w+) (?:days?|weeks?|months?|years?)"
        r" ago)")
_FRONT_TIME = re.compile(rf"^(?:and |but |so )?(?P<time>{TIME}),?\s+"
                         r"(?P<rest>(?:I|[Mm]y|[Ww]e|[Mm]e and)\b.+)$", re.I)


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


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"
_MONTH2 = _MONTH.replace("month", "month2")
_ON_DAY = re.compile(rf"\b(?:{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<year>\d{{4}})"
                     rf"|(?P<day2>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH2}"
                     r",? (?P<year2>\d{4}))\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|early|late|mid|of) {_MONTH}(?: (?P<year>\d{{4}}))?\b",
                       re.I)
_AGO = re.compile(r"\b(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple"
                  r" of|couple of|several|\d+) (?P<unit>days?|weeks?|months?|years?) ago\b", re.I)
_LAST = re.compile(r"\b(?P<rel>yesterday|today|tonight|last night|this morning|(?:last|this|past)"
                   r" (?:week(?:end)?|month|year|monday|tuesday|wednesday|thursday|friday"
                   r"|saturday|sunday))\b", re.I)
_N_WORDS = _N | {"seven": 7, "eight": 8, "nine": 9, "ten": 10}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


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


# "I'm passionate about X", "I'm super into X", "I'm a big fan of X": what the speaker loves
# "I'm currently on the hunt for a new job": what one is in the middle of
_DOING = re.compile(rf"^I(?:'m| am){_ADV}(?: currently)?(?: (?:so|really|very|super|truly|pretty))?"
                    r" (?P<rest>(?:on the hunt|looking"
                    r"|searching|in the middle of|in the process of"
                    r"|on a (?:trip|road trip|mission|diet|break)"
                    # how one stands to something named: "I'm grateful for the connection I
                    # have with my siblings", "I'm busy taking care of my pets"
                    r"|busy \w+ing|grateful for|thankful for|proud of|all about"
                    r"|excited (?:about|for)|determined to|committed to|dedicated to|devoted to"
                    r"|considering \w+ing|thinking of \w+ing)"
                    r"\b.+)$")
_FOND = re.compile(rf"^I(?:'m| am|'ve been| have been){_ADV}"
                   r"(?: (?:super|so|really|totally|very|pretty))?"
                   r" (?:passionate about|into|a (?:big |huge )?fan of|obsessed with|crazy about"
                   r"|loving|(?P<how>interested in|keen on|hooked on|fascinated by|addicted to"
                   r"|drawn to))"
                   r" (?P<rest>.+)$")
# "My GF and I just had …": the speaker with someone, in their name
_WITH = re.compile(r"^(?:my|our) (?P<who>(?:\w+ ){0,2}?\w+),? and I\b(?P<rest>.*)$", re.I)
# "Me and my neighbor ran a free gardening class": the same, said the other way round
_ME_WITH = re.compile(r"^(?:me|I) and (?:my|our) (?P<who>(?:\w+ ){0,2}?\w+)(?P<rest> (?:just |also "
                      r"|finally |recently |both )*(?:[a-z]+ed|got|had|made|took|went|came|began"
                      r"|became|gave|grew|ran|won|saw|met|did|spent|built|threw|held|found|have"
                      r"|'ve)\b.*)$", re.I)


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


# after a dash the subject is often left out, as in a diary: "- went to a community meetup"
_DIARY = re.compile(r"(?:just |finally |recently |also )*(?:went|got|took|made|finished|tried"
                    r"|visited|started|joined|bought|met|saw|found|signed|adopted|won|had a)\b")


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


# what goes on inside, not a doing: "I've been thinking about …"
_INNER = frozenset({"thinking", "feeling", "hoping", "wondering", "meaning", "wishing",
                    "missing", "worrying", "dreaming", "struggling", "having", "getting",
                    "going", "doing", "being", "saying", "telling", "asking", "waiting",
                    # states of the moment, not doings: "I'm starving", "I'm still figuring …"
                    "figuring", "starving", "dying", "freaking", "loving", "hating", "craving",
                    "kidding", "joking", "sitting", "lying", "standing", "sleeping", "resting",
                    "relaxing", "chilling", "stressing", "panicking", "trying", "looking",
                    "hanging", "coming", "leaving", "heading", "running", "rooting", "counting",
                    "longing"})


# "We found an awesome cafe": the speaker among others, said as the speaker's own
_WE = re.compile(r"^[Ww]e(?: all| both)?(?P<aux>'ve been|'ve| have been| have|'re| are| were"
                 rf"| had)?(?P<rest>{_ADV} [a-z]+\b.*)$")
_WE_AUX = {"'re": "'m", " are": " am", " were": " was"}
_TOGETHER = re.compile(r"\b(?:we|us|our|ours|each other|one another|together|team|both"
                       r"|got each)\b|\b(?:had|have) (?:a|an|the|such a|so much) (?:\w+ )?"
                       r"(?:time|blast|fun|turnout)\b", re.I)
# "My mother also passed away last year": someone of the speaker's, in the speaker's name
_MINE = re.compile(r"^[Mm]y (?P<who>(?:\w+ ){0,2}?(?:mom|mother|dad|father|parents|brother|sister"
                   r"|son|daughter|kids?|children|husband|wife|partner|boyfriend|girlfriend|bf|gf"
                   r"|family|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|dogs?|cats?"
                   r"|puppy|pups?|pets?|team|band|book|project|business|shop|store|car|house|garden"
                   r"|painting|game|website|app|channel|blog|novel|album|song|apartment|flat|place"
                   r"|home|room|baby))"  # not friends, the boss: their lives are not the speaker's
                   r"(?P<rest> (?:just |also |finally |recently |all |both )*(?:[a-z]+ed|got|had"
                   r"|has|won|made|took|went|came|began|became|gave|grew|ran|left|lost|sold|found"
                   r"|passed|is|are|was|were|loves?|enjoys?|started|joined)\b.*)$")


_THEIR_PLAN = re.compile(r"(?:is|are|was|were) (?:thinking|planning|considering|hoping|going to"
                         r"|about to|trying to)\b|(?:wants?|hopes?|plans?) to\b")


def _phrase(raw: str, at_least: int = 2) -> str | None:
    """What a statement's form leaves to say, in the third person: cut where the reader cuts,
    before a pronoun pointing back after "and", "this X" as "a X"; None if it names nothing."""
    rest = _indefinite(_undangled(_CUT.sub("", raw).strip(" ,.")).strip(" ,."))
    return third_person(rest) if _names_something(rest, at_least=at_least) else None


# "My plan for now is to expand my brand worldwide", "my dream is to open a bakery": an aim
_AIM = re.compile(r"^[Mm]y (?P<what>(?:(?:main|biggest|big|next|current|ultimate|long-term|new)"
                  r" )?(?:plan|goal|dream|aim|hope|mission))(?: (?:for now|right now|now|for"
                  r" (?:the|this|next) (?:year|month|summer))| these days)? (?:is|was) to"
                  r" (?P<rest>.+)$")


def _aim(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "My plan for now is to expand my brand" -> "The user's plan is to expand their
    brand." """
    if not (m := _AIM.match(clause)) or (said := _phrase(m["rest"])) is None:
        return None
    return SelfStatement(Kind.EVENT, "plans", f"to {said}"[:MAX_OBJECT],
                         _dated(f"The user's {m['what']} is to {said}.", when))


# "Finding that balance has been tough": what the speaker found hard (not "Losing someone is
# hard", said to console)
_HARD = re.compile(r"^(?P<what>[A-Za-z]\w+ing\b[^,]+?) (?:has been|was"
                   r"|has been really|has been so|was so|was really) (?P<how>tough|hard|challenging"
                   r"|difficult|stressful|overwhelming|rewarding|fulfilling|therapeutic|calming"
                   r"|relaxing)\b")


def _hard(clause: str, when: datetime | None) -> SelfStatement | None:
    """ "Finding balance has been challenging" -> "The user finds finding balance
    challenging." """
    if not (m := _HARD.match(clause)) or (said := _phrase(m["what"])) is None:
        return None
    said = said[0].lower() + said[1:]
    return SelfStatement(Kind.FACT, "finds", f"{said} {m['how']}"[:MAX_OBJECT],
                         _dated(f"The user finds {said} {m['how']}.", when))


# "meet Toby, my puppy", "That one is Max, my childhood dog", "Max is my mother's cat": a pet
# shown by its name
_MEET = re.compile(r"^(?:(?:meet|this is|that's|that is|that one is|here's|here is) (?P<name>"
                   r"(?-i:[A-Z])\w+)\s*[,–—-]+\s*|(?!(?:it|this|that|he|she|they|there|here|what|who|which"
                   r"|one|mine)\b)(?P<named>(?-i:[A-Z])\w+) is )"
                   r"my (?P<what>(?:\w+(?:'s)? )?(?:puppy|pup|dog|cat|kitten|kitty|snake"
                   r"|bird|parrot|hamster|horse|pony|rabbit|bunny|fish|turtle|tortoise|lizard"
                   r"|gecko))\b", re.I)


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


# a state that is news: "my partner is pregnant", "my sister got engaged"
_NEWS_STATE = re.compile(r"(?:is|are|was|were|got|just got)(?: (?:finally|now|officially))?"
                         r" (?:pregnant|engaged|married|divorced|retired|sick|ill|injured"
                         r"|hospitali[sz]ed|expecting|graduating|graduated)")


# how one is, not what one did: "doing better", "getting anxious", "working on something"
_NO_NEWS = re.compile(r"(?:doing|feeling|getting|going) (?:so |really |pretty |much |a lot )*"
                      r"(?:well|better|okay|ok|fine|good|great|alright|their best|my best|closer"
                      r"|anxious"
                      r"|motivated|nervous|excited|worried|through)\b"
                      r"|(?:working on|making|doing|trying) (?:something|some stuff|things"
                      r"|strides)\b"
                      r"|\w+ (?:something|someone|anything)\b(?! (?:called|named|like))", re.I)


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
