"""The value a span of a Chinese sentence names, for :mod:`memq.pipeline.rules_zh`: the span
cleaned of its tail, its lead and what it is used for (``_clean``), and whether what is left
is a value at all (``_valid``). Its patterns are in ``rules_zh_lexicon``.
"""

from __future__ import annotations

import re

from . import tools
from .rules_zh_lexicon import (
    _CUT,
    _HELD_FOR,
    _JOB_LEAD,
    _LEAD,
    _LEAD_PLACE,
    _NAMED,
    _SINCE,
    _STACK_TAIL,
    _TAIL,
    _TOOL_TAIL,
    _TOOL_USE,
    _USED_FOR,
    _VAGUE,
    _Slot,
)


def _clean(value: str, predicate: str) -> str:
    value = _CUT.split(value, maxsplit=1)[0].strip()
    previous = None
    while previous != value:
        previous = value
        value = _TAIL.sub("", _LEAD.sub("", value.strip())).strip()
        value = _HELD_FOR.sub("", value)  # "开了五年的卡罗拉": how long, then the car
        value = _SINCE.sub("", value)
        value = _NAMED.sub(r"\g<name>", value)
        if predicate == "lives_in":  # "老家南昌", "南京的房子", "上海分部": the place
            value = re.sub(r"(?:(?:的|那边的|这边的)(?:房子|家|住处|出租屋)|分部|分公司|总部"
                           r"|办事处)$", "", _LEAD_PLACE.sub("", value))
    if predicate == "major":
        value = re.sub(r"(?:专业|系|方向)$", "", re.sub(r"^(?:本人|我)", "", value)).strip()
        # "郑大会计学": the school's short name before the field
        value = re.sub(r"^[\u4e00-\u9fff]{1,6}(?:大学|学院|大)(?=[\u4e00-\u9fff]{2})", "", value)
    if predicate in ("uses", "production_environment"):  # "Go写后端" -> "Go"
        value = _TOOL_TAIL.sub("", _TOOL_USE.sub("", value)).strip()
    if predicate == "uses":
        value = _tool(value)
    if predicate == "works_at":
        value = _employer(value)
    if predicate == "drives":  # "我的卡罗拉", "哈弗H6跑滴滴", "途观送娃上学": the car
        value = re.sub(r"^(?:我的|我那[辆台]|我家的?|家里的?|[那这][辆台])", "", value)
        value = re.split(r"(?<=\S{2})(?:去|跑|送|接|上下班|上班|通勤|回)(?=[\u4e00-\u9fff])", value,
                         maxsplit=1)[0]
    if predicate == "team" and (unit := re.match(
            r".{2,}?(?:小组|组|团队|部门|中台|事业群|事业部|中心)(?=之后|以后|后|只|主要|负责|做)",
            value)):
        value = unit.group()  # "SRE平台组之后只负责工具开发"
    if named := re.match(r"^一[家个所](?:叫|名叫|叫做)(?P<name>[^的]+)的", value):
        value = named["name"]  # "一家叫星云科技的小创业公司"
    if named := re.fullmatch(r"(?:某|一家|一个)[^（(]{0,8}[（(](?P<name>[^）)]{2,20})[）)]", value):
        value = named["name"].strip()  # "某新能源大厂（宁德时代）": the name it hides
    return value


def _tool(value: str) -> str:
    """A used tool's name, without its job, its kind or what it is used for."""
    if (known := tools.mentioned(value)) and _JOB_LEAD.fullmatch(value[:known[0][0]]):
        value = value[known[0][0]:]  # "前端Vue", "框架是Django": the tool, not its job
    if known:
        value = _STACK_TAIL.sub("", value).strip()  # "Laravel框架", "Django那一套"
    if cut := re.match(
            r"(?P<tool>.{2,}?)(?:来|拿来)?(?:做|写|记|画|剪|处理|管理)[\u4e00-\u9fff]{1,4}$",
            value):
        value = cut["tool"]  # "希沃白板做课件"
    if (known := tools.mentioned(value)) and known[0][0] == 0 and (
            _USED_FOR.fullmatch(value[len(known[0][1]):].strip())):
        value = known[0][1]  # "百度地图导航": the app, not what it is used for
    if (used := re.match(r"(?P<tool>.*[A-Za-z0-9])\s+(?P<for>[\u4e00-\u9fff]{2,4})$", value)) and (
            _USED_FOR.fullmatch(used["for"])):
        value = used["tool"]  # "Kindle Paperwhite 看书"
    return value


def _employer(value: str) -> str:
    """Where one works, not the work, the offer or the kind of company."""
    if offer := re.match(r"(.{2,16}?)的\s*offer", value, re.I):
        value = offer.group(1)  # "比亚迪的offer并且已经去深圳报到了"
    # "Shopee写Go", "字节做推荐": the employer, not the work
    value = re.split(r"(?<=[^\s])(?:写|做|搞|负责|当|带|干|上班|工作|办完|办了|办理|教|读"
                     r"|报到|驻场)", value, maxsplit=1)[0].strip()
    if named := re.match(
            r"^一[家个所][\u4e00-\u9fff]{0,4}?(?:外企|公司|国企|私企|央企|企业)(?:叫)?(?P<name>[A-Za-z]"
            r"[^，,。]*|[\u4e00-\u9fff]{2,8})$", value):
        value = named["name"]  # "一家外企SAP"
    return value


def _state(slot: _Slot, text: str) -> str | None:
    for pattern in slot.states:
        if m := pattern.search(text):
            value = _clean(m["obj"], slot.predicate)
            if _valid(value):
                return value
    return None


def _valid(value: str | None) -> bool:
    return bool(value) and len(value or "") <= 40 and not _VAGUE.fullmatch(value or "") and (
        not re.search(r"一[家个所间]|[那这]儿|[那这]里|[那这]边|^不|[那这](?:套|个|块|摊)"
                      r"|^(?:成功|失败|完成|顺利)$|我(?:也|就|还)"
                      r"|^[一二三四五六七八九十百\d]+(?:楼|层|号|室|单元)$|^[家个所间](?:公司|单位|企业|学校|医院)$"
                      r"|^(?:凌晨|半夜|深夜|早上|晚上|中午|下午)?[一二三四五六七八九十两\d]+点"
                      r"|^第[一二三四五六七八九十\d]+(?:天|次|个|周)|^搬|学生$"
                      r"|^[一二三四五六七八九十两几半\d]+(?:年|个月|月|天|周|小时|公里)$"
                      r"|^[一二三四五六七八九十两几百千\d.]+(?:万|千|块|元|[wW])多?$"  # a price
                      # "在家自己做了顿饭": no workplace; "都用它": no tool
                      r"|^(?:家|家里|屋里|宿舍|床上)(?:自己)?$|它$",
                      value or ""))
