"""scripts/extract_bench.py and scripts/changes_bench.py: how memories are scored against
LoCoMo's observations, and a change against its stores, on small values made here."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from script_loader import SCRIPTS, load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # it imports memory_bench as the bench command does
    return load_script("extract_bench")


@pytest.fixture(scope="module")
def changes() -> ModuleType:
    return load_script("changes_bench")


def _embed(texts: list[str]) -> list[list[float]]:
    """Bag of words over a tiny vocabulary: sentences sharing words are near."""
    vocab = ["jon", "lost", "job", "banker", "gina", "dance", "store", "ad"]
    return [[float(w in t.casefold()) + 1e-3 for w in vocab] for t in texts]


def _memory(content: str, *turns: str, kind: str = "fact", subject: str = "Jon") -> Any:
    return SimpleNamespace(content=content, source_turn_ids=list(turns), kind=kind,
                           triples=[SimpleNamespace(subject=subject, object=content)])


def test_observations_map_evidence_to_turn_refs(bench: ModuleType) -> None:
    sample = {"observation": {"session_1_observation": {
        "Jon": [["Jon lost his job as a banker.", "D1:3"], ["Jon likes dance.", "D1:05; D2:1"],
                ["Jon is tall.", "D9:9"]],  # a turn that was skipped: no evidence left
    }}}
    refs = {"D1:3": "session_1/D1:3", "D1:5": "session_1/D1:5", "D2:1": "session_2/D2:1"}
    obs = bench.observations(sample, refs)
    assert [(o.speaker, o.evidence) for o in obs] == [
        ("Jon", ("session_1/D1:3",)), ("Jon", ("session_1/D1:5", "session_2/D2:1"))]


def test_an_observation_is_found_by_a_memory_of_its_turn_saying_the_same(
        bench: ModuleType) -> None:
    Obs = bench.Observation
    obs = [Obs("Jon", "Jon lost his job as a banker.", ("s/1",)),
           Obs("Gina", "Gina runs an ad for her store.", ("s/2",))]
    memories = [_memory("Jon lost his banker job.", "s/1"),  # same turn, same fact
                _memory("Gina likes dance.", "s/2", subject="Gina"),  # same turn, other fact
                _memory("Jon lost his job as a banker.", "s/9")]  # same words, another turn
    s = bench.score(memories, obs, _embed)
    assert s.found == [True, False]
    assert s.supported == [True, False, False]
    assert s.best[2] == (0.0, "")  # cites none of the observations' turns


def test_nothing_to_score(bench: ModuleType) -> None:
    s = bench.score([], [bench.Observation("Jon", "x", ("s/1",))], _embed)
    assert (s.found, s.supported) == ([False], [])


def _stored(content: str, obj: str, status: str, mid: str) -> Any:
    return SimpleNamespace(id=mid, content=content, status=status,
                           triples=[SimpleNamespace(object=obj)])


def test_a_change_is_right_when_only_the_new_value_is_current_and_audited(
        changes: ModuleType) -> None:
    case = changes.Case("c1", "我们用 MySQL 5.7。", "换成了 PostgreSQL 16。", "MySQL 5.7",
                        "PostgreSQL 16", True)
    old = _stored("用户使用MySQL 5.7。", "MySQL 5.7", "superseded", "m1")
    new = _stored("用户使用PostgreSQL 16。", "PostgreSQL 16", "current", "m2")
    audit = [SimpleNamespace(memory_id="m1", operation="supersede")]
    assert changes.judge(case, [old, new], audit).right
    assert not changes.judge(case, [old, new], []).right  # superseded without an audit entry
    still = _stored("用户使用MySQL 5.7。", "MySQL 5.7", "current", "m1")
    assert changes.judge(case, [still, new], []).why.startswith("old value still current")
    assert not changes.judge(case, [new], []).stated


def test_a_non_change_is_right_when_the_old_value_stays(changes: ModuleType) -> None:
    case = changes.Case("c2", "我在网易。", "我同事跳槽去米哈游了。", "网易", None, False)
    assert changes.judge(case, [_stored("用户在网易工作。", "网易", "current", "m1")], []).right
    assert not changes.judge(
        case, [_stored("用户在网易工作。", "网易", "superseded", "m1")], []).right


def test_cases_are_two_turns_of_one_user_days_apart(changes: ModuleType) -> None:
    case = changes.Case("c3", "a", "b", "x", "y", True)
    first, second = changes.lines(case)
    assert first["user_id"] == second["user_id"] == "bench-change-c3"
    assert first["session_id"] != second["session_id"]
    assert datetime.fromisoformat(second["timestamp"]) > datetime.fromisoformat(
        first["timestamp"]) >= datetime(2026, 1, 1, tzinfo=UTC)


def test_a_file_that_is_not_cases_is_one_line(changes: ModuleType, tmp_path: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    with pytest.raises(SystemExit, match=r"bad.jsonl:1 is not a case"):
        changes.load(str(bad))
