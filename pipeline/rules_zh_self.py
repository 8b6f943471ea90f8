"""What a person tells about themselves in Chinese chat: what they did and when, and what they
do regularly ("上周六我去杭州跑了半马", "我上个月学会了游泳", "我周末一般去爬山"). The Chinese side
of :mod:`memq.pipeline.rules_en`'s reader, and like it the last resort, after the fixed rules and
the slot reader (:mod:`memq.pipeline.rules_zh`). Times relative to when it was said are made
absolute (:func:`resolve_dates`: 昨天, 上周六, 上个月, 去年, 三天前, 下个月 …), as LoCoMo's English
observations have them.

A clause qualifies when the speaker is its subject (我, 我们, 我和老公 …; or none, as chat
drops it, when a time opens the clause and a verb of doing follows), and its verb phrase is
done (…了 / …过, with something named) or regular (每天, 每周, 平时, 一般 …). Not read: someone
else's doing (我老公…, 我同事…), a negation (没去), a wish or a plan (好想…, 打算…: the fixed
rules take plans), a feeling (累死了, 笑死了), what points back only (买了它), hearsay (听说…).
Pure: a clause and the time it was said in, a statement out.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ..schemas import Kind
from .rules_en import SelfStatement

_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
           "九": 9, "十": 10, "几": 3, "半": 0}
_WEEKDAYS = "一二三四五六日天"  # 周一 … 周日 / 周天
_N = r"[一二两三四五六七八九十\d]{1,3}"
_TIME = re.compile(
    r"(?P<day>大前天|前天|昨天晚上|昨天|昨晚|昨儿个?|今天早上|今天|今早|今晚|今儿个?|明天|后天)"
    rf"|(?P<week_day>(?P<wk>上上|上|这|本|下)(?:个)?(?:周|星期|礼拜)(?P<wd>[{_WEEKDAYS}]))"
    r"|(?P<weekend>(?P<wk2>上|这|本|下)(?:个)?周末)"
    r"|(?P<week>(?P<wk3>上|这|本|下)(?:个)?(?:周|星期|礼拜))(?![一二三四五六日天末])"
    r"|(?P<month>(?P<mo>上上|上|这|本|下)(?:个)?月)"
    r"|(?P<year>去年|前年|今年|明年)"
    rf"|(?P<ago>(?P<n>{_N})(?P<unit>天|周|个星期|个月|年)(?:前|之前))"
    r"|(?P<date>(?:(?P<y>20\d\d)年)?(?P<m>1[0-2]|0?[1-9])月(?P<d>3[01]|[12]\d|0?[1-9])[号日])"
    r"|(?P<bare_weekend>(?<![上这本下个])周末)")


_DAYS_BACK = {"大前天": 3, "前天": 2, "明天": -1, "后天": -2}


def _number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):  # 十, 十二
        return 10 + (_DIGITS.get(text[1:], 0) if len(text) > 1 else 0)
    if "十" in text:  # 二十, 二十三
        tens, _, ones = text.partition("十")
        return _DIGITS.get(tens, 0) * 10 + (_DIGITS.get(ones, 0) if ones else 0)
    return _DIGITS.get(text, 0)


def _day(d: datetime) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def _month(year: int, month: int) -> str:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return f"{year}年{month}月"


def _absolute(m: re.Match[str], when: datetime) -> str:
    """One time phrase, said at ``when``, in absolute words ("2026年2月28日", "2026年2月")."""
    monday = when - timedelta(days=when.weekday())
    step = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}
    if m["day"]:
        back = 1 if m["day"].startswith("昨") else _DAYS_BACK.get(m["day"], 0)  # 今…: 0
        return _day(when - timedelta(days=back))
    if m["week_day"]:
        wd = 6 if m["wd"] in "日天" else _WEEKDAYS.index(m["wd"])
        return _day(monday + timedelta(weeks=step[m["wk"]], days=wd))
    if m["weekend"]:
        return _day(monday + timedelta(weeks=step[m["wk2"]], days=5))
    if m["week"]:
        return f"{_day(monday + timedelta(weeks=step[m['wk3']]))}那周"
    if m["month"]:
        return _month(when.year, when.month + step[m["mo"]])
    if m["year"]:
        return f"{when.year + {'去年': -1, '前年': -2, '今年': 0, '明年': 1}[m['year']]}年"
    if m["ago"]:
        n = _number(m["n"])
        if m["unit"] == "天":
            return _day(when - timedelta(days=n))
        if m["unit"] in ("周", "个星期"):
            return f"{_day(monday - timedelta(weeks=n))}那周"
        if m["unit"] == "个月":
            return _month(when.year, when.month - n)
        return f"{when.year - n}年"
    if m["date"]:
        year = int(m["y"]) if m["y"] else when.year
        return f"{year}年{int(m['m'])}月{int(m['d'])}日"
    # a bare 周末 of something done: the last one (said on a Sunday: the day before)
    saturday = monday + timedelta(days=5)
    return _day(saturday if saturday <= when else saturday - timedelta(weeks=1))


def resolve_dates(text: str, when: datetime) -> str:
    """Times relative to when it was said, made absolute: "上周六" said on Wednesday 11 March
    2026 is 2026年3月7日, "上个月" 2026年2月, "去年" 2025年, "三天前" 2026年3月8日, "下个月"
    2026年4月;
    a bare "周末" is left (every weekend, or the last one: :func:`read` knows which)."""
    return _TIME.sub(lambda m: m[0] if m["bare_weekend"] else _absolute(m, when), text)


_OTHERS = (r"老公|老婆|男朋友|女朋友|男友|女友|对象|爸爸?|妈妈?|爹|娘|爸妈|父母|儿子|女儿"
           r"|孩子|娃|宝宝|哥哥?|姐姐?|弟弟?|妹妹?|爷爷|奶奶|外公|外婆|姥姥|姥爷|家人|一家人?|全家|朋友|闺蜜|兄弟"
           r"|同事|同学|室友|舍友|邻居|老板|领导|老师|导师|师傅|[\u4e00-\u9fff]{1,2}(?:哥|姐)")
_SUBJECT = re.compile(
    rf"^(?:(?P<we>我们(?:一家|全家|家|俩|几个)?|咱们|俺们)|(?P<i>我|俺|本人)"
    rf"(?:(?:和|跟|带着?|陪着?)(?P<with>(?:我的?)?(?:{_OTHERS})(?:[和跟、](?:{_OTHERS}))*))?)"
    # "我那台帕萨特…", "我们这边…", "我家猫…": not the speaker's doing
    rf"(?!的|们|这|那|家(?!人)|(?:{_OTHERS}))"
    rf"|^(?:和|跟)(?P<with_only>(?:{_OTHERS})(?:[和跟、](?:{_OTHERS}))*)(?=一起|一块儿?)?")
_ADVERBS = re.compile(r"^(?:已经|终于|总算|刚刚?|才|也|还|又|都|一起|一块儿?|特意|专门|顺便|第一次|"
                      r"居然|竟然|就|先)*")
_NOT = re.compile(r"^(?:没有?|不|别|未|并没|从没|从来没)")
# a plan said as one ("我准备明年考公", "明天要去面试一家外企": a time to come, then 要)
_PLAN = re.compile(r"^(?:打算|准备|计划|决定|想好了?要)(?:要|去)?"
                   r"|^(?:要|得)(?=去|回|搬|参加|考|见|办|带)")
_WISH = re.compile(r"^(?:好想|真想|想|希望|要是|如果|打算|准备|计划|要|会|得|应该|可能|估计|差点)")
_DOING = re.compile(r"^(?:去|在|把|参加|买|看|学|报|跑|爬|打|逛|吃|做|办|拿|考|搬|换|带|陪|约|见|拍"
                    r"|练|玩|听|开始|完成|入手|养|订|剪|种|烤|煮|写|画|弹|唱|游|骑|滑|钓|追|刷|录|租|装)")
_HABIT = re.compile(r"^(?:每天|每周|每个?星期|每个?月|每晚|每早|每年|平时|平常|经常|常常|一般|通常"
                    r"|天天|周末|每个?周末|一有空就|有空就)+")
_OFTEN = re.compile(r"^(?:都|一般|通常|经常|常常?|总是?|基本上?|会|都会|也会|一般都)")
_DONE = re.compile(r"[\u4e00-\u9fffA-Za-z\d][了过]")
_FEELING = re.compile(r"^(?:(?:快|都|真的|简直|要)?(?:累|困|忙|饿|烦|开心|高兴|难受|无语|崩溃"
                      r"|笑|哭|气|疯|醉|懵|服|晕|乐|爽|热|冷|惨|绝|麻)(?:死|坏|炸|哭|惨|疯|麻|透|晕)?了)"
                      r"|^(?:觉得|感觉|发现|知道|听说|以为|记得|忘了|明白|懂了|意识到|在想)")
_POINTS_BACK = re.compile(r"[了过](?:它们?|他们?|她们?|这个|那个|这些|那些|这|那)"
                          r"[啊呀吧啦哈～~！!。]*$")
_CUT = re.compile(r"(?:，|,|；|;|但是|但|不过|因为|所以|结果|然后|感觉|觉得|真的是|简直"
                  r"|太[\u4e00-\u9fff]{1,3}了|超[\u4e00-\u9fff]{1,3}的).*$")
_TRAILING = re.compile(r"[啦呢吧哦啊呀嘛哈～~！!。…\s]+$")  # 了 stays: it says done
MAX_PHRASE = 30  # characters of the verb phrase kept: a memory, not the message


def _times(text: str) -> tuple[re.Match[str] | None, str, str]:
    """The clause's time (when it opens the clause or follows the speaker), a habit's time
    ("周末我一般…", "平时周末我都会…": every weekend, no date), and the clause without them."""
    time = _TIME.search(text)
    head = text[:time.start()].strip(" ，,") if time else ""
    if time and head and not _SUBJECT.fullmatch(head):
        time = None  # a time inside the phrase: read it in place
    often = ""
    if time is not None:
        text = (text[:time.start()] + text[time.end():]).strip(" ，,")
        if time["bare_weekend"] and _OFTEN.match(text[len(head):].lstrip("我")):
            often, time = time[0], None
        else:
            text = re.sub(r"^那(?:天|会儿?)[，,]?", "", text)  # "5月3号那天我们…"
    habit_first = _HABIT.match(text)  # the habit before the speaker
    if habit_first and _SUBJECT.match(text[habit_first.end():]):
        often, text = often + habit_first[0], text[habit_first.end():]
    return time, often, text


def _speaker(text: str, dated: bool) -> tuple[str, str | None] | None:
    """What the speaker did (the clause after its subject) and with whom; a clause without
    the speaker only when a time opened it and a verb of doing follows ("昨天去看了演唱会")."""
    subject = _SUBJECT.match(text)
    if subject is not None and not subject["with_only"]:
        return text[subject.end():], subject["with"]
    rest = text[subject.end():] if subject else text
    if not dated or not (_DOING.match(done := _ADVERBS.sub("", rest)) or _PLAN.match(done)):
        return None
    return rest, subject["with_only"] if subject else None


def _phrase(rest: str) -> tuple[str, bool] | None:
    """The verb phrase kept and whether it is a habit; None when it says nothing done or
    regular (a negation, wish, feeling, a pronoun only)."""
    if not rest or _NOT.match(rest) or _WISH.match(rest) or _FEELING.match(rest):
        return None
    phrase = _TRAILING.sub("", _CUT.sub("", rest)).strip()
    habit = _HABIT.match(phrase)
    if habit:
        doing = phrase[habit.end():].lstrip("都也还会")
        if len(doing) < 2 or _NOT.match(doing) or _FEELING.match(doing):
            return None
    elif not _DONE.search(phrase) or _POINTS_BACK.search(phrase):
        return None
    if not 3 <= len(phrase) <= MAX_PHRASE or "你" in phrase:
        return None
    return phrase, bool(habit)


def _plan(rest: str, time: re.Match[str] | None, when: datetime | None
          ) -> SelfStatement | None:
    """A plan: 打算, 准备, 计划 … then what, or 要 after a time to come ("明天要去面试"); its time
    made absolute."""
    said = _PLAN.match(rest)
    if said is None or (said[0].startswith(("要", "得")) and (
            time is None or not (time["day"] in ("明天", "后天") or "下" in time[0]))):
        return None
    what = _TRAILING.sub("", _CUT.sub("", rest[said.end():])).strip()
    if not 2 <= len(what) <= MAX_PHRASE or _NOT.match(what) or "你" in what:
        return None
    what = what.replace("我的", "用户的").replace("我", "用户")
    if when is not None:
        what = resolve_dates(what, when)
    at = "" if time is None else _absolute(time, when) if when is not None else time[0]
    return SelfStatement(kind=Kind.FACT, predicate="plans", object=what,
                         content=f"用户计划{at}{what}。")


def read(clause: str, when: datetime | None = None) -> SelfStatement | None:
    """What the speaker says they did or do regularly, in the third person ("用户…": the rules
    put the speaker's name in), with its time made absolute from ``when``; None for anything
    else."""
    text = re.sub(r"^(?:哈哈+|嗯+|诶|哎呀?|话说|对了|说起来|其实|然后|而且|结果)[，,]?\s*", "",
                  clause.strip())
    time, often, text = _times(text)
    if (said_by := _speaker(text, time is not None)) is None:
        return None
    rest, with_ = said_by
    rest = _ADVERBS.sub("", rest.strip(" ，,"))
    if not often and (plan := _plan(rest, time, when)) is not None:
        return plan
    read_ = _phrase(often + rest.replace("啦", "了", 1))
    if read_ is None:
        return None
    phrase, habit = read_
    said = phrase.replace("我们", "用户").replace("我的", "用户的").replace("我", "用户")
    if when is not None:
        said = resolve_dates(said, when)
    who = "用户" + (f"和{with_.removeprefix('我的').removeprefix('我')}" if with_ else "")
    at = "" if time is None else time[0] if habit or when is None else (
        f"于{_absolute(time, when)}")  # a habit's 周末 is every weekend
    kind, predicate = (Kind.FACT, "does") if habit else (Kind.EVENT, "did")
    return SelfStatement(kind=kind, predicate=predicate, object=said.rstrip("了"),
                         content=f"{who}{at}{said}。")
