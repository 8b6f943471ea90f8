"""Time expressions inside what people say, read from when they said it: "in January", "last
month", "two weeks ago", "as of friday", "back in the spring", "上个月", "一月份", "年初".

A change said with a time ("we relocated to Stockholm in January") took effect then, not when
it was said: the time sets the new value's valid time and is no part of the value. Pure: text
and the moment it was said in, a span of time out.

A span is [start, end). :func:`valid_from` turns it into the moment a change is taken to hold
from: the span's end, never later than when it was said. A coarse span bounds the change
(sometime in January), and its end is the one moment in it that no statement of the old value
made inside the same span can follow ("I live in Lyon", said on 15 January, must not outlive
"we moved to Stockholm in January").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_N = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
      "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2,
      "a couple": 2, "couple": 2, "few": 3}
_ZH_N = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
         "九": 9, "十": 10, "十一": 11, "十二": 12, "半": 0}
_UNIT = {"day": 1, "week": 7, "sprint": 14, "month": 30, "year": 365, "天": 1, "周": 7,
         "星期": 7, "礼拜": 7, "月": 30, "年": 365}
# a season's months in the northern hemisphere (where most of our users' words come from)
_SEASON = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12, "春": 3, "夏": 6,
           "秋": 9, "冬": 12}
_MON = r"(?P<month>" + "|".join(m for m in MONTHS) + r"|(?:jan|feb|mar|apr|jun|jul|aug|sep|sept" \
       r"|oct|nov|dec)\.?)"
_NUM = r"(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple(?: of)?)"
_EN = re.compile(
    r"\b(?:(?P<rel>yesterday|today|tonight|this morning|this afternoon|last night)"
    rf"|{_NUM} (?P<unit>day|week|sprint|month|year)s? ago"
    r"|(?P<which>last|this|past) (?P<period>week(?:end)?|month|year|semester|term|quarter"
    r"|spring|summer|fall|autumn|winter|" + "|".join(DAYS) + r")"
    rf"|(?:(?:back )?in|since|during|(?:early|late|mid)(?: in)?|as of|from) {_MON}"
    r"(?: (?P<year>\d{4}))?"
    r"|(?:(?:back )?in|since|during|over) (?:the )?(?P<season>spring|summer|fall|autumn|winter)"
    r"|(?:in|since|during) (?P<q>q[1-4])|(?:in|since) (?P<y>(?:19|20)\d{2})"
    r"|(?:as of|since|on|this past) (?P<day>" + "|".join(DAYS) + r")"
    r"|earlier this (?P<earlier>year|month)|next (?P<next>week|month|year))\b", re.IGNORECASE)
_ZH = re.compile(
    r"(?P<zrel>昨天|前天|今天|今早|昨晚)"
    r"|(?P<zn>[一两二三四五六七八九十半\d]+)个?(?P<zunit>天|周|星期|礼拜|月|年)(?:以)?前"
    r"|(?P<zwhich>上|这|本)(?:个)?(?P<zperiod>周末?|星期|礼拜|月|季度|学期)(?P<zday>[一二三四五六日天])?"
    r"|(?P<zyear>去年|今年|前年)(?:(?P<zpart>初|底|年初|年底|上半年|下半年)"
    r"|(?P<zym>[一二三四五六七八九十]+|\d{1,2})月份?|(?P<zys>[春夏秋冬])天)?"
    r"|(?P<zedge>年初|年底|年中|上半年|下半年)"
    r"|(?P<zm>十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])月份?(?![\d号日])"
    r"|(?P<zs>[春夏秋冬])天")


@dataclass(frozen=True)
class Span:
    text: str  # the words, as said
    start: datetime
    end: datetime

    def ahead(self, said_at: datetime) -> bool:
        """A span that starts after the moment it was said in: a plan, not a change."""
        return self.start > said_at


def _month_start(year: int, month: int, at: datetime) -> datetime:
    return at.replace(year=year, month=month, day=1, hour=0, minute=0, second=0,
                      microsecond=0)


def _months(at: datetime, year: int, month: int, count: int = 1) -> tuple[datetime, datetime]:
    start = _month_start(year, month, at)
    m = month - 1 + count
    return start, _month_start(year + m // 12, m % 12 + 1, at)


def _latest_month(at: datetime, month: int, count: int = 1) -> tuple[datetime, datetime]:
    """The most recent span of ``count`` months starting with ``month`` that began by ``at``."""
    year = at.year if month <= at.month else at.year - 1
    return _months(at, year, month, count)


def _day(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _en(m: re.Match[str], at: datetime) -> tuple[datetime, datetime] | None:
    g = {k: (v.lower() if v else v) for k, v in m.groupdict().items()}
    today = _day(at)
    if g["rel"]:
        back = 1 if g["rel"] in ("yesterday", "last night") else 0
        return today - timedelta(days=back), today - timedelta(days=back - 1)
    if g["unit"]:
        n = int(g["n"]) if g["n"].isdigit() else _N.get(g["n"], 1)
        point = today - timedelta(days=n * _UNIT[g["unit"]])
        return point, point + timedelta(days=1)
    if g["period"]:
        return _period(g["which"], g["period"], at)
    if g["month"]:
        month = _MONTH_ABBR[g["month"][:3]]
        if g["year"]:
            return _months(at, int(g["year"]), month)
        return _latest_month(at, month)
    if g["season"]:
        return _latest_month(at, _SEASON[g["season"]], 3)
    if g["q"]:
        return _latest_month(at, 3 * int(g["q"][1]) - 2, 3)
    if g["y"]:
        return _months(at, int(g["y"]), 1, 12)
    if g["day"]:
        back = (today.weekday() - DAYS.index(g["day"])) % 7 or 7
        return today - timedelta(days=back), today - timedelta(days=back - 1)
    if g["next"]:
        start, end = _period("this", g["next"], at)
        return end, end + (end - start)
    if g["earlier"] == "year":
        return _months(at, at.year, 1, 12)[0], at
    return _month_start(at.year, at.month, at), at


def _period(which: str, period: str, at: datetime) -> tuple[datetime, datetime]:
    today = _day(at)
    back = 0 if which == "this" else 1
    if period in DAYS:
        gap = (today.weekday() - DAYS.index(period)) % 7 or (7 if back else 0)
        return today - timedelta(days=gap), today - timedelta(days=gap - 1)
    if period in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday() + 7 * back)
        return monday, monday + timedelta(days=7)
    if period == "month":
        m = at.month - 1 - back
        return _months(at, at.year + m // 12, m % 12 + 1)
    if period == "year":
        return _months(at, at.year - back, 1, 12)
    if period in ("quarter",):
        q = (at.month - 1) // 3 - back
        return _months(at, at.year + q // 4, (q % 4) * 3 + 1, 3)
    if period in ("semester", "term"):
        return today - timedelta(days=120 * (back + 1)), today - timedelta(days=120 * back)
    start, end = _latest_month(at, _SEASON[period], 3)
    if back and end > today:
        start, end = _months(at, start.year - 1, start.month, 3)
    return start, end


def _zh_n(text: str) -> int:
    return int(text) if text.isdigit() else _ZH_N.get(text, 1)


def _zh(m: re.Match[str], at: datetime) -> tuple[datetime, datetime] | None:
    g = m.groupdict()
    today = _day(at)
    if g["zrel"]:
        back = {"昨天": 1, "前天": 2, "昨晚": 1}.get(g["zrel"], 0)
        return today - timedelta(days=back), today - timedelta(days=back - 1)
    if g["zunit"]:
        n = _zh_n(g["zn"]) or 0.5
        point = today - timedelta(days=int(n * _UNIT[g["zunit"]]))
        return point, point + timedelta(days=1)
    if g["zperiod"]:
        which = "last" if g["zwhich"] == "上" else "this"
        period = {"周": "week", "周末": "weekend", "星期": "week", "礼拜": "week", "月": "month",
                  "季度": "quarter", "学期": "semester"}[g["zperiod"]]
        if g["zday"] and period == "week":
            monday = today - timedelta(days=today.weekday() + (7 if which == "last" else 0))
            offset = 6 if g["zday"] in "日天" else "一二三四五六".index(g["zday"])
            return monday + timedelta(days=offset), monday + timedelta(days=offset + 1)
        return _period(which, period, at)
    if g["zyear"]:
        year = at.year - {"去年": 1, "今年": 0, "前年": 2}[g["zyear"]]
        if g["zym"]:
            return _months(at, year, _zh_n(g["zym"]))
        if g["zys"]:
            return _months(at, year, _SEASON[g["zys"]], 3)
        return _zh_part(g["zpart"], year, at) if g["zpart"] else _months(at, year, 1, 12)
    if g["zedge"]:
        return _zh_part(g["zedge"], at.year, at)
    if g["zm"]:
        return _latest_month(at, _zh_n(g["zm"]))
    return _latest_month(at, _SEASON[g["zs"]], 3)


def _zh_part(part: str, year: int, at: datetime) -> tuple[datetime, datetime]:
    first, count = {"初": (1, 2), "年初": (1, 2), "底": (11, 2), "年底": (11, 2),
                    "年中": (6, 2), "上半年": (1, 6), "下半年": (7, 6)}[part]
    return _months(at, year, first, count)


def find(text: str, said_at: datetime) -> Span | None:
    """The first time expression in ``text`` and its span, read from ``said_at``."""
    found = [(m.start(), m, _en) for m in _EN.finditer(text)]
    found += [(m.start(), m, _zh) for m in _ZH.finditer(text)]
    for _, m, read in sorted(found, key=lambda f: f[0]):
        span = read(m, said_at)
        if span is not None:
            return Span(m.group().strip(), span[0], span[1])
    return None


def valid_from(span: Span | None, said_at: datetime) -> datetime:
    """When a change said at ``said_at`` with ``span`` is taken to hold from (see the module
    docstring): the span's end, never later than when it was said."""
    if span is None:
        return said_at
    return min(said_at, span.end)


def without_time(value: str) -> str:
    """A value without a time said inside or after it ("Stockholm in January" -> "Stockholm")."""
    m = _EN.search(value)
    out = value[:m.start()] if m else value
    return out.strip(" ,.;:!?-–—") or value
