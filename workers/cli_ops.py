"""``memq``'s operator commands: status and doctor (is it up, is it healthy); run, move-user,
check and scrub (work on the stores now); deadletters; chroma-index."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from .cli_shared import Commands, now_of, print_json, print_report, stores_id


def cmd_status(args: argparse.Namespace) -> int:
    """The local stack first, when there is one (``--home``, or pid files in MEMQ_HOME: memq
    up, scripts/services), one line per component; then the queues, once Redis is up."""
    from . import stack  # noqa: PLC0415
    from .ops import status  # noqa: PLC0415

    cfg = stack.config(args.home)
    lines = stack.status(cfg, stack.COMPONENTS) if args.home or stack.in_use(cfg) else []
    if not all(line.up for line in lines):  # the queues need the Redis that is down
        if args.json:
            print_json({"stack": [line.to_json() for line in lines]})
        for line in lines if not args.json else ():
            print(line.text())
        return 1
    now = status()
    if args.json:
        print_json({**now, "stack": [line.to_json() for line in lines]} if lines else now)
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
        print_json({"ok": all(c.ok for c in checks), "checks": [c.to_json() for c in checks],
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


def cmd_run(args: argparse.Namespace) -> int:
    from . import wiring  # noqa: PLC0415
    from .lifecycle import timed  # noqa: PLC0415

    now = now_of(args)
    users = [stores_id(args)] if args.user else wiring.all_users()
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
        print_json({"job": args.job, "users": rows, "seconds": round(total, 3)})
    else:
        print(f"{args.job}: {len(users)} user(s) in {total:.2f} s")
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
    return print_report(args, report)


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
        print_json(dead)
    else:
        for d in dead:
            print(f"{d['at']} {d['stage']} {d['delivery_id']}: {d['reason']}")
    return 0


def _requeue(coord: Any, wanted: set[str], *, every: bool, json_out: bool) -> int:
    """Publish dead-lettered batches again (``ops.requeue_dead``)."""
    from .ops import requeue_dead  # noqa: PLC0415

    published, refused, missing = requeue_dead(coord, wanted, every=every)
    if json_out:
        print_json({"requeued": [p.delivery_id for p in published],
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
    from .shards import move  # noqa: PLC0415

    try:
        done = move(stores_id(args), neo4j=args.neo4j, chroma=args.chroma, wait_s=args.wait)
    except (ValueError, TransientError) as exc:  # busy (UserBusy), a store down
        print(f"memq: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print_json(asdict(done))
    else:
        print(f"moved: neo4j {done.source.neo4j} -> {done.target.neo4j} "
              f"({done.graph_nodes} nodes), chroma {done.source.chroma} -> "
              f"{done.target.chroma} ({done.chroma_records} records), epoch "
              f"{done.target.epoch}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from . import wiring  # noqa: PLC0415
    from .check import check_lines, check_user  # noqa: PLC0415

    users = [stores_id(args)] if args.user else wiring.all_users()
    checked = [check_user(u, repair=args.repair) for u in users]
    memories = sum(c.memories for c in checked)
    found = sum(len(c.found) for c in checked)
    remaining = sum(len(c.remaining) for c in checked)
    busy = [c.user for c in checked if c.busy]
    if args.json:
        print_json({
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


def add_status(sub: Commands) -> None:
    p = sub.add_parser("status", help="the local stack (memq up), queues, in flight, oldest "
                       "message, dead letters, workers")
    p.add_argument("--json", action="store_true")
    p.add_argument("--home", metavar="DIR", help="the local stack's folder (default MEMQ_HOME); "
                   "given, its stores are shown (and must be up) even before memq up")
    p.set_defaults(fn=cmd_status)


def add_doctor(sub: Commands) -> None:
    p = sub.add_parser("doctor", help="is every service, the LLM and the embedder reachable")
    p.add_argument("--json", action="store_true")
    p.add_argument("--config", action="store_true", help="also print the effective settings "
                   "(secrets masked)")
    p.set_defaults(fn=cmd_doctor)


def add_run(sub: Commands) -> None:
    p = sub.add_parser("run", help="run a lifecycle job now (beat runs them on schedule)")
    p.add_argument("job", choices=("decay", "expire", "consolidate", "capacity", "reembed",
                                   "relocate"))
    p.add_argument("--user", help="one user (default: every user)")
    p.add_argument("--now", help="the job's notion of now (ISO 8601 with zone)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_run)


def add_move_user(sub: Commands) -> None:
    p = sub.add_parser("move-user", help="move a user's data to other store shards (fenced: "
                       "its writes wait meanwhile; workers/shards.py)")
    p.add_argument("--user", required=True)
    p.add_argument("--neo4j", type=int, help="the Neo4j shard to move to (default: stay)")
    p.add_argument("--chroma", type=int, help="the Chroma shard to move to (default: stay)")
    p.add_argument("--wait", type=float, default=60.0,
                   help="seconds to wait for a drain of the user to let go")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_move_user)


def add_check(sub: Commands) -> None:
    p = sub.add_parser("check", help="compare Chroma and Neo4j memory by memory")
    p.add_argument("--user", help="one user (default: every user of either store)")
    p.add_argument("--repair", action="store_true",
                   help="write each drift's truth to both stores, with a repair audit entry")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_check)


def add_scrub(sub: Commands) -> None:
    p = sub.add_parser("scrub", help="take forgotten words out of the stores' files now "
                       "(a forget queues this by itself, MEMQ_SCRUB_DELAY_S later)")
    p.add_argument("--wait", type=float, default=120.0,
                   help="seconds to wait for Redis's rewrite (0: do not wait)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_scrub)


def add_deadletters(sub: Commands) -> None:
    p = sub.add_parser("deadletters", help="list the dead-letter queue with reasons")
    p.add_argument("--json", action="store_true")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--requeue", nargs="+", metavar="DELIVERY",
                      help="publish these dead-lettered batches again")
    what.add_argument("--requeue-all", "--all", action="store_true", dest="requeue_all",
                      help="publish every dead-lettered batch again")
    what.add_argument("--clear", action="store_true", help="drop every dead letter")
    p.set_defaults(fn=cmd_deadletters)


def add_chroma_index(sub: Commands) -> None:
    p = sub.add_parser("chroma-index", help="add the index a local Chroma's write log lacks "
                       "(run where its data directory is, best while Chroma is stopped)")
    p.add_argument("path", help="Chroma's data directory (chroma run --path) or chroma.sqlite3")
    p.set_defaults(fn=cmd_chroma_index)
