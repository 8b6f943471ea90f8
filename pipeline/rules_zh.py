"""Chinese statements of a single fact's value and of its change, for the rules extractor.

Chinese states a change in many shapes that a list of fixed sentences cannot cover: the time
anywhere ("上个月我们已经把…", "生产环境上周终于…"), the topic first ("缓存这块我们不用X了"), a
把-construction whose object is the old value ("把X换成了Y") or only the topic ("把生产环境全部
迁到Y"), the old value before or after ("从X迁移到Y", "以前X，现在Y", "X去年就出手了，现在开Y").
So a sentence is read in three steps instead:

1. **what it is about** (:data:`_SLOTS`): the first slot whose cue it holds (moving home before
   work: "因为工作调动去了武汉，现在住在…" is about where one lives);
2. **the new value**: what follows a verb of change (迁到, 换成, 升级到, 跳槽去, 搬到, …) or, in a
   plain statement, the slot's own verb (跑在, 用的是, 在…上班, 住在, 开的是, …);
3. **the old value**: 从X…, 把X换成…, 不再用X, X不用了, 卖掉X, 以前X, 离开X.

It reads only sentences whose subject is the speaker (or their team): a colleague's move,
plans, questions and conditions are not changes (:data:`_NOT_DONE`). Pure: text in, values
out; :mod:`memq.pipeline.rules` makes the memories. The slots, verbs and patterns are data, in
:mod:`memq.pipeline.rules_zh_lexicon`; a value is cleaned in :mod:`memq.pipeline.rules_zh_values`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..schemas import Kind
from . import places, tools
from .rules_zh_lexicon import (
    _A_TEAM,
    _APPOSITIVE,
    _BRANDS,
    _CHANGE,
    _CHANGED,
    _DIALECT,
    _DISTRICT,
    _DRIVES,
    _EMOJI,
    _GIVEN,
    _GIVEN_UP,
    _GONE_TO,
    _GOT,
    _INSTITUTION,
    _JOB_CUES,
    _LEFT_CITY,
    _LEFT_JOB,
    _LIVES,
    _MOVED_HERE,
    _NAMED_NEXT,
    _NOT_DONE,
    _NOT_DONE_IF,
    _NOT_YET,
    _NOW_DONE,
    _OLD,
    _ONE,
    _OTHER,
    _PAIRS,
    _PLAIN,
    _PLANNED,
    _RETIRED,
    _RETIRING,
    _ROLE,
    _ROLE_WORD,
    _SCHOOL,
    _SLOTS,
    _STACK_NOT,
    _STACK_SAID,
    _STILL,
    _STUDYING,
    _TEAM,
    _TEST_ENV,
    _TIMES,
    _TO_PLACE_OF_WORK,
    _TO_WORK,
    _WORK,
    _Slot,
)
from .rules_zh_values import _clean, _state, _valid


@dataclass(frozen=True)
class Statement:
    """One fact's value ("uses", "PostgreSQL 16") and, for a change, the value it ends."""

    predicate: str
    value: str
    old: str | None
    kind: Kind
    template: str  # the memory's sentence; {obj} is the value
    change: bool = False  # a statement of change, not of a value only


def _slot_of(text: str, *, known: bool = True) -> _Slot | None:
    """The first slot whose cue the sentence holds; a thing moved is not a home moved
    ("把所有静态资源搬到…"); else, when it names a well-known product ("前两天终于换了华为
    Mate 60"), what the user uses."""
    if re.search(r"升职|晋升|升成|升任|升为|提拔|提为|被提成|现任|任命|当上|职位|头衔|title"
                 r"|转正(?=成|为)"
                 rf"|熬(?:成|到)[^，,。]*{_ROLE_WORD}"
                 rf"|转岗(?:[^，,。]*[，,])?[^，,。]*(?:干|当|做|成)[^，,。]*{_ROLE_WORD}"
                 rf"|调成[^，,。]*{_ROLE_WORD}",
                 text, re.I):
        return _ROLE
    if _STUDYING.search(text):  # "转学去了多伦多大学": a school, not a workplace
        return _SCHOOL
    if _TO_PLACE_OF_WORK.search(text):  # "调到育才中学教初一了": a workplace, not a team
        return _WORK
    found = next((s for s in _SLOTS if s.cue.search(text) and not (
        s.predicate == "lives_in" and re.search(r"把(?!家)[^，,]{1,12}?搬", text))), None)
    if found is not None and found.predicate == "lives_in" and (
            left := _LEFT_JOB.search(text)) and (where := re.search(
                r"base|坐标|人在|常驻|落地", text, re.I)) and left.start() < where.start():
        found = _WORK  # "已经不在腾讯了，去了米哈游，base 上海": the job changed first
    named = {job for _, _, job in tools.mentioned(text)} if known else set()
    if found is None and named:
        return _SLOTS[-1]
    if found is _SLOTS[0] and named and named <= tools.NOT_INFRA:  # "代码托管切到 GitHub"
        return _SLOTS[-1]
    if found is not None and found.predicate == "drives" and named and not re.search(
            rf"开的是|开着|开(?:一辆|辆|一台)|(?:提|整|买|换)了辆|{_BRANDS}", text):
        return _SLOTS[-1]  # "开车导航我习惯用高德地图"
    return found


def _not_meant(text: str, verb: re.Match[str] | None, is_change: bool) -> bool:
    """Someone else's change, or a change only planned, asked or supposed. What follows the
    clause of the new value ("…，主要是想用它的数据结构") is a reason, not a condition."""
    said, clause, own = text, text, text
    if verb is not None:
        stop = re.search(r"[，,。；;]", text[verb.end():])
        said = text[: verb.end() + (stop.start() if stop else len(text))]
        clause = re.split(r"[，,]", text[: verb.start()])[-1]
        own = re.split(r"[，,]", said)[-1]
    if is_change and (_NOT_DONE.search(said) or _NOT_DONE_IF.search(said)
                      or _NOT_YET.search(own)):
        return True
    if is_change and _TEST_ENV.search(clause if verb is not None else text):
        return True  # "测试环境上周刚升到 Debian 12，生产先不动"
    first = verb is None or not re.search(r"[，,]", text[: verb.start()])
    return bool(_OTHER.match(clause)) or bool(  # the sentence's subject, when the verb is in
        first and _OTHER.match(text) and not re.match(rf"^{_TIMES}被", text))  # its clause


def planned(sentence: str) -> bool:
    """Whether a sentence holds a change only as a plan or a condition ("要是油价再涨，我就把哈弗
    换成电车算了"): a clause of it read alone states no change."""
    return bool(_PLANNED.search(sentence))


def _plain(slot: _Slot, text: str, *, beside_change: bool = False) -> list[Statement]:
    """Plain statements of values, one per slot, each clause read for its own slot (two for
    work and role: "我在X做Y"); a clause that plans, asks or hears about someone else states
    nothing, nor does one without a subject after it ("我同事在腾讯，做后端"). Beside a change
    not meant, a clause that only restates ("生产还是在 ACK 上不动") is not read."""
    found: list[Statement] = []
    other = False
    pending: _Slot | None = None  # a slot its clause named with no value: "我在一家外企，SAP"
    previous = ""  # that clause
    for part in _joined([p.strip() for p in re.split(r"[，,]", text)]):
        if pending is not None and not other and (name := _appositive(
                part, pending, after_one=_ONE.search(previous) is not None)):
            if not any(f.predicate == pending.predicate for f in found):
                found.append(Statement(pending.predicate, name, None, pending.kind,
                                       pending.template))
            pending = None
            continue
        pending = None
        if _OTHER.match(part):
            other = True
            continue
        if re.match(rf"^{_TIMES}(?:我|我们|咱)", part):
            other = False
        if other or _NOT_DONE.search(part) or _NOT_DONE_IF.search(part) or _TEST_ENV.search(
                part) or (beside_change and _STILL.search(part)):
            continue
        own = _slot_of(part, known=False) or slot
        if own is _SLOTS[0] and slot is _SLOTS[-1]:
            own = slot  # "线上数据库用的是 MySQL": a tool production uses, not runs on
        if own is _DRIVES and slot is _SLOTS[-1] and tools.mentioned(part):
            own = slot  # "开车导航我习惯用高德地图": the app, not the car
        for s in next((pair for pair in _PAIRS if own in pair), (own,)):
            if s is not _SLOTS[-1] and any(f.predicate == s.predicate for f in found):
                continue  # one value a slot; tools are many ("后端Java，前端Vue")
            about = s.cue.search(part) or (s is _SLOTS[-1] and (
                tools.mentioned(part) or re.search(_JOB_CUES, part))) or (
                s is _WORK and _TO_PLACE_OF_WORK.search(part)) or (
                s is _LIVES and places.mentioned(part))  # "我现在在北京，海淀这边租房"
            values = _values(s, part, about=bool(about), beside_change=beside_change)
            found.extend(Statement(t.predicate, v, None, t.kind, t.template) for v in values
                         if v not in {f.value for f in found}
                         for t in [_TEAM if s is _WORK and _A_TEAM.search(v) else s])
            if about and not values and s.predicate in _NAMED_NEXT:
                pending, previous = s, part
    return found


def _values(slot: _Slot, part: str, *, about: bool, beside_change: bool) -> list[str]:
    """What a clause about the slot states as its value; for tools, else the tools it names
    (not beside a change, whose clauses name old and new)."""
    if about and (value := _state(slot, part)):
        return [value]
    return _stack(part) if slot is _SLOTS[-1] and not beside_change else []


def _stack(part: str) -> list[str]:
    """The well-known tools a plain clause names as what is used, each once (a tool's own
    statement: "Python + Django" is a language and a framework, each ended by its own
    successor)."""
    named = tools.mentioned(part)
    if not named or not _STACK_SAID.search(part) or _STACK_NOT.search(part):
        return []
    values = dict.fromkeys(_clean(name, "uses") for _, name, _ in named)
    return [v for v in values if _valid(v) and not put_away(v, part)]


def _appositive(part: str, slot: _Slot, *, after_one: bool = False) -> str | None:
    """The name a clause gives, alone, to what the clause before it left unnamed: said with
    叫, a parent ("中石化下面的一个研究院": 中石化), or a name by its look (Latin letters or
    digits, an institution's ending, a well-known product), or any short name after "一家…"
    (``after_one``: "去了一家私立医院，和睦家"). A clause that says more is not one
    ("做工业自动化的", "大四了")."""
    m = _APPOSITIVE.match(part)
    if m is None:
        return None
    value = (m["called"] or m["parent"] or m["name"]).strip()
    if not m["called"] and not m["parent"] and not (
            (after_one and len(value) <= 8)
            or re.search(r"[A-Za-z0-9]", value) or _INSTITUTION.search(value)
            or (slot.predicate == "uses" and tools.mentioned(value))
            or (slot.predicate == "drives" and re.match(_BRANDS, value))):
        return None
    if m["name"] and (re.search(r"[了吗呢吧啊的]$|^(?:做|当|干|在|是|有|去|来|用|跑|搞|写|带|教|住"
                                r"|开(?!瑞)|租|买|提|入|换|主要|平时|目前|现在|天天|每天|一直|还"
                                r"|也|都|就)", value)
                      # "这两天在用iPhone 15", "vivo X100的长焦是真的顶" say more
                      or re.search(r"用(?!友)|的[\u4e00-\u9fff]{2}", value)
                      or _slot_of(value, known=False) not in (None, slot)):
        return None
    value = _clean(value, slot.predicate)
    return value if _valid(value) else None


def _joined(parts: list[str]) -> list[str]:
    """Clauses with "在X，做Y" read as one ("本人目前在华为终端BG，做测试的": where one works and
    what one does there)."""
    out: list[str] = []
    for part in parts:
        if out and re.search(r"在[^，,。在]{2,16}(?<![部组队门心科室])$", out[-1]) and (
                not re.search(r"(?:上班|工作|做|当|干|读|住)", out[-1])) and re.match(
                r"(?:做|当|干(?!了)|负责|教)", part):
            out[-1] += part
        else:
            out.append(part)
    return out


def put_away(name: str, sentence: str) -> bool:
    """Whether the sentence names the tool as put away, beside the one used now ("都用VS Code
    了，Sublime基本吃灰": Sublime): then the one used now replaces it."""
    n = re.escape(name)
    return re.search(rf"(?:{_RETIRING}){n}|{n}[^，,。；;]{{0,10}}?(?:{_RETIRED})",
                     sentence, re.I) is not None


def _work_and_role(rest: str) -> list[Statement]:
    """After a verb of joining ("去了", "跳槽到"), the employer and the role it names: "网易，
    title是高级产品经理", "网易当产品经理"; nothing when what follows is the role itself."""
    first, _, after = re.split(r"[，,]", rest, maxsplit=1)[0], None, rest
    split = re.match(r"(?P<work>[^，,。]{2,16}?)(?:当|做|任|担任)(?P<role>[^，,。]+)$", first)
    work = _clean(split["work"] if split else first, _WORK.predicate)
    role = (_clean(split["role"], _ROLE.predicate) if split else next(
        (v for c in re.split(r"[，,]", after) if (v := _state(_ROLE, c))), None))
    if not _valid(work) or re.search(_ROLE_WORD, work) or not role or not _valid(role):
        return []
    return [Statement(_WORK.predicate, work, None, _WORK.kind, _WORK.template, change=True),
            Statement(_ROLE.predicate, role, None, _ROLE.kind, _ROLE.template, change=True)]


def _new_value(slot: _Slot, text: str, verb: re.Match[str] | None) -> tuple[str | None, int]:
    """The value a change ends on and where its statement starts: after the verb of change,
    else after "现在…" ("以前X，现在Y")."""
    new, end = (None, len(text)) if verb is None else (
        _clean(text[verb.end():], slot.predicate), verb.end())
    now = re.search(r"现在(?:全部|都|已经|改|还是|天天|每天)*(?:手上|手里|手头)?|^已经(?=是|用)",
                    text)
    if not _valid(new) and now is not None:  # clause by clause: "现在人在成都了，房子租在高新区"
        new = next((v for c in re.split(r"[，,]", text[now.end():]) if (v := _state(slot, c))),
                   None) or _clean(text[now.end():], slot.predicate)
        end = now.start()
    elif slot is _WORK and verb is not None and (here := re.search(
            r"(?:现在|目前|如今)(?:已经)?在(?P<obj>[^，,。]{2,16}?)(?:上班|工作|干|做|当)",
            text[:verb.start()])) and _valid(v := _clean(here["obj"], slot.predicate)):
        # "…离职了，现在在美团上班，上周又调到了到店事业部": where one works now, said first
        new, end = v, here.start()
    return new, end


def _old_value(slot: _Slot, text: str, old: str | None, new: str,
               verb: re.Match[str] | None) -> str | None:
    value = _clean(old, slot.predicate) if old else None
    if value is not None and (not _valid(value) or (
            slot is _ROLE and not re.search(_ROLE_WORD, value))):
        value = None  # "不在那儿了": no value; "不用值大夜了": no title
    if value is not None and (not value or value.casefold() == new.casefold() or re.search(
            r"生产环境|数据库|服务器|线上|公司|这块|那套|云服务|^(?:旧|老)(?:的|$)", value)):
        value = None  # the 把-object was the topic, not the old value
    if value is not None and any(j.cue.fullmatch(value) for j in tools.jobs()):
        value = None  # "把输入法换成微信输入法": the job named
    if value is None and slot.predicate == "uses" and verb is not None and re.match(
            r"升", verb.group()) and (product := re.match(r"(.+?)\s*v?\d[\d.]*$", new)):
        value = product.group(1)  # an upgrade ends the older version: "PostgreSQL" 12
    return value


def _new_elsewhere(slot: _Slot, text: str, old: str | None) -> str | None:
    """A change's new value when its verb names none: got ("小米SU7到手了"), named after
    "一家…" ("去了一家券商做投行，中信证券"), stated plainly beside the old one ("新车是理想
    L7，雅阁已经置换掉了"), the subject of a later clause ("不在快手了，拼多多这边节奏太快"),
    or the last tool named that is not the old one ("换机了，vivo X100的长焦是真的顶")."""
    new = None
    if by := re.search(r"被(?!我)(?P<obj>[^，,。]{2,20}?)(?:替掉|替换掉?|换掉|取代|干掉)", text):
        new = _clean(by["obj"], slot.predicate)
    if not _valid(new) and (got := _GOT.search(text)):
        new = _clean(got["obj"] or got["pit"] or got["by"], slot.predicate)
    if not _valid(new) and (after := re.search(
            r"(?:去了|到了|进了|提车了|到手了|换了|换车了|换机了|[^，,。]{0,12}?(?:一家|一所|一个|一台|一辆))"
            r"[^，,。]*[，,](?P<next>[^，,。]+)", text)):
        new = _appositive(after["next"], slot, after_one=_ONE.search(after.group()) is not None
                          ) or new
    first, *later = re.split(r"[，,]", text)
    clauses = [c for c in [first, *later] if not (old and old in c)]
    if not _valid(new):
        new = next((v for c in clauses if (v := _state(slot, c))), None)
    if not _valid(new) and slot in (_WORK, _TEAM):
        new = next((v for c in later if not (old and old in c) and (
            here := re.match(r"^(?:现在)?(?:在)?(?P<obj>[^，,。]{2,8}?)(?:这边|那边)", c))
            and _valid(v := _clean(here["obj"], slot.predicate))), None)
    if not _valid(new) and slot is _SLOTS[-1]:
        new = next((n for _, n, _ in reversed(tools.mentioned(text))
                    if not (old and (n in old or old in n)) and not put_away(n, text)), None)
    return new


def read(sentence: str, context: str | None = None) -> list[Statement]:
    """The slot values a Chinese sentence (or a clause of ``context``, its sentence) states, or
    the change it states; empty when it states neither, states it of someone else, or only
    plans, asks or supposes it."""
    return _in_city(_read(sentence), context or sentence)


def _in_city(found: list[Statement], sentence: str) -> list[Statement]:
    """Where one lives, named down to its city: a district said beside the city ("成都这边挺好，
    住在高新区": 成都高新区), or a move to the city the sentence talks about ("成都的冬天好阴啊，
    搬过来一个月没见过太阳"). A city the sentence says was left ("从北京…") is not it."""
    named = [c for at, c in places.mentioned(sentence) if not _LEFT_CITY.search(sentence[:at])]
    if not named:
        return found
    if not found and _MOVED_HERE.search(sentence) and len(set(named)) == 1 and not (
            _OTHER.match(sentence) or planned(sentence)):
        return [Statement(_LIVES.predicate, named[0], None, _LIVES.kind, _LIVES.template,
                          change=True)]
    return [replace(st, value=f"{named[0]}{st.value}") if (
        st.predicate == "lives_in" and _DISTRICT.search(st.value)
        and not places.mentioned(st.value) and (not st.old or named[0] not in st.old))
        else st for st in found]


def _read(sentence: str) -> list[Statement]:
    text = _DIALECT.sub(lambda m: _PLAIN[m.group()], sentence.strip())
    text = _EMOJI.sub("，", text).strip("，")  # an emoji ends a clause: "…提车成功🎉 H6置换掉了"
    text = _GIVEN.sub("我", text)  # "儿子给我置换了一辆丰田卡罗拉": the car is the user's
    slot = _slot_of(text) if text else None
    if slot is None:
        return []
    # the verb of change: the first one followed by a value ("升级到 Vue 3 了，…也换成了 X";
    # "被调到了增长团队，风控那摊已经交接出去了")
    verbs = [m for m in re.finditer(_CHANGE, text)
             if _valid(_clean(text[m.end():], slot.predicate)) and not (
                 slot.predicate in ("drives", "uses") and _GONE_TO.fullmatch(m.group()))]
    # where production runs changes in the clause that names production ("把 .NET Framework
    # 升到 .NET 8，顺势把生产服务器全迁到 Debian 12 上了")
    verb = next((m for m in verbs if slot is _SLOTS[0] and slot.cue.search(
        re.split(r"[，,]", text[:m.start()])[-1])), verbs[0] if verbs else None)
    is_change = verb is not None or bool(_CHANGED.search(text)) or any(
        p.search(text) for p in _OLD) or bool(_NOW_DONE.search(text))
    if not is_change:
        return _plain(slot, text)
    # without a verb of change, the words that say one changed anchor what was meant
    # ("Memcached已经被Redis替掉了，主要是想要持久化": the reason after it is no wish)
    anchor = verb or next((m for m in (*(p.search(text) for p in _OLD), _CHANGED.search(text))
                           if m is not None), None)
    if _not_meant(text, anchor, is_change):
        # a change only planned leaves what is said plainly beside it ("…还在 IDC 机房，想上云")
        return [] if _OTHER.match(text) or _TEST_ENV.search(text) else _plain(
            slot, text, beside_change=True)
    new, end = _new_value(slot, text, verb)
    old = next((m["old"] for p in _OLD if (m := p.search(text[:end])) and _valid(
        _clean(m["old"], slot.predicate))), None) or next(
        (m["old"] for p in _GIVEN_UP if (m := p.search(text[end:]))), None)
    if not _valid(new):
        new = _new_elsewhere(slot, text, old)
    if new is None or not _valid(new):
        return []
    if slot is _ROLE and verb is not None and _TO_WORK.fullmatch(verb.group()) and (
            both := _work_and_role(text[verb.end():])):
        return both  # "去了网易，title是高级产品经理": the employer, then the role
    found = [Statement(slot.predicate, new, _old_value(slot, text, old, new, verb), slot.kind,
                       slot.template, change=True)]
    if slot is _WORK and (role := re.search(r"[，,](?:还是)?(?:做|当|担任)(?P<obj>[^，,。]+)",
                                            text[end:])):
        value = _clean(role["obj"], _ROLE.predicate)  # "我跳槽到腾讯了，做后端开发"
        if _valid(value) and _ROLE.cue.search("做" + value):
            found.append(Statement(_ROLE.predicate, value, None, _ROLE.kind, _ROLE.template,
                                   change=True))
    elif slot is _WORK and verb is not None and _TO_WORK.fullmatch(verb.group()) and (
            both := _work_and_role(text[verb.end():])) and re.search(_ROLE_WORD, both[1].value):
        found.append(both[1])  # "加入了字节做后端开发"
    return found
