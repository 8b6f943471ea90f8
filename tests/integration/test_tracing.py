"""OpenTelemetry: with MEMQ_OTEL_ENDPOINT set, one delivery's trace reaches an OTLP collector
(here, one in the test process) as enqueue → extract → apply → the store stages, ids and
counts only. The traced worker and its producer use a Redis database of their own, so the
suite's other worker cannot take the delivery."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from integration.conftest import REDIS_URL, free_port, memq, memq_env, start_worker

pytestmark = pytest.mark.integration


class Collector(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.lock = threading.Lock()

    def Export(self, request: Any, context: Any) -> Any:
        with self.lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    self.spans.extend(scope.spans)
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def collector() -> Iterator[tuple[Collector, int]]:
    port = free_port()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    got = Collector()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(got, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    yield got, port
    server.stop(grace=None)


def test_one_delivery_is_one_trace_through_every_stage(services: None, tmp_path: Path,
                                                       collector: tuple[Collector, int],
                                                       user_id: str) -> None:
    got, port = collector
    env = memq_env(MEMQ_OTEL_ENDPOINT=f"http://127.0.0.1:{port}",
                   MEMQ_REDIS_URL=REDIS_URL.rsplit("/", 1)[0] + "/7")
    worker = start_worker(tmp_path, "traced", env=env)
    try:
        secret = "Zzz" + user_id
        memq("enqueue", "-", env=env, stdin=(
            f'{{"user_id": "{user_id}", "session_id": "s1", "turn_id": "t1", "role": "user", '
            f'"content": "I live in {secret}.", "timestamp": "2026-11-20T10:00:00Z"}}\n'))
        memq("wait", "--timeout", "120", env=env)
        wanted = {"memq.enqueue", "memq.extract", "memq.apply", "memq.dedupe", "memq.merge",
                  "memq.upsert"}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with got.lock:
                names = {s.name for s in got.spans}
            if wanted <= names:
                break
            time.sleep(0.2)
        with got.lock:
            spans = list(got.spans)
        by_name = {s.name: s for s in spans}
        assert wanted <= set(by_name), sorted(by_name)
        traces = {by_name[n].trace_id for n in wanted}
        assert len(traces) == 1, "the delivery's spans are one trace"
        enqueue, extract, apply_ = (by_name[n] for n in ("memq.enqueue", "memq.extract",
                                                          "memq.apply"))
        assert extract.parent_span_id == enqueue.span_id
        assert apply_.parent_span_id == enqueue.span_id
        for stage in ("memq.dedupe", "memq.merge", "memq.upsert"):
            assert by_name[stage].parent_span_id == apply_.span_id, stage
        assert enqueue.start_time_unix_nano <= extract.start_time_unix_nano \
            <= apply_.start_time_unix_nano
        for s in spans:  # ids and counts, never text
            for attribute in s.attributes:
                assert secret not in str(attribute.value), (s.name, attribute.key)
    finally:
        worker.stop()
