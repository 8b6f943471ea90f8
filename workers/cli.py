"""``memq``: the commands people type. Thin: parse, call, print."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from ..schemas import IngestBatch, StoredMemory


class UsageError(Exception):
    """A mistake of the caller's: one line, exit code 2."""


def _print_json(value: Any) -> None:
    from .api import json_default  # noqa: PLC0415

    print(json.dumps(value, ensure_ascii=False, indent=2, default=json_default))


def cmd_schema(_: argparse.Namespace) -> int:
    _print_json(IngestBatch.model_json_schema())
    return 0


def cmd_enqueue(args: argparse.Namespace) -> int:
    """A file is read whole; standard input is published as it arrives (every 500 lines, or
    when it has been quiet for 0.2 s), so a producer that pipes a conversation turn by turn
    is not held until its end."""
    import dataclasses  # noqa: PLC0415

    from .client import LineError, enqueue, line_chunks, parse_lines  # noqa: PLC0415

    published, errors = [], []
    if args.file == "-":
        chunks: Iterable[list[bytes]] = line_chunks(sys.stdin.buffer)
    else:
        try:
            with open(args.file, "rb") as fh:
                chunks = [fh.readlines()]
        except OSError as exc:
            print(f"memq: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
    client = _local(args)
    line = 1
    for chunk in chunks:
        parsed, bad = parse_lines(chunk, start=line)
        line += len(chunk)
        batches = []
        for batch in parsed:  # the tenant's users (MEMQ_TENANT, --tenant), as every door's
            try:
                batches.append(batch.model_copy(
                    update={"user_id": client.stores_id(batch.user_id)}))
            except ValueError as exc:
                bad.append(LineError(0, f"user {batch.user_id[:40]!r}: {exc}"))
        for err in bad:
            print(f"line {err.line}: rejected: {err.reason}", file=sys.stderr, flush=True)
        sent = [dataclasses.replace(p, user_id=client.caller_id(p.user_id) or p.user_id)
                for p in enqueue(batches)]
        for pub in sent if not args.json else ():
            print(f"published {pub.turns} turn(s) of user {pub.user_id} session "
                  f"{pub.session_id} as {pub.batch_id} (delivery {pub.delivery_id})", flush=True)
        published += sent
        errors += bad
    if args.json:
        _print_json({"published": [asdict(p) for p in published],
                     "rejected": [asdict(e) for e in errors]})
    return 1 if errors else 0


def _celery(kind: str, extra: Sequence[str]) -> int:
    import importlib.util  # noqa: PLC0415

    from .wire import QUEUES  # noqa: PLC0415

    if kind != "worker" and importlib.util.find_spec("celery") is None:
        print(f'memq: {kind} needs Celery: pip install "memq[worker]"', file=sys.stderr)
        return 2
    if kind == "worker" and not {"-h", "--help"} & set(extra):
        from .ops import preflight  # noqa: PLC0415

        fatal, warnings = preflight()
        for line in fatal + warnings:
            print(f"memq: {line}", file=sys.stderr)
        if fatal:
            return 2
        from . import wiring  # noqa: PLC0415
        from .ops import yield_cpu  # noqa: PLC0415

        yield_cpu(wiring.settings().worker_nice)

    argv = [sys.executable, "-m", "celery", "-A", "memq.workers.app", kind, "--loglevel=INFO"]
    if kind == "worker" and not any(a in ("-Q", "--queues") or a.startswith(("-Q", "--queues="))
                                    for a in extra):
        argv += ["-Q", ",".join(QUEUES)]  # both queues unless told (-Q memq.extract)
    os.execv(sys.executable, [*argv, *extra])
    return 0  # not reached


def cmd_wait(args: argparse.Namespace) -> int:
    """Until these deliveries (--delivery), or everything in flight, are done: blocks, woken
    as each delivery finishes."""
    from . import deadletters, outbox, wiring  # noqa: PLC0415
    from .api import Status  # noqa: PLC0415

    coord = wiring.coord()
    wanted: list[str] = args.delivery or []
    if sys.stderr.isatty() and not args.json:
        print(f"waiting for {len(wanted) or outbox.inflight(coord)} delivery(ies)…",
              file=sys.stderr)
    if wanted:
        statuses = [Status(**row) for row in outbox.await_finished(coord, wanted, args.timeout)]
        left = sum(not st.finished for st in statuses)
    else:
        statuses, left = [], 0 if outbox.wait(coord, args.timeout) else outbox.inflight(coord)
    dead = [st for st in statuses if st.state == "dead_lettered"]
    if args.json:
        _print_json({"done": left == 0, "in_flight": left,
                     "deliveries": [asdict(st) for st in statuses]})
    elif left:
        print(f"memq: timed out after {args.timeout:g}s: {left} delivery(ies) still in flight "
              "(memq status shows the queues and workers)", file=sys.stderr)
    elif wanted:
        print(f"{len(wanted) - len(dead)} delivery(ies) done, {len(dead)} dead-lettered"
              + "".join(f"\n  {st.delivery_id}: {st.reason}" for st in dead))
    else:
        print(f"all enqueued batches done ({len(deadletters.dead_letters(coord))} in the "
              "dead-letter queue)")
    return 1 if left or dead else 0


def _memory_row(m: StoredMemory) -> str:
    until = f" until {m.invalid_at:%Y-%m-%d %H:%M}" if m.invalid_at else ""
    return (f"{m.status:<10} {m.kind:<11} {m.confidence:.2f}  {m.valid_at:%Y-%m-%d %H:%M}{until}"
            f"  {m.content}  [{m.id}]")


def cmd_memories(args: argparse.Namespace) -> int:
    as_of = None
    if args.as_of:
        as_of = _when(args.as_of, "--as-of")
    reader = _remote() or _local(args)
    found = reader.memories(args.user, include_inactive=args.all, as_of=as_of)
    if args.json:
        _print_json([m.model_dump(mode="json") for m in found])
    else:
        for m in found:
            print(_memory_row(m))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    entries = _local(args).audit(args.user, args.memory)
    if args.json:
        _print_json([e.model_dump(mode="json") for e in entries])
        return 0
    for e in entries:
        print(f"{e.at:%Y-%m-%d %H:%M:%S} {e.operation:<15} {e.memory_id}  turns={e.source_turn_ids}"
              f"  {e.reason}")
    return 0


def cmd_facts(args: argparse.Namespace) -> int:
    rows = _local(args).facts(args.user)
    if args.json:
        _print_json(rows)
        return 0
    for r in rows:
        state = "current" if r["invalid_at"] is None and r["expired_at"] is None else "closed"
        print(f"{state:<8} ({r['subject']}) -[{r['predicate']}]-> ({r['object']})"
              f"  valid {r['valid_at']:%Y-%m-%d} .. {r['invalid_at'] or ''}")
    return 0


def _positive(text: str) -> int:
    """An argparse type: a whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be 1 or more")
    return value


def _component(text: str) -> str:
    """An argparse type: a component of the local stack (not choices=: Python 3.11 checks an
    empty ``NAME...`` against them and refuses it)."""
    from .stack import COMPONENTS  # noqa: PLC0415

    if text not in COMPONENTS:
        raise argparse.ArgumentTypeError(f"{text!r}: one of {', '.join(COMPONENTS)}")
    return text


def _now(args: argparse.Namespace) -> datetime:
    if not getattr(args, "now", None):
        return datetime.now(UTC)
    return _when(args.now, "--now")


def _when(text: str, flag: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not an ISO 8601 time; "
                         "e.g. 2026-11-01T12:00:00Z") from None
    if value.tzinfo is None:
        raise UsageError(f"{flag} needs a time zone, e.g. 2026-11-01T12:00:00Z")
    return value


def _remote() -> Any:
    """The HTTP client when MEMQ_API_URL is set (memq search, context and memories ask the
    API then: a light install, a URL and MEMQ_API_KEY are enough); None: read here."""
    from .settings import Settings  # noqa: PLC0415

    if not Settings().api_url:
        return None
    from .http_client import HttpClient  # noqa: PLC0415

    return HttpClient()


def _local(args: argparse.Namespace) -> Any:
    """The stores, for the users of ``--tenant`` (default ``MEMQ_TENANT``): the CLI names
    users as every door does, ``<tenant>:<user>`` in the stores."""
    from . import auth  # noqa: PLC0415
    from .api import Client  # noqa: PLC0415

    tenant = getattr(args, "tenant", None)
    if tenant:
        try:
            auth.check_tenant(tenant)
        except auth.AuthError as exc:
            raise UsageError(f"--tenant: {exc}") from None
    return Client(tenant=tenant)


def _stores_id(args: argparse.Namespace) -> str:
    try:
        return str(_local(args).stores_id(args.user))
    except ValueError as exc:
        raise UsageError(f"--user: {exc}") from None


def cmd_search(args: argparse.Namespace) -> int:
    from .api import hit_json  # noqa: PLC0415

    remote = _remote() if not args.now else None
    if remote is not None:
        hits = remote.search(args.user, args.query, args.k, record=args.record)
    else:
        hits = _local(args).search(args.user, args.query, args.k, record=args.record,
                                   now=_now(args))
    rows = [hit_json(h) for h in hits]
    if args.json:
        _print_json(rows)
        return 0
    for h in rows:
        when = datetime.fromisoformat(h["event_at"])
        print(f"{h['score']:.3f} {h['type']:<7} {when:%Y-%m-%d %H:%M} {h['content']}  "
              f"[{h['id']}]")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    reader = _remote() or _local(args)
    block = reader.context(args.user, args.query, max_tokens=args.max_tokens, k=args.k)
    if args.json:
        _print_json({"user_id": args.user, "context": block, "chars": len(block)})
    else:
        print(block)
    return 0


def _shown_once(args: argparse.Namespace, secret: str, record: dict[str, Any],
                note: str) -> None:
    """A secret printed once: the record as JSON (--json), or the secret alone on stdout and
    what it is on stderr."""
    if args.json:
        _print_json(record)
    else:
        print(secret)
        print(f"memq: {note}", file=sys.stderr)


def cmd_webhooks(args: argparse.Namespace) -> int:
    """A tenant's webhook (workers/events.py): add (prints the signing secret once), list,
    remove."""
    from . import events, wiring  # noqa: PLC0415

    if args.action == "add":
        try:
            secret = events.subscribe(args.tenant, args.url)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        _shown_once(args, secret, {"tenant": args.tenant, "url": args.url, "secret": secret},
                    f"tenant {args.tenant}'s events go to {args.url}; the secret signs them "
                    "(X-Memq-Signature) and is shown once")
        return 0
    if args.action == "list":
        rows = events.subscriptions()
        if args.json:
            _print_json(rows)
        for tenant, url in rows.items() if not args.json else ():
            print(f"{tenant:<16} {url}")
        return 0
    if not events.remove_hook(wiring.coord(), args.tenant):
        raise UsageError(f"tenant {args.tenant} has no webhook (memq webhooks list)")
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    """API keys of memq serve, kept (hashed) in Redis: create, list, revoke, access."""
    from . import auth, wiring  # noqa: PLC0415

    store = auth.KeyStore(wiring.coord().r)
    if args.action == "create":
        text, key = store.create(args.tenant, args.scope, args.name or "")
        _shown_once(args, text, {"key": text, "id": key.id, "tenant": key.tenant,
                                 "scopes": sorted(key.scopes)},
                    f"key {key.id} of tenant {key.tenant} ({','.join(sorted(key.scopes))})"
                    " - shown once, stored only as its hash")
        return 0
    if args.action == "list":
        rows = [k.to_json() for k in store.all()]
        if args.json:
            _print_json(rows)
        for r in rows if not args.json else ():
            state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "live"
            print(f"{r['id']}  {r['tenant']:<16} {','.join(r['scopes']):<22} {state:<12} "
                  f"{r['created_at']}  {r['name']}")
        return 0
    if args.action == "revoke":
        found = store.revoke(args.key)
        if found is None:
            raise UsageError(f"no key {auth.key_id_of(args.key) or args.key[:20]} "
                             "(memq keys list shows them)")
        if args.json:
            _print_json(found.to_json())
        else:
            print(f"revoked key {found.id} of tenant {found.tenant} at {found.revoked_at}")
        return 0
    if bool(args.tenant) == bool(args.refused):
        raise UsageError("keys access wants --tenant T, or --refused (401s naming no tenant)")
    entries = store.access(auth.check_tenant(args.tenant) if args.tenant else None,
                           args.limit)  # access
    if args.json:
        _print_json(entries)
        return 0
    for e in entries:
        who = f"key {e['key'] or '-'}" + (f" from {e['address']}" if e.get("address") else "")
        print(f"{e['at']}  {who}  {e['method']:<6} {e['route']:<40} "
              f"user={e['user'] or '-'}  {e['status']}")
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    from . import stack  # noqa: PLC0415

    if not 1 <= args.api_port <= 65535:
        raise UsageError(f"--api-port {args.api_port}: a port is 1-65535")
    skip = {"worker"} if args.no_worker else set()
    skip |= {"server"} if args.no_server else set()
    skip |= {"beat"} if args.no_beat else set()
    names = args.names or [n for n in stack.COMPONENTS if n not in skip]
    return stack.up(stack.config(args.home, api_port=args.api_port), names)


def cmd_down(args: argparse.Namespace) -> int:
    from . import stack  # noqa: PLC0415

    return stack.down(stack.config(args.home), args.names or stack.COMPONENTS)


def cmd_status(args: argparse.Namespace) -> int:
    """The local stack first, when there is one (``--home``, or pid files in MEMQ_HOME: memq
    up, scripts/services), one line per component; then the queues, once Redis is up."""
    from . import stack  # noqa: PLC0415
    from .ops import status  # noqa: PLC0415

    cfg = stack.config(args.home)
    lines = stack.status(cfg, stack.COMPONENTS) if args.home or stack.in_use(cfg) else []
    if not all(line.up for line in lines):  # the queues need the Redis that is down
        if args.json:
            _print_json({"stack": [line.to_json() for line in lines]})
        for line in lines if not args.json else ():
            print(line.text())
        return 1
    now = status()
    if args.json:
        _print_json({**now, "stack": [line.to_json() for line in lines]} if lines else now)
        return 0
    for line in lines:
        print(line.text())
    oldest = now["oldest_inflight_s"]
    print(f"queues      {'  '.join(f'{q} {n}' for q, n in now['queues'].items())}")
    print(f"in flight   {now['inflight']} (oldest "
          f"{'-' if oldest is None else f'{oldest:.0f} s'}), mailboxes {now['mailboxes']}")
    print(f"dead letters {now['dead_letters']} (memq deadletters)   re-plans {now['replans']}")
    print(f"workers     {len(now['workers'])}: {', '.join(now['workers']) or 'none answering'}")
    fresh = now["freshness"]

    def sec(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f} s"

    print("freshness   " + "   ".join(
        f"{stage} p50 {sec(f['p50'])} p95 {sec(f['p95'])} ({f['count']:.0f})"
        for stage, f in fresh.items()))
    for kind, shards in now["shards"].items():
        if len(shards) > 1:  # sharded: each instance, up or not, and its users
            for sh in shards:
                print(f"{kind}[{sh['shard']}]   {'up  ' if sh['ok'] else 'DOWN'} "
                      f"{sh['detail']}  users placed {sh['users_placed']}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from . import wiring  # noqa: PLC0415
    from .ops import configuration, doctor, unauthenticated  # noqa: PLC0415

    checks = doctor()
    open_to_all = unauthenticated(wiring.settings())
    if args.json:
        _print_json({"ok": all(c.ok for c in checks), "checks": [c.to_json() for c in checks],
                     "unauthenticated": open_to_all, "configuration": configuration()})
    else:
        for c in checks:
            print(f"{'ok  ' if c.ok else 'FAIL'} {c.name:<9} {c.detail}  ({c.ms:.0f} ms)")
        for line in open_to_all:
            print(f"warn unauthenticated: {line}")
        if args.config:
            for key, value in configuration().items():
                print(f"{key}={'' if value is None else value}")
    return 0 if all(c.ok for c in checks) else 1


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415

    from .http import create_app, warm_reads_in_background  # noqa: PLC0415

    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 1-65535")
    import structlog  # noqa: PLC0415

    from . import wiring  # noqa: PLC0415
    from .ops import mask_url  # noqa: PLC0415

    s = wiring.settings()
    wiring.configure_logging(s.log_level)  # an operator's server: INFO unless MEMQ_LOG_LEVEL
    app = create_app()
    structlog.get_logger("memq.serve").info(
        "memq serve", url=f"http://{args.host}:{args.port}", auth=s.auth,
        tenant=s.tenant if s.auth == "off" else None, redis=mask_url(s.redis_url),
        neo4j=[mask_url(u) for u in s.graph_uris()],
        chroma=[f"{h}:{p}" for h, p in s.chroma_addresses()], docs="/docs", console="/ui/")
    # the first search finds the model loaded, the stores connected and Neo4j's plans made
    # (MEMQ_WARM=off: not); /readyz?path=read says ready once it is over
    warm_reads_in_background(app)
    # uvicorn's own lines stay at warnings: its access line carries the query string
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("mcp") is None:
        raise UsageError('memq mcp needs the MCP SDK: pip install "memq[mcp]"')
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 1-65535")
    from . import wiring  # noqa: PLC0415

    if not wiring.settings().api_url and not args.local:
        # an MCP host passes no environment unless told to: without the API's URL and a key
        # the server would open the stores directly, outside any tenant
        raise UsageError("memq mcp goes through memq serve: set MEMQ_API_URL and MEMQ_API_KEY "
                         "in the host's config (\"env\"), or give --local to open this "
                         "machine's stores directly")
    from .mcp import serve  # noqa: PLC0415

    serve(args.user, args.transport, args.host, args.port, tenant=args.tenant)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from . import wiring  # noqa: PLC0415
    from .lifecycle import timed  # noqa: PLC0415

    now = _now(args)
    users = [_stores_id(args)] if args.user else wiring.all_users()
    total = 0.0
    rows = []
    for user in users:
        result, seconds = timed(args.job, user, now, wait_s=60.0)
        total += seconds
        rows.append({"user_id": user, "examined": result.examined, "changed": result.changed,
                     "seconds": round(seconds, 3)})
        if not args.json:
            print(f"{args.job} {user}: examined {result.examined}, changed {result.changed} "
                  f"({seconds:.2f} s)")
    if args.json:
        _print_json({"job": args.job, "users": rows, "seconds": round(total, 3)})
    else:
        print(f"{args.job}: {len(users)} user(s) in {total:.2f} s")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from ..pipeline.errors import TransientError  # noqa: PLC0415

    try:
        report = _local(args).forget(args.user, args.memory,
                                     with_sources=args.with_sources)
        if args.purge and not args.memory:
            from . import wiring  # noqa: PLC0415

            # the tombstones too: demo and test data
            user = _stores_id(args)
            wiring.graph_for(user).delete_user(user)
    except TransientError as exc:
        print(f"memq: {exc}", file=sys.stderr)
        return 1
    return _report(args, report)


def _report(args: argparse.Namespace, report: Any) -> int:
    """A forget's or a scrub's report: as JSON (--json), or its one line."""
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.describe())
    return 0


def cmd_scrub(args: argparse.Namespace) -> int:
    import sqlite3  # noqa: PLC0415

    from ..pipeline.errors import TransientError  # noqa: PLC0415
    from .scrub import scrub  # noqa: PLC0415

    try:
        report = scrub(wait_s=args.wait)
    except (TransientError, sqlite3.Error, OSError) as exc:
        print(f"memq: scrub: {exc}", file=sys.stderr)
        return 1
    return _report(args, report)


def cmd_deadletters(args: argparse.Namespace) -> int:
    from . import deadletters, wiring  # noqa: PLC0415

    coord = wiring.coord()
    if args.requeue or args.requeue_all:
        return _requeue(coord, set(args.requeue or ()), every=args.requeue_all, json_out=args.json)
    if args.clear:
        gone = deadletters.take(coord, lambda _: True)
        print(f"cleared {len(gone)} dead letter(s)")
        return 0
    dead = deadletters.dead_letters(coord)
    if args.json:
        _print_json(dead)
    else:
        for d in dead:
            print(f"{d['at']} {d['stage']} {d['delivery_id']}: {d['reason']}")
    return 0


def _requeue(coord: Any, wanted: set[str], *, every: bool, json_out: bool) -> int:
    """Publish dead-lettered batches again (``ops.requeue_dead``)."""
    from .ops import requeue_dead  # noqa: PLC0415

    published, refused, missing = requeue_dead(coord, wanted, every=every)
    if json_out:
        _print_json({"requeued": [p.delivery_id for p in published],
                     "refused": [e.get("delivery_id") for e, _ in refused],
                     "not_found": missing})
    else:
        for p in published:
            print(f"requeued batch {p.batch_id} of user {p.user_id} as delivery {p.delivery_id}")
        for e, why in refused:
            print(f"memq: not requeued {e.get('delivery_id')}: {why}", file=sys.stderr)
        for d in missing:
            print(f"memq: no dead letter {d} with a batch (see memq deadletters)",
                  file=sys.stderr)
    return 1 if refused or missing else 0


def cmd_move_user(args: argparse.Namespace) -> int:
    from ..pipeline.errors import TransientError  # noqa: PLC0415
    from .shards import UserBusy, move  # noqa: PLC0415

    try:
        done = move(_stores_id(args), neo4j=args.neo4j, chroma=args.chroma, wait_s=args.wait)
    except (UserBusy, ValueError, TransientError) as exc:
        print(f"memq: {exc}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(asdict(done))
    else:
        print(f"moved: neo4j {done.source.neo4j} -> {done.target.neo4j} "
              f"({done.graph_nodes} nodes), chroma {done.source.chroma} -> "
              f"{done.target.chroma} ({done.chroma_records} records), epoch "
              f"{done.target.epoch}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from . import wiring  # noqa: PLC0415
    from .check import check_lines, check_user  # noqa: PLC0415

    users = [_stores_id(args)] if args.user else wiring.all_users()
    checked = [check_user(u, repair=args.repair) for u in users]
    memories = sum(c.memories for c in checked)
    found = sum(len(c.found) for c in checked)
    remaining = sum(len(c.remaining) for c in checked)
    busy = [c.user for c in checked if c.busy]
    if args.json:
        _print_json({
            "users": len(users), "memories": memories, "busy": busy,
            "drift": [{**d.to_json(), "repaired": args.repair and d.memory_id not in
                       {r.memory_id for r in c.remaining}}
                      for c in checked for d in c.found],
            "remaining": [d.to_json() for c in checked for d in c.remaining],
        })
    else:
        for line in check_lines(checked, repair=args.repair):
            print(line)
        if not found and not busy:
            print(f"no drift in {memories} memories of {len(users)} users")
        elif found:
            fixed = f", {found - remaining} repaired" if args.repair else ""
            print(f"{found} drift(s) in {memories} memories of {len(users)} users{fixed}, "
                  f"{remaining} remain")
    return 1 if remaining or busy else 0


def cmd_chroma_index(args: argparse.Namespace) -> int:
    from ..pipeline.adapters.chroma_log import main as index_main  # noqa: PLC0415

    return index_main([args.path])


def build_parser() -> argparse.ArgumentParser:  # noqa: PLR0915  (a table of commands)
    from .. import __version__  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="memq", description=__doc__)
    parser.add_argument("--version", action="version", version=f"memq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("schema", help="print the ingest JSON Schema (always JSON)")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_schema)
    p = sub.add_parser("enqueue", help="publish JSON Lines of turns (FILE or -)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_enqueue)
    sub.add_parser("worker", help="start a Celery worker (extra args go to celery)")
    sub.add_parser("beat", help="start the Celery beat scheduler")
    p = sub.add_parser("wait", help="return when these deliveries (default: everything in "
                                    "flight) are done or dead-lettered")
    p.add_argument("--delivery", nargs="+", metavar="ID", help="delivery ids (memq enqueue "
                   "prints them)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_wait)
    p = sub.add_parser("status", help="the local stack (memq up), queues, in flight, oldest "
                       "message, dead letters, workers")
    p.add_argument("--json", action="store_true")
    p.add_argument("--home", metavar="DIR", help="the local stack's folder (default MEMQ_HOME); "
                   "given, its stores are shown (and must be up) even before memq up")
    p.set_defaults(fn=cmd_status)
    p = sub.add_parser("up", help="start the local stack: Redis, Neo4j, Chroma, a worker, beat "
                       "and memq serve on 127.0.0.1 (installs what is missing where it can)")
    p.add_argument("--home", metavar="DIR", help="data, logs and pid files (default MEMQ_HOME)")
    p.add_argument("--no-worker", action="store_true", help="no background worker")
    p.add_argument("--no-server", action="store_true", help="no memq serve")
    p.add_argument("--no-beat", action="store_true",
                   help="no beat (the lifecycle jobs' scheduler: decay, expiry, consolidation)")
    p.add_argument("--api-port", type=int, default=8080, help="memq serve's port (8080)")
    p.add_argument("names", nargs="*", metavar="NAME", type=_component,
                   help="only these: redis, neo4j, chroma, worker, beat, server (default: all)")
    p.set_defaults(fn=cmd_up)
    p = sub.add_parser("down", help="stop what memq up started (SIGTERM, then SIGKILL)")
    p.add_argument("--home", metavar="DIR", help="the stack's folder (default MEMQ_HOME)")
    p.add_argument("names", nargs="*", metavar="NAME", type=_component,
                   help="only these (default: all)")
    p.set_defaults(fn=cmd_down)
    p = sub.add_parser("doctor", help="is every service, the LLM and the embedder reachable")
    p.add_argument("--json", action="store_true")
    p.add_argument("--config", action="store_true", help="also print the effective settings "
                   "(secrets masked)")
    p.set_defaults(fn=cmd_doctor)
    p = sub.add_parser("serve", help="the HTTP API (FastAPI; docs at /docs)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(fn=cmd_serve)
    p = sub.add_parser("mcp", help="an MCP server for one user (stdio, or streamable HTTP)")
    p.add_argument("--user", required=True, help="the one user its tools read and write")
    p.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--local", action="store_true",
                   help="open the stores directly (no MEMQ_API_URL): one machine, the users "
                        "of MEMQ_TENANT (--tenant)")
    p.set_defaults(fn=cmd_mcp)
    for name, fn in (("memories", cmd_memories), ("audit", cmd_audit), ("facts", cmd_facts),
                     ("search", cmd_search), ("forget", cmd_forget),
                     ("context", cmd_context)):
        p = sub.add_parser(name)
        p.add_argument("--user", required=True)
        p.add_argument("--json", action="store_true")
        p.set_defaults(fn=fn)
        if name == "memories":
            p.add_argument("--all", action="store_true", help="superseded and archived too")
            p.add_argument("--as-of", help="what was true at this time (ISO 8601 with zone)")
        if name == "audit":
            p.add_argument("--memory")
        if name == "forget":
            p.add_argument("--memory", help="one memory id; default: the whole user")
            p.add_argument("--with-sources", action="store_true",
                           help="with --memory: also forget the turns it was extracted from "
                                "(default: they stay; a user's turns go with the user)")
            p.add_argument("--purge", action="store_true",
                           help="also drop the audit trail, tombstones included (demo and "
                                "test data only: real forgetting keeps the tombstones)")
        if name == "search":
            p.add_argument("--k", type=_positive, default=10)
            p.add_argument("--now", help="rank as of this time (ISO 8601 with zone)")
            p.add_argument("--record", action="store_true",
                           help="count it as a recall (an agent acting on it): importance up, "
                                "decay clock reset; default: read-only")
            p.add_argument("--no-record", action="store_true", help=argparse.SUPPRESS)
            p.add_argument("query")
        if name == "context":
            p.add_argument("--max-tokens", type=_positive, default=800)
            p.add_argument("--k", type=_positive, default=10)
            p.add_argument("query")
    p = sub.add_parser("keys", help="API keys of memq serve: create, list, revoke, access")
    keys = p.add_subparsers(dest="action", required=True)
    k = keys.add_parser("create", help="a new key, printed once (stored only as its hash)")
    k.add_argument("--tenant", required=True, help="who owns the users the key names")
    k.add_argument("--scope", required=True, help="read,write,forget or admin (all of them "
                   "plus metrics, readiness details and the access record)")
    k.add_argument("--name", help="what the key is for")
    k = keys.add_parser("list", help="every key: id, tenant, scopes, live or revoked")
    k = keys.add_parser("revoke", help="refuse a key from now on")
    k.add_argument("key", metavar="KEY|ID")
    k = keys.add_parser("access", help="a tenant's access record, newest first")
    k.add_argument("--tenant", help="the tenant whose record to show")
    k.add_argument("--refused", action="store_true",
                   help="instead: refused calls (401) whose key names no tenant")
    k.add_argument("--limit", type=_positive, default=100)
    for k in keys.choices.values():
        k.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_keys)
    p = sub.add_parser("webhooks", help="a tenant's events, pushed to a URL, signed")
    hooks = p.add_subparsers(dest="action", required=True)
    k = hooks.add_parser("add", help="send the tenant's events to URL (tenant * : every event)")
    k.add_argument("--tenant", required=True)
    k.add_argument("--url", required=True)
    k = hooks.add_parser("list", help="every tenant's webhook URL")
    k = hooks.add_parser("remove", help="stop sending the tenant's events")
    k.add_argument("--tenant", required=True)
    for k in hooks.choices.values():
        k.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_webhooks)
    p = sub.add_parser("run", help="run a lifecycle job now (beat runs them on schedule)")
    p.add_argument("job", choices=("decay", "expire", "consolidate", "capacity", "reembed",
                                   "relocate"))
    p.add_argument("--user", help="one user (default: every user)")
    p.add_argument("--now", help="the job's notion of now (ISO 8601 with zone)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("move-user", help="move a user's data to other store shards (fenced: "
                       "its writes wait meanwhile; workers/shards.py)")
    p.add_argument("--user", required=True)
    p.add_argument("--neo4j", type=int, help="the Neo4j shard to move to (default: stay)")
    p.add_argument("--chroma", type=int, help="the Chroma shard to move to (default: stay)")
    p.add_argument("--wait", type=float, default=60.0,
                   help="seconds to wait for a drain of the user to let go")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_move_user)
    p = sub.add_parser("check", help="compare Chroma and Neo4j memory by memory")
    p.add_argument("--user", help="one user (default: every user of either store)")
    p.add_argument("--repair", action="store_true",
                   help="write each drift's truth to both stores, with a repair audit entry")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_check)
    p = sub.add_parser("scrub", help="take forgotten words out of the stores' files now "
                       "(a forget queues this by itself, MEMQ_SCRUB_DELAY_S later)")
    p.add_argument("--wait", type=float, default=120.0,
                   help="seconds to wait for Redis's rewrite (0: do not wait)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_scrub)
    p = sub.add_parser("deadletters", help="list the dead-letter queue with reasons")
    p.add_argument("--json", action="store_true")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--requeue", nargs="+", metavar="DELIVERY",
                      help="publish these dead-lettered batches again")
    what.add_argument("--requeue-all", "--all", action="store_true", dest="requeue_all",
                      help="publish every dead-lettered batch again")
    what.add_argument("--clear", action="store_true", help="drop every dead letter")
    p.set_defaults(fn=cmd_deadletters)
    p = sub.add_parser("chroma-index", help="add the index a local Chroma's write log lacks "
                       "(run where its data directory is, best while Chroma is stopped)")
    p.add_argument("path", help="Chroma's data directory (chroma run --path) or chroma.sqlite3")
    p.set_defaults(fn=cmd_chroma_index)
    tenant_help = ("the tenant whose user --user names (default MEMQ_TENANT): the stores see "
                   "<tenant>:<user>; ignored over HTTP (MEMQ_API_URL), where the key's applies")
    for name, command in sub.choices.items():
        if name == "enqueue" or any("--user" in a.option_strings for a in command._actions):
            command.add_argument("--tenant", help=tenant_help)
    return parser


def one_line(exc: BaseException) -> tuple[str, int]:
    """A failure the user can act on, as one line with the fix, and its exit code."""
    import redis  # noqa: PLC0415
    from pydantic import ValidationError  # noqa: PLC0415

    from ..pipeline.errors import PermanentError, TransientError  # noqa: PLC0415

    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    from .auth import AuthError  # noqa: PLC0415

    if isinstance(exc, UsageError | AuthError):  # a bad tenant, scope or user id: usage
        return text, 2
    from .http_client import ApiError  # noqa: PLC0415

    if isinstance(exc, ApiError):
        hint = {401: " (set MEMQ_API_KEY: memq keys create makes one)",
                403: " (the key's scopes: memq keys list)"}.get(exc.status, "")
        return f"{text}{hint}", 3 if exc.status in (429, 503) else 1
    if isinstance(exc, ValidationError) and exc.title == "Settings":  # the settings
        e = exc.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ")
        if not e["loc"]:
            return f"bad settings: {msg}", 2
        return f"bad setting MEMQ_{str(e['loc'][0]).upper()}: {msg}", 2
    if isinstance(exc, redis.RedisError):
        from . import wiring  # noqa: PLC0415
        from .ops import mask_url  # noqa: PLC0415

        return (f"cannot reach Redis at {mask_url(wiring.settings().redis_url)} ({text}); "
                "start it (memq up; in a checkout scripts/services up) or set MEMQ_REDIS_URL", 3)
    if isinstance(exc, TransientError):
        return f"{text}; is the service up? (memq doctor checks each one)", 3
    if type(exc).__module__.startswith("neo4j"):
        return (f"Neo4j: {text}; start it (memq up) or set MEMQ_NEO4J_URI "
                "(memq doctor checks each service)", 3)
    if isinstance(exc, ModuleNotFoundError):
        return (f"{text}: this command needs the worker extra: pip install \"memq[worker]\" "
                "(the HTTP API: \"memq[server]\")", 2)
    if isinstance(exc, PermanentError | ValueError | OSError | TimeoutError):
        return text, 1
    raise exc


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in ("worker", "beat"):
            return _celery(argv[0], argv[1:])
        args = build_parser().parse_args(argv)
        from . import wiring  # noqa: PLC0415

        wiring.configure_logging(os.environ.get("MEMQ_LOG_LEVEL", "WARNING"))
        return int(args.fn(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001  (re-raised unless it is one the user can fix)
        message, code = one_line(exc)
        print(f"memq: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
