"""``memq``'s commands on users' data: schema, enqueue and wait (the write path); memories,
audit, facts, search and context (the reads); forget."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict
from datetime import datetime

from ..schemas import IngestBatch, StoredMemory
from .cli_shared import (
    Commands,
    local_client,
    now_of,
    parse_time,
    positive,
    print_json,
    print_report,
    remote_client,
    stores_id,
)


def cmd_schema(_: argparse.Namespace) -> int:
    print_json(IngestBatch.model_json_schema())
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
    client = local_client(args)
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
        print_json({"published": [asdict(p) for p in published],
                    "rejected": [asdict(e) for e in errors]})
    return 1 if errors else 0


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
        print_json({"done": left == 0, "in_flight": left,
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
        as_of = parse_time(args.as_of, "--as-of")
    reader = remote_client() or local_client(args)
    found = reader.memories(args.user, include_inactive=args.all, as_of=as_of)
    if args.json:
        print_json([m.model_dump(mode="json") for m in found])
    else:
        for m in found:
            print(_memory_row(m))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    entries = local_client(args).audit(args.user, args.memory)
    if args.json:
        print_json([e.model_dump(mode="json") for e in entries])
        return 0
    for e in entries:
        print(f"{e.at:%Y-%m-%d %H:%M:%S} {e.operation:<15} {e.memory_id}  turns={e.source_turn_ids}"
              f"  {e.reason}")
    return 0


def cmd_facts(args: argparse.Namespace) -> int:
    rows = local_client(args).facts(args.user)
    if args.json:
        print_json(rows)
        return 0
    for r in rows:
        state = "current" if r["invalid_at"] is None and r["expired_at"] is None else "closed"
        print(f"{state:<8} ({r['subject']}) -[{r['predicate']}]-> ({r['object']})"
              f"  valid {r['valid_at']:%Y-%m-%d} .. {r['invalid_at'] or ''}")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from .api import hit_json  # noqa: PLC0415

    remote = remote_client() if not args.now else None
    if remote is not None:
        hits = remote.search(args.user, args.query, args.k, record=args.record)
    else:
        hits = local_client(args).search(args.user, args.query, args.k, record=args.record,
                                         now=now_of(args))
    rows = [hit_json(h) for h in hits]
    if args.json:
        print_json(rows)
        return 0
    for h in rows:
        when = datetime.fromisoformat(h["event_at"])
        print(f"{h['score']:.3f} {h['type']:<7} {when:%Y-%m-%d %H:%M} {h['content']}  "
              f"[{h['id']}]")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    reader = remote_client() or local_client(args)
    block = reader.context(args.user, args.query, max_tokens=args.max_tokens, k=args.k)
    if args.json:
        print_json({"user_id": args.user, "context": block, "chars": len(block)})
    else:
        print(block)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from ..pipeline.errors import TransientError  # noqa: PLC0415

    try:
        report = local_client(args).forget(args.user, args.memory,
                                           with_sources=args.with_sources)
        if args.purge and not args.memory:
            from . import wiring  # noqa: PLC0415

            # the tombstones too: demo and test data
            user = stores_id(args)
            wiring.graph_for(user).delete_user(user)
    except TransientError as exc:
        print(f"memq: {exc}", file=sys.stderr)
        return 1
    return print_report(args, report)


def add_schema(sub: Commands) -> None:
    p = sub.add_parser("schema", help="print the ingest JSON Schema (always JSON)")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_schema)


def add_enqueue(sub: Commands) -> None:
    p = sub.add_parser("enqueue", help="publish JSON Lines of turns (FILE or -)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_enqueue)


def add_wait(sub: Commands) -> None:
    p = sub.add_parser("wait", help="return when these deliveries (default: everything in "
                                    "flight) are done or dead-lettered")
    p.add_argument("--delivery", nargs="+", metavar="ID", help="delivery ids (memq enqueue "
                   "prints them)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_wait)


def _user_command(sub: Commands, name: str,
                  fn: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """A command on one user's data: ``--user``, ``--json``, then its own arguments."""
    p = sub.add_parser(name)
    p.add_argument("--user", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=fn)
    return p


def add_memories(sub: Commands) -> None:
    p = _user_command(sub, "memories", cmd_memories)
    p.add_argument("--all", action="store_true", help="superseded and archived too")
    p.add_argument("--as-of", help="what was true at this time (ISO 8601 with zone)")


def add_audit(sub: Commands) -> None:
    p = _user_command(sub, "audit", cmd_audit)
    p.add_argument("--memory")


def add_facts(sub: Commands) -> None:
    _user_command(sub, "facts", cmd_facts)


def add_search(sub: Commands) -> None:
    p = _user_command(sub, "search", cmd_search)
    p.add_argument("--k", type=positive, default=10)
    p.add_argument("--now", help="rank as of this time (ISO 8601 with zone)")
    p.add_argument("--record", action="store_true",
                   help="count it as a recall (an agent acting on it): importance up, "
                        "decay clock reset; default: read-only")
    p.add_argument("--no-record", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("query")


def add_forget(sub: Commands) -> None:
    p = _user_command(sub, "forget", cmd_forget)
    p.add_argument("--memory", help="one memory id; default: the whole user")
    p.add_argument("--with-sources", action="store_true",
                   help="with --memory: also forget the turns it was extracted from "
                        "(default: they stay; a user's turns go with the user)")
    p.add_argument("--purge", action="store_true",
                   help="also drop the audit trail, tombstones included (demo and "
                        "test data only: real forgetting keeps the tombstones)")


def add_context(sub: Commands) -> None:
    p = _user_command(sub, "context", cmd_context)
    p.add_argument("--max-tokens", type=positive, default=800)
    p.add_argument("--k", type=positive, default=10)
    p.add_argument("query")
