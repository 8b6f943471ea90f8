"""Where a place is: well-known cities by their Chinese names (:file:`places.json`), so a move
can name the city its sentence mentions when the words of moving name none ("成都的冬天好阴啊，
搬过来一个月…") or name only a district ("住在高新区"). Pure: text in, names out."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources


@cache
def cities() -> tuple[str, ...]:
    """Every city's name, the longest first ("乌鲁木齐" before a shorter name inside it)."""
    raw = json.loads(resources.files("memq.pipeline").joinpath("places.json").read_text(
        encoding="utf-8"))
    return tuple(sorted(raw["cities"], key=len, reverse=True))


@cache
def _pattern() -> re.Pattern[str]:
    return re.compile("|".join(re.escape(c) for c in cities()))


def mentioned(text: str) -> list[tuple[int, str]]:
    """The cities named in the text: (where, name), in order."""
    return [(m.start(), m.group()) for m in _pattern().finditer(text)]
