"""Settings -> adapters, in one place. Built lazily, once per worker process (the ONNX
session and the Neo4j driver must not cross a fork)."""

from __future__ import annotations

import logging
import sys
from functools import cache
from typing import TYPE_CHECKING, TypeVar

import structlog

from .settings import Settings, load

if TYPE_CHECKING:  # the stores' drivers load on first use: an enqueue-only agent needs neither
    from ..pipeline.adapters.chroma import ChromaStores
    from ..pipeline.adapters.neo4j.store import Neo4jGraph
    from ..pipeline.ports import Embedder, Extractor, Judge
    from ..pipeline.predicates import Predicates
    from ..pipeline.service import Ports
    from .auth import KeyStore
    from .coord import Coord
    from .metrics import Metrics
    from .placement import Placement, ShardMap

_S = TypeVar("_S")


@cache
def settings() -> Settings:
    return load()


@cache
def coord() -> Coord:
    s = settings()
    from .coord import Coord  # noqa: PLC0415  (redis: not for every command)

    return Coord.from_url(s.state_url, broker_url=s.redis_url, cluster=s.state_cluster,
                          ledger_ttl_s=s.ledger_ttl_s, dead_max=s.dead_letters_max)


@cache
def keys() -> KeyStore:
    """The API keys, tenants' limits and access records (``workers.auth``)."""
    from .auth import KeyStore  # noqa: PLC0415

    return KeyStore(coord().r)


@cache
def metrics() -> Metrics:
    from .metrics import Metrics  # noqa: PLC0415

    return Metrics(coord().r)


@cache
def predicates() -> Predicates:
    from ..pipeline.predicates import Predicates  # noqa: PLC0415

    return Predicates.default()


def _embedder(s: Settings) -> Embedder:
    if s.embedder == "openai":
        from ..pipeline.adapters.embed_openai import OpenAIEmbedder  # noqa: PLC0415

        return OpenAIEmbedder(base_url=s.embed_base_url, api_key=s.embed_api_key.get_secret_value(),
                              model=s.embed_model)
    from ..pipeline.adapters.embed_local import build  # noqa: PLC0415

    return build(s.local_model, cache_dir=s.cache_path)


def _llm(s: Settings) -> tuple[Extractor, Judge]:
    if not s.llm_enabled:
        from ..pipeline.merge import OfflineJudge  # noqa: PLC0415
        from ..pipeline.rules import RuleExtractor  # noqa: PLC0415

        return RuleExtractor(), OfflineJudge()
    from ..pipeline.adapters.llm_openai import OpenAIChat, OpenAIExtractor, OpenAIJudge  # noqa: PLC0415

    assert s.llm_base_url and s.llm_model  # llm_enabled
    chat = OpenAIChat(base_url=s.llm_base_url, api_key=s.llm_api_key.get_secret_value(),
                      model=s.llm_model, timeout_s=s.llm_timeout_s, max_attempts=s.llm_attempts,
                      retry_transport=False)  # the task's backoff is the one retry layer
    _LLM_USAGE.append(chat.usage)
    return OpenAIExtractor(chat), OpenAIJudge(chat)


_LLM_USAGE: list[dict[str, int]] = []  # the LLM client's running counts (metrics read them)


def llm_usage() -> dict[str, int]:
    """LLM answers and tokens this process received so far (zero with the offline extractor)."""
    total = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for usage in _LLM_USAGE:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return total


@cache
def graphs() -> list[Neo4jGraph]:
    """Every Neo4j shard, in map order (workers.placement); one without MEMQ_NEO4J_SHARDS."""
    from ..pipeline.adapters.neo4j.store import Neo4jGraph  # noqa: PLC0415

    s = settings()
    auth = None
    if s.neo4j_user and s.neo4j_password:
        auth = (s.neo4j_user, s.neo4j_password.get_secret_value())
    return [Neo4jGraph(uri, auth=auth, database=s.neo4j_database) for uri in s.graph_uris()]


@cache
def chromas() -> list[ChromaStores]:
    """Every Chroma shard, in map order; one without MEMQ_CHROMA_SHARDS."""
    from ..pipeline.adapters.chroma import ChromaStores  # noqa: PLC0415

    return [ChromaStores.connect(host, port) for host, port in settings().chroma_addresses()]


@cache
def shard_map() -> ShardMap:
    from .placement import ShardMap  # noqa: PLC0415

    s = settings()
    return ShardMap(coord().r, len(s.graph_uris()), len(s.chroma_addresses()))


def stores_for(user_id: str) -> tuple[Neo4jGraph, ChromaStores]:
    """The user's Neo4j and Chroma (one read of the map)."""
    where = shard_map().of(user_id)
    return graphs()[where.neo4j], chromas()[where.chroma]


def embedder_of(user_id: str, stores: ChromaStores) -> Embedder:
    """The embedder of the user's stored vectors (see ``ports_for``)."""
    configured = embedder()
    model = stores.foreign_model(user_id, configured.model_id)
    return configured if model is None else embedder_for(model)


def graph_for(user_id: str) -> Neo4jGraph:
    """The Neo4j that holds the user's graph."""
    return graphs()[shard_map().of(user_id).neo4j]


def chroma_for(user_id: str) -> ChromaStores:
    """The Chroma that holds the user's memories and episodes."""
    return chromas()[shard_map().of(user_id).chroma]


def all_users() -> list[str]:
    """Every user any shard holds, sorted."""
    found: set[str] = set()
    for graph_ in graphs():
        found.update(graph_.users())
    for stores in chromas():
        found |= stores.users()
    return sorted(found)


def _only(stores: list[_S], setting: str) -> _S:
    if len(stores) > 1:
        raise RuntimeError(f"{setting} is set: a user's store is wiring.*_for(user), every "
                           "store wiring.graphs() / chromas()")
    return stores[0]


def graph() -> Neo4jGraph:
    """The one Neo4j of an unsharded deployment (tools and benches); raises when sharded."""
    return _only(graphs(), "MEMQ_NEO4J_SHARDS")


def chroma() -> ChromaStores:
    """The one Chroma of an unsharded deployment; raises when sharded."""
    return _only(chromas(), "MEMQ_CHROMA_SHARDS")


@cache
def embedder() -> Embedder:
    return _embedder(settings())


def embedder_for(model_id: str) -> Embedder:
    """The embedder that made vectors of ``model_id`` (a user not yet re-embedded is searched
    with the model of its vectors, never compared across models)."""
    current = embedder()
    if model_id == current.model_id:
        return current
    return _other_embedder(model_id)


@cache
def _other_embedder(model_id: str) -> Embedder:
    from ..pipeline.adapters.embed_local import MODEL_IDS, build  # noqa: PLC0415
    from ..pipeline.errors import ModelMismatchError  # noqa: PLC0415

    for variant, local_id in MODEL_IDS.items():
        if model_id == local_id:
            return build(variant, cache_dir=settings().cache_path)
    if model_id.startswith("openai:"):
        from ..pipeline.adapters.embed_openai import OpenAIEmbedder  # noqa: PLC0415

        s = settings()
        return OpenAIEmbedder(base_url=s.embed_base_url, api_key=s.embed_api_key.get_secret_value(),
                              model=model_id.removeprefix("openai:"))
    raise ModelMismatchError(f"no embedder can be built for stored model {model_id!r}")


@cache
def ports() -> Ports:
    """The configured models, with the first shard's stores; a user's work takes
    ``ports_for(user_id)``."""
    from ..pipeline.service import Ports  # noqa: PLC0415

    extractor, judge = _llm(settings())
    stores = chromas()[0]
    return Ports(embedder=embedder(), extractor=extractor, judge=judge, memories=stores,
                 episodes=stores, graph=graphs()[0])


def ports_at(user_id: str, where: Placement) -> Ports:
    """The ports of the user at ``where`` (``ports_for``, the placement read already)."""
    import dataclasses  # noqa: PLC0415

    stores, graph_ = chromas()[where.chroma], graphs()[where.neo4j]
    return dataclasses.replace(ports(), memories=stores, episodes=stores, graph=graph_,
                               embedder=embedder_of(user_id, stores))


def ports_for(user_id: str) -> Ports:
    """The ports of the user: its shards' stores (workers.placement), and the embedder of its
    stored vectors: a user first written under
    another model (the configured one changed since) keeps that model for its writes, so its
    index never mixes two, until ``memq run reembed`` moves it to the configured one. A user
    with no vectors yet takes the configured model."""
    return ports_at(user_id, shard_map().of(user_id))


def one_blas_thread() -> None:
    """numpy's BLAS on one thread in this process. memq's matrix products are small (a drain
    round's 25 x 384 vectors against a user's 300); OpenBLAS's second thread spun after each
    one, costing many times the product's own CPU and a core taken from Neo4j and Chroma; one
    thread lowered the workers' CPU a turn (figures:
    scripts/results/2026-12-07-figures-from-comments.md). Workers and ``memq serve``
    call it; an agent's own process is left alone."""
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    threadpool_limits(limits=1, user_api="blas")


def configure_logging(level: str | None = None, *, json_logs: bool | None = None) -> None:
    """structlog with context variables (every task binds stage, user and delivery ids), to
    stderr, one line per event; JSON with MEMQ_LOG_FORMAT=json. Libraries that log request
    lines (httpx, the drivers) are kept to warnings."""
    s = settings()
    level = level or s.log_level
    json_logs = s.log_format == "json" if json_logs is None else json_logs
    logging.basicConfig(format="%(message)s", stream=sys.stderr, level=level)
    for noisy in ("httpx", "httpcore", "neo4j", "chromadb", "urllib3", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_logs
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.WriteLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
