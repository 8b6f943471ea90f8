"""The openai adapter against a real HTTP server (tests/fakellm.py), with the real client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import openai
import pytest
from fakellm import FakeLLM  # tests/ is on pytest's pythonpath

from memq.pipeline.adapters.llm_openai import OpenAIChat, OpenAIExtractor, OpenAIJudge
from memq.pipeline.errors import LLMAnswerError, PermanentError, TransientError
from memq.pipeline.ports import Decision, Extractor, Judge
from memq.pipeline.prompts import extract_memories, resolve_memory
from memq.schemas import CandidateMemory, Kind, StoredMemory, Triple, Turn

TESTS = Path(__file__).resolve().parents[1]
T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
ATTEMPTS = 3


def turn(turn_id: str, role: str, content: str, minutes: int) -> Turn:
    return Turn.model_validate(
        {
            "turn_id": turn_id,
            "role": role,
            "content": content,
            "timestamp": T0 + timedelta(minutes=minutes),
        }
    )


TURNS = [
    turn("msg-aaa-001", "user", "Hi there!", 0),
    turn("msg-aaa-002", "assistant", "Hello! How can I help?", 1),
    turn(
        "msg-aaa-003",
        "user",
        "I moved to Berlin last month.\nI work at Acme as a data engineer.",
        2,
    ),
    turn("msg-aaa-004", "user", "Please always answer in German.", 5),
]


def memory(content: str, kind: str, source: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "content": content,
        "kind": kind,
        "confidence": 0.9,
        "importance": 0.7,
        "entities": [],
        "triples": [],
        "source": source,
        **extra,
    }


GOOD = {
    "memories": [
        memory(
            "The user lives in Berlin.",
            "profile",
            [3],
            entities=["Berlin"],
            triples=[{"subject": "user", "predicate": "lives_in", "object": "Berlin"}],
        ),
        memory("The user wants answers in German.", "instruction", [4, 3]),
    ]
}


# One server and one client for the module (a client costs ~40 ms to build); each test
# starts with an empty script and no recorded requests.
@pytest.fixture(scope="module")
def _server() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def llm(_server: FakeLLM) -> FakeLLM:
    _server.reset()
    return _server


@pytest.fixture(scope="module")
def chat(_server: FakeLLM) -> Iterator[OpenAIChat]:
    with OpenAIChat(
        base_url=_server.base_url,
        api_key="test-key",
        model="fake-model",
        timeout_s=0.3,
        max_attempts=ATTEMPTS,
        backoff_s=0.005,
    ) as client:
        yield client


@pytest.fixture
def extractor(chat: OpenAIChat) -> OpenAIExtractor:
    return OpenAIExtractor(chat)


@pytest.fixture
def judge(chat: OpenAIChat) -> OpenAIJudge:
    return OpenAIJudge(chat)


def test_protocols_and_names(extractor: OpenAIExtractor, judge: OpenAIJudge) -> None:
    as_extractor: Extractor = extractor
    as_judge: Judge = judge
    assert as_extractor.name == "openai:fake-model"
    assert as_extractor.prompt_version == extract_memories.VERSION == "extract-memories-4"
    assert as_judge is judge
    assert judge.prompt_version == resolve_memory.VERSION


def test_good_answer_maps_to_candidates(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("json", GOOD))
    got = extractor.extract(TURNS)
    assert [c.content for c in got] == [
        "The user lives in Berlin.",
        "The user wants answers in German.",
    ]
    berlin, german = got
    assert isinstance(berlin, CandidateMemory)
    assert berlin.kind is Kind.PROFILE
    assert berlin.source_turn_ids == ["msg-aaa-003"]
    assert berlin.valid_at == TURNS[2].timestamp
    assert berlin.entities == ["Berlin"]
    assert berlin.triples == [Triple(subject="user", predicate="lives_in", object="Berlin")]
    assert german.kind is Kind.INSTRUCTION
    assert german.source_turn_ids == ["msg-aaa-003", "msg-aaa-004"]  # in turn order
    assert german.valid_at == TURNS[2].timestamp  # the first mention, as the rules extractor
    assert len(llm.requests) == 1


def test_request_shape_and_prompt_uses_integer_refs(
    llm: FakeLLM, extractor: OpenAIExtractor
) -> None:
    extractor.extract(TURNS)
    (request,) = llm.requests
    assert request["model"] == "fake-model"
    assert request["temperature"] == 0
    # the answer's shape as a schema the server can hold its output to
    assert request["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "extract", "schema": extract_memories.SCHEMA, "strict": True}}
    system, user = request["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert '{"memories": [' in system["content"]
    assert "lives_in" in system["content"]  # the predicate vocabulary is offered
    prompt = user["content"]
    for ref, t in enumerate(TURNS, start=1):
        assert f"[{ref}] {t.role} at {t.timestamp.isoformat(timespec='seconds')}" in prompt
    assert "msg-aaa" not in system["content"] + prompt
    # multi-line content stays on its turn's line
    assert '"I moved to Berlin last month.\\nI work at Acme as a data engineer."' in prompt


def test_malformed_then_good_retries(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("raw", "Sure! Here are the memories: {"), ("json", GOOD))
    assert len(extractor.extract(TURNS)) == 2
    assert len(llm.requests) == 2


def test_schema_invalid_then_good_retries(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("json", {"facts": []}), ("json", GOOD))
    assert len(extractor.extract(TURNS)) == 2
    assert len(llm.requests) == 2


def test_malformed_every_time_is_llm_answer_error(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(*[("raw", "I cannot do that, Dave.")] * ATTEMPTS)
    with pytest.raises(LLMAnswerError) as info:
        extractor.extract(TURNS)
    assert isinstance(info.value, PermanentError)
    message = str(info.value)
    assert "not JSON" in message and "I cannot do that, Dave." in message
    assert f"{ATTEMPTS} attempt" in message
    assert len(llm.requests) == ATTEMPTS


def test_rate_limited_then_good(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("status", 429), ("json", GOOD))
    assert len(extractor.extract(TURNS)) == 2
    assert len(llm.requests) == 2


def test_server_errors_exhaust_to_transient(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(*[("status", 500)] * ATTEMPTS)
    with pytest.raises(TransientError) as info:
        extractor.extract(TURNS)
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(llm.requests) == ATTEMPTS


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_permanent_at_once(
    llm: FakeLLM, extractor: OpenAIExtractor, status: int
) -> None:
    llm.enqueue(("status", status))
    with pytest.raises(PermanentError) as info:
        extractor.extract(TURNS)
    assert not isinstance(info.value, TransientError)
    assert f"HTTP {status}" in str(info.value)
    assert isinstance(info.value.__cause__, openai.APIStatusError)
    assert len(llm.requests) == 1


def test_timeout_then_good(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("delay", 1.0, {"memories": []}), ("json", GOOD))
    started = time.perf_counter()
    assert len(extractor.extract(TURNS)) == 2
    assert time.perf_counter() - started < 0.9  # gave up after timeout_s=0.3, not 1.0
    assert len(llm.requests) == 2


def test_disconnects_exhaust_to_transient(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(*[("disconnect",)] * ATTEMPTS)
    with pytest.raises(TransientError) as info:
        extractor.extract(TURNS)
    assert isinstance(info.value.__cause__, openai.APIConnectionError)


def test_unreachable_server_is_transient() -> None:
    with FakeLLM() as gone:
        url = gone.base_url
    with (
        OpenAIChat(
            base_url=url, api_key="k", model="m", timeout_s=0.3, max_attempts=2, backoff_s=0.005
        ) as chat,
        pytest.raises(TransientError),
    ):
        OpenAIExtractor(chat).extract(TURNS)


def test_unknown_ref_and_invalid_items_are_dropped(
    llm: FakeLLM, extractor: OpenAIExtractor
) -> None:
    llm.enqueue(
        (
            "json",
            {
                "memories": [
                    memory("The user has a cat named Tom.", "fact", [9]),  # unknown ref
                    memory("The user lives in Berlin.", "profile", [0]),  # unknown ref
                    memory("The user likes jazz.", "hobby", [3]),  # bad kind
                    memory("The user likes tea.", "preference", [3], confidence=7),  # out of range
                    memory("The user works at Acme.", "profile", [3]),  # kept
                    memory("The user works at Acme.", "profile", [3]),  # repeat
                ]
            },
        )
    )
    got = extractor.extract(TURNS)
    assert [c.content for c in got] == ["The user works at Acme."]
    assert len(llm.requests) == 1  # partly invalid answers are not asked again


def test_all_items_invalid_is_asked_again(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("json", {"memories": [{"content": "x"}]}), ("json", GOOD))
    assert len(extractor.extract(TURNS)) == 2
    assert len(llm.requests) == 2


def test_lenient_parsing() -> None:
    text = (
        "```json\n"
        + json.dumps(
            {
                "memories": [
                    memory(
                        "  The user prefers dark mode.  ",
                        "Preference",
                        ["[2]", 1],
                        triples=[
                            {
                                "subject": "The user",
                                "predicate": "prefersTheme",
                                "object": "dark mode",
                            },
                            {"subject": "user", "predicate": "", "object": "x"},  # dropped alone
                        ],
                        entities=["dark mode", "Dark Mode", " "],
                    )
                ]
            }
        )
        + "\n```"
    )
    answer = extract_memories.parse_answer(text)
    (candidate,) = extract_memories.to_candidates(answer, TURNS)
    assert candidate.content == "The user prefers dark mode."
    assert candidate.kind is Kind.PREFERENCE
    assert candidate.source_turn_ids == ["msg-aaa-001", "msg-aaa-002"]
    assert candidate.triples == [
        Triple(subject="user", predicate="prefers_theme", object="dark mode")
    ]
    assert candidate.entities == ["dark mode"]


def test_empty_chunk_makes_no_call(llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    assert extractor.extract([]) == []
    assert llm.requests == []


# --- the judge ----------------------------------------------------------------------

NEW = CandidateMemory(
    content="The user lives in Munich.",
    kind=Kind.PROFILE,
    confidence=0.9,
    importance=0.8,
    triples=[Triple(subject="user", predicate="lives_in", object="Munich")],
    source_turn_ids=["msg-bbb-009"],
    valid_at=T0 + timedelta(days=30),
)
OLD = StoredMemory(
    id="mem-old-1",
    user_id="u-1",
    content="The user lives in Berlin.",
    kind=Kind.PROFILE,
    confidence=0.9,
    importance=0.8,
    triples=[Triple(subject="user", predicate="lives_in", object="Berlin")],
    source_turn_ids=["msg-aaa-003"],
    valid_at=T0,
    created_at=T0,
    updated_at=T0,
    embedding_model="minilm",
)


@pytest.mark.parametrize("decision", list(Decision))
def test_judge_maps_each_decision(llm: FakeLLM, judge: OpenAIJudge, decision: Decision) -> None:
    merged = "The user lives in Munich, Bavaria."
    llm.enqueue(
        (
            "json",
            {"decision": decision.value.upper(), "reason": " Moved. ", "merged_content": merged},
        )
    )
    got = judge.judge(NEW, OLD)
    assert got.decision is decision
    assert got.reason == "Moved."
    assert got.merged_content == (merged if decision is Decision.REFINEMENT else None)
    (request,) = llm.requests
    prompt = request["messages"][1]["content"]
    assert "The user lives in Berlin." in prompt and "The user lives in Munich." in prompt
    assert "mem-old-1" not in prompt and "u-1" not in prompt


def test_judge_refinement_without_sentence_is_asked_again(llm: FakeLLM, judge: OpenAIJudge) -> None:
    llm.enqueue(
        ("json", {"decision": "refinement", "reason": "more detail"}),
        ("json", {"decision": "maybe", "reason": "?"}),
        ("json", {"decision": "conflict", "reason": "moved"}),
    )
    assert judge.judge(NEW, OLD).decision is Decision.CONFLICT
    assert len(llm.requests) == 3


def test_judge_bad_answers_exhaust(llm: FakeLLM, judge: OpenAIJudge) -> None:
    llm.enqueue(*[("json", ["not", "an", "object"])] * ATTEMPTS)
    with pytest.raises(LLMAnswerError, match="resolve"):
        judge.judge(NEW, OLD)


def test_rule_based_default_responder() -> None:
    def responder(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        found = "Berlin" in prompt
        items = [memory("The user lives in Berlin.", "profile", [3])] if found else []
        return json.dumps({"memories": items})

    with (
        FakeLLM(default=responder) as server,
        OpenAIChat(base_url=server.base_url, api_key="k", model="m", backoff_s=0.005) as chat,
    ):
        got = OpenAIExtractor(chat).extract(TURNS)
    assert [c.source_turn_ids for c in got] == [["msg-aaa-003"]]


def test_fakellm_runs_as_a_process() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "fakellm.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with OpenAIChat(
            base_url=base_url, api_key="k", model="m", timeout_s=2, backoff_s=0.005
        ) as chat:
            assert OpenAIExtractor(chat).extract(TURNS) == []
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_the_prompt_names_the_speaker() -> None:
    turns = [Turn(turn_id="a", role="user", content="I adopted a dog.", speaker="Maria",
                  timestamp="2026-11-20T10:00:00Z"),
             Turn(turn_id="b", role="user", content="Nice!", timestamp="2026-11-20T10:01:00Z")]
    user = extract_memories.render(turns)[1]["content"]
    assert '[1] user (Maria) at 2026-11-20T10:00:00+00:00: "I adopted a dog."' in user
    assert '[2] user at 2026-11-20T10:01:00+00:00: "Nice!"' in user
    assert "write their name" in extract_memories.render(turns)[0]["content"]


def test_a_change_names_what_it_replaces() -> None:
    item = memory("The user uses PostgreSQL.", "fact", [1], triples=[
        {"subject": "user", "predicate": "uses", "object": "PostgreSQL"}], replaces=[
        {"subject": "I", "predicate": "uses", "object": "MySQL"},
        {"subject": "user", "predicate": "", "object": "x"}])  # a malformed one is dropped
    answer = extract_memories.parse_answer(json.dumps({"memories": [item]}))
    (candidate,) = extract_memories.to_candidates(answer, TURNS)
    assert candidate.replaces == [Triple(subject="user", predicate="uses", object="MySQL")]
    plain = extract_memories.parse_answer(json.dumps({"memories": [
        memory("The user likes tea.", "preference", [1])]}))
    assert extract_memories.to_candidates(plain, TURNS)[0].replaces == []


def test_a_memory_its_turns_do_not_say_is_dropped(llm: FakeLLM,
                                                   extractor: OpenAIExtractor) -> None:
    """A small model returns the prompt's own example for a chat that never names Berlin; a
    memory whose value its cited turns do say is kept (English by word stem, Chinese by
    character)."""
    at = datetime(2026, 3, 1, 9, tzinfo=UTC)
    turns = [Turn(turn_id="a1", role="user", content="We moved to Lisbon last spring.",
                  timestamp=at),
             Turn(turn_id="a2", role="user", content="我现在住在上海。", timestamp=at)]
    llm.enqueue(("json", {"memories": [
        memory("The user lives in Berlin.", "profile", [1], entities=["Berlin"],
               triples=[{"subject": "user", "predicate": "lives_in", "object": "Berlin"}]),
        memory("The user lives in Lisbon.", "profile", [1], entities=["Lisbon"],
               triples=[{"subject": "user", "predicate": "lives_in", "object": "Lisbon"}]),
        memory("用户住在上海。", "profile", [2],
               triples=[{"subject": "user", "predicate": "lives_in", "object": "上海"}]),
        memory("用户住在北京。", "profile", [2],
               triples=[{"subject": "user", "predicate": "lives_in", "object": "北京"}]),
    ]}))
    assert [c.content for c in extractor.extract(turns)] == [
        "The user lives in Lisbon.", "用户住在上海。"]
    moving = CandidateMemory(content="The user is moving again.", kind=Kind.EVENT,
                             confidence=0.9, importance=0.5, source_turn_ids=["a1"],
                             valid_at=at)
    assert extract_memories.grounded(moving, turns)  # "moving" meets "moved"


def test_a_server_without_schema_output_is_asked_for_plain_json(
        llm: FakeLLM, extractor: OpenAIExtractor) -> None:
    llm.enqueue(("status", 400, "response_format type json_schema is not supported"),
                ("json", {"memories": [memory("The user lives in Berlin.", "profile", [3])]}))
    found = extractor.extract(TURNS)
    assert [c.content for c in found] == ["The user lives in Berlin."]
    first, second = llm.requests
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    extractor.extract(TURNS)  # and from then on
    assert llm.requests[-1]["response_format"] == {"type": "json_object"}


def test_the_answer_schemas_describe_what_the_parsers_take() -> None:
    """Every property the schemas require is a field of the parsed answer, so a server that
    answers exactly to the schema gives a usable answer."""
    item = extract_memories.SCHEMA["properties"]["memories"]["items"]
    assert set(item["required"]) == set(extract_memories.ExtractedMemory.model_fields)
    assert set(resolve_memory.SCHEMA["required"]) == set(resolve_memory.ResolveAnswer.model_fields)
    answer = {"memories": [{"content": "The user lives in Berlin.", "kind": "profile",
                            "confidence": 0.9, "importance": 0.7, "entities": ["Berlin"],
                            "triples": [{"subject": "user", "predicate": "lives_in",
                                         "object": "Berlin"}], "replaces": [], "source": [3]}]}
    assert extract_memories.parse_answer(json.dumps(answer)).memories
