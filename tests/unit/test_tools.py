"""What a used tool is for (pipeline/tools.py) and how a change of one ends the tool the user
had for the same job, though ``uses`` holds many tools at once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from memq.pipeline import tools
from memq.pipeline.merge_time import _same_fact
from memq.pipeline.predicates import Predicates
from memq.pipeline.rules import RuleExtractor
from memq.schemas import CandidateMemory, Turn

DAY1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def extract(text: str, day: int = 1) -> list[CandidateMemory]:
    turn = Turn(turn_id=f"t{day}", role="user", content=text,
                timestamp=DAY1 + timedelta(days=day - 1))
    return [c for c in RuleExtractor().extract([turn]) if c.confidence >= 0.7]


def jobs_of(cs: list[CandidateMemory]) -> list[tuple[str, str]]:
    return [(t.predicate, t.object) for c in cs for t in c.triples
            if t.predicate.startswith("uses_")]


@pytest.mark.parametrize(("value", "clause", "job"), [
    ("MySQL 5.7", "", "database"),
    ("PostgreSQL 15", "", "database"),
    ("腾讯会议", "", "meetings"),  # the longest product name wins over 腾讯云
    ("腾讯云 COS", "", "object_storage"),
    ("Redis 7", "数据库", "cache"),  # the product before the sentence's words
    ("Mac", "写代码", "computer"),
    ("Go", "", "language"),
    ("Gopher Lab", "", None),  # "Go" only as a word
    ("星云记账", "记账用的是星云记账", "bookkeeping"),  # the clause names the job
    ("星云", "我们用的是星云", None),  # no job named, no product known
    ("某某系统", "收银用的某某系统", "pos"),  # the clause names the job
])
def test_the_job_of_a_tool(value: str, clause: str, job: str | None) -> None:
    assert tools.job_of(value, clause, clause) == job


def test_products_mentioned_are_found_whole_with_their_version() -> None:
    assert tools.mentioned("Jira license太贵了，公司月初统一改用飞书项目了") == [
        (0, "Jira", "project_management"), (24, "飞书项目", "project_management")]
    assert [n for _, n, _ in tools.mentioned("后端用MySQL5.7和MongoDB")] == ["MySQL5.7",
                                                                         "MongoDB"]
    assert [n for _, n, _ in tools.mentioned("主库是 PostgreSQL 12 了")] == ["PostgreSQL 12"]
    assert tools.mentioned("我们用 MongoDB") == [(4, "MongoDB", "database")]  # not "Go"


def test_every_job_is_a_single_valued_slot() -> None:
    single = Predicates.default()
    assert all(single.is_single(p) for p in tools.predicates())
    assert not single.is_single("uses")  # one still uses many tools at once
    raw = json.loads((tools.resources.files("memq.pipeline") / "tools.json").read_text())
    assert all(spec["cues"] and spec["products"] for spec in raw["categories"].values())


def _closes(old: list[CandidateMemory], new: list[CandidateMemory]) -> bool:
    """Whether a later statement ends an earlier one, as the merge would: a single-valued
    slot of both with another object, or the old fact named as replaced."""
    single = Predicates.default()
    return any((single.is_single(t.predicate) and t.slot == o.slot and t.object != o.object)
               or any(_same_fact(o, r) for r in n.replaces)
               for c in old for o in c.triples for n in new for t in n.triples)


@pytest.mark.parametrize(("before", "after"), [
    ("我们组后端基本都用MySQL 5.7", "数据库这块上个月已经全部迁到PostgreSQL 15了"),
    ("我们做缓存用的是Memcached", "缓存层上周替换成Redis 7了"),
    ("我开会一直用腾讯会议", "现在开会都改成Zoom了"),
    ("我平时记笔记用印象笔记", "现在所有笔记都放Obsidian里了"),
    ("我们团队项目管理用的是Jira", "Jira license太贵了，公司月初统一改用飞书项目了"),
])
def test_a_new_tool_for_the_same_job_ends_the_old_one(before: str, after: str) -> None:
    old, new = extract(before), extract(after, 10)
    assert jobs_of(old) and jobs_of(new), (jobs_of(old), jobs_of(new))
    assert _closes(old, new)


@pytest.mark.parametrize(("before", "after"), [
    ("我们用MySQL存业务数据", "我们也用PostgreSQL做分析库"),  # beside, not instead
    ("我们主库用MySQL", "隔壁组把数据库迁到TiDB了"),  # someone else's
    ("我开会一直用腾讯会议", "要不要换成Zoom？"),  # a question
    ("我们用 Redis 做缓存", "我们用 MySQL 存订单"),  # another job
])
def test_a_tool_for_another_job_or_beside_it_ends_nothing(before: str, after: str) -> None:
    assert not _closes(extract(before), extract(after, 10))


def test_tools_used_together_carry_no_job() -> None:
    """"MySQL 和 MongoDB 都用": two databases at once; neither may end the other."""
    assert jobs_of(extract("我们后端用MySQL和MongoDB")) == []


def test_the_infrastructure_words_name_known_jobs() -> None:
    names = {j.name for j in tools.jobs()}
    assert names >= tools.INFRA
    assert names >= tools.NOT_INFRA
    assert not tools.INFRA & tools.NOT_INFRA


def test_a_move_of_production_to_another_cloud_ends_the_old_one() -> None:
    """Where production runs carries its cloud's job, so a move said of the servers ("正式服已经
    迁到 Google Cloud 了") ends it though the sentence says nothing of production."""
    old = extract("我们游戏服务器部署在腾讯云上")
    new = extract("正式服已经迁到 Google Cloud 了", 10)
    assert ("uses_cloud", "腾讯云") in jobs_of(old)
    assert ("uses_cloud", "Google Cloud") in jobs_of(new)
    assert _closes(old, new)


def test_a_move_between_tools_is_a_change_of_tool_not_of_home() -> None:
    from datetime import UTC, datetime

    from memq.pipeline.rules import RuleExtractor
    from memq.schemas import Turn

    def said(text: str) -> list[tuple[str, str]]:
        turn = Turn(turn_id="t1", role="user", content=text,
                    timestamp=datetime(2026, 3, 1, tzinfo=UTC))
        return [(t.predicate, t.object) for c in RuleExtractor().extract([turn])
                for t in c.triples[:1]]

    assert said("We moved from Grafana to Datadog.") == [("uses", "Datadog")]
    assert said("We moved from Denver to Salt Lake City.") == [("lives_in", "Salt Lake City")]
