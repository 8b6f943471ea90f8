"""OpenTelemetry traces of a delivery, off unless ``MEMQ_OTEL_ENDPOINT`` names an OTLP (gRPC)
collector: one trace per enqueue, ``memq.enqueue`` → ``memq.extract`` → ``memq.apply`` →
``memq.dedupe`` / ``memq.merge`` / ``memq.upsert`` (the fenced graph commit and the index
write).

The trace context travels in the delivery's record in Redis (W3C ``traceparent``), never on
the broker: messages stay ids only. A drain coalesces several deliveries into one round; its
spans belong to the first delivery's trace and link the others'. Span attributes are ids and
counts, never text.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_state: dict[str, Any] = {}  # pid -> the tracer (a forked worker child builds its own)


def _tracer() -> Any | None:
    from . import wiring  # noqa: PLC0415

    endpoint = wiring.settings().otel_endpoint
    if not endpoint:
        return None
    if _state.get("pid") != os.getpid():
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )
            from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
            from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
            from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415
        except ImportError as exc:
            raise ImportError("MEMQ_OTEL_ENDPOINT is set, and tracing needs the OpenTelemetry "
                              "SDK: pip install 'memq[worker]' (or unset it)") from exc

        # (shut down, so flushed, when the process exits: a CLI's enqueue is exported too)
        provider = TracerProvider(resource=Resource.create({"service.name": "memq"}))
        provider.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=endpoint, insecure=endpoint.startswith("http://")),
            schedule_delay_millis=500))
        _state.update(pid=os.getpid(), provider=provider,
                      tracer=provider.get_tracer("memq"))
    return _state["tracer"]


def _context(traceparent: str | None) -> Any:
    if not traceparent:
        return None
    from opentelemetry.trace.propagation.tracecontext import (  # noqa: PLC0415
        TraceContextTextMapPropagator,
    )

    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


def _traceparent() -> str | None:
    from opentelemetry.trace.propagation.tracecontext import (  # noqa: PLC0415
        TraceContextTextMapPropagator,
    )

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


@contextmanager
def span(name: str, parent: str | None = None, links: Sequence[str | None] = (),
         **attributes: str | int) -> Iterator[str | None]:
    """A span (a child of ``parent``, a traceparent; or of the current span), linked to
    ``links``; yields its own traceparent. Nothing, and None, when tracing is off."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    from opentelemetry import trace  # noqa: PLC0415

    linked = [trace.Link(trace.get_current_span(ctx).get_span_context())
              for ctx in (_context(t) for t in links) if ctx is not None]
    with tracer.start_as_current_span(name, context=_context(parent), links=linked,
                                      attributes=attributes):
        yield _traceparent()
