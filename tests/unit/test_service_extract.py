"""service.extract writes a batch's episodes beside its extraction, and never returns or raises
before the writes are done."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from memq.pipeline.policy import Thresholds
from memq.pipeline.service import Ports, extract
from memq.schemas import CandidateMemory, Kind, Turn

NOW = datetime(2026, 11, 30, tzinfo=UTC)
TURNS = [Turn(turn_id=f"t{i}", role="user", content=f"I moved to city {i}.", timestamp=NOW)
         for i in range(3)]


class Embedder:
    model_id = "m"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class Extractor:
    name, prompt_version = "fake", None

    def __init__(self, started: threading.Event, fail: bool = False) -> None:
        self.started, self.fail = started, fail

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]:
        self.started.set()
        if self.fail:
            raise RuntimeError("the LLM said no")
        return [CandidateMemory(content="The user lives in city 0.", kind=Kind.FACT,
                                confidence=0.9, importance=0.5,
                                source_turn_ids=[turns[0].turn_id], valid_at=NOW)]


class Episodes:
    """Its write waits until the extractor has started: written first and alone, it would
    time out."""

    def __init__(self, started: threading.Event, fail: bool = False) -> None:
        self.started, self.fail = started, fail
        self.done = threading.Event()

    def add(self, user_id: str, session_id: str, turns: Sequence[Turn],
            vectors: Sequence[Sequence[float]], model_id: str, now: datetime,
            passages: Sequence[Sequence[Sequence[float]]] = ()) -> int:
        if not self.started.wait(timeout=10):
            raise TimeoutError("the extraction never started while episodes were written")
        if self.fail:
            raise ConnectionError("chroma unavailable")
        self.done.set()
        return len(turns)


class Graph:
    def __init__(self) -> None:
        self.episodes: list[str] = []

    def add_episodes(self, user_id: str, session_id: str, turns: Sequence[Turn],
                     now: datetime) -> None:
        self.episodes += [t.turn_id for t in turns]


def _ports(episodes: Episodes, extractor: Extractor, graph: Graph) -> Ports:
    unused: Any = None
    return Ports(embedder=Embedder(), extractor=extractor, judge=unused, memories=unused,
                 episodes=episodes, graph=graph)  # type: ignore[arg-type]


def test_episodes_are_written_while_the_extractor_works() -> None:
    started = threading.Event()
    episodes, graph = Episodes(started), Graph()
    out = extract(_ports(episodes, Extractor(started), graph), "u", "s", TURNS,
                  thresholds=Thresholds(), now=NOW)
    assert out.episodes == 3 and graph.episodes == ["t0", "t1", "t2"]
    assert [c.source_turn_ids for c in out.candidates] == [["s/t0"]]
    assert len(out.vectors) == 1


def test_an_extraction_error_is_raised_once_the_episodes_are_written() -> None:
    started = threading.Event()
    episodes, graph = Episodes(started), Graph()
    with pytest.raises(RuntimeError, match="the LLM said no"):
        extract(_ports(episodes, Extractor(started, fail=True), graph), "u", "s", TURNS,
                thresholds=Thresholds(), now=NOW)
    assert episodes.done.is_set() and graph.episodes == ["t0", "t1", "t2"]


def test_a_write_error_is_raised() -> None:
    started = threading.Event()
    episodes, graph = Episodes(started, fail=True), Graph()
    with pytest.raises(ConnectionError, match="chroma unavailable"):
        extract(_ports(episodes, Extractor(started), graph), "u", "s", TURNS,
                thresholds=Thresholds(), now=NOW)
    # the graph's record (the words) is written first: a turn the vector index finds always
    # has its words; the retry writes both again (idempotent)
    assert graph.episodes == ["t0", "t1", "t2"]


class WaitingEmbedder(Embedder):
    """Its embedding of the turns waits until the extractor has started: embedded first and
    alone, before the extraction, it would time out."""

    def __init__(self, started: threading.Event) -> None:
        self.started = started

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any("I moved to city" in t for t in texts) and not self.started.wait(timeout=10):
            raise TimeoutError("the turns were embedded before the extraction started")
        return super().embed(texts)


def test_the_turns_are_embedded_while_the_extractor_works() -> None:
    started = threading.Event()
    episodes, graph = Episodes(started), Graph()
    ports = _ports(episodes, Extractor(started), graph)
    ports = Ports(**{**ports.__dict__, "embedder": WaitingEmbedder(started)})
    out = extract(ports, "u", "s", TURNS, thresholds=Thresholds(), now=NOW)
    assert out.episodes == 3 and len(out.vectors) == 1
