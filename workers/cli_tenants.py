"""``memq``'s commands on what a tenant is given: keys (memq serve's API keys, kept hashed in
Redis) and webhooks (its events, pushed to a URL)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .cli_shared import Commands, UsageError, positive, print_json


def _shown_once(args: argparse.Namespace, secret: str, record: dict[str, Any],
                note: str) -> None:
    """A secret printed once: the record as JSON (--json), or the secret alone on stdout and
    what it is on stderr."""
    if args.json:
        print_json(record)
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
            print_json(rows)
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
            print_json(rows)
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
            print_json(found.to_json())
        else:
            print(f"revoked key {found.id} of tenant {found.tenant} at {found.revoked_at}")
        return 0
    if bool(args.tenant) == bool(args.refused):
        raise UsageError("keys access wants --tenant T, or --refused (401s naming no tenant)")
    entries = store.access(auth.check_tenant(args.tenant) if args.tenant else None,
                           args.limit)  # access
    if args.json:
        print_json(entries)
        return 0
    for e in entries:
        who = f"key {e['key'] or '-'}" + (f" from {e['address']}" if e.get("address") else "")
        print(f"{e['at']}  {who}  {e['method']:<6} {e['route']:<40} "
              f"user={e['user'] or '-'}  {e['status']}")
    return 0


def add_keys(sub: Commands) -> None:
    p = sub.add_parser("keys", help="API keys of memq serve: create, list, revoke, access")
    keys = p.add_subparsers(dest="action", required=True)
    k = keys.add_parser("create", help="a new key, printed once (stored only as its hash)")
    k.add_argument("--tenant", required=True, help="who owns the users the key names")
    k.add_argument("--scope", required=True, help="read,write,forget or admin (all of them "
                   "plus metrics, readiness details and the access record)")
    k.add_argument("--name", help="what the key is for")
    keys.add_parser("list", help="every key: id, tenant, scopes, live or revoked")
    k = keys.add_parser("revoke", help="refuse a key from now on")
    k.add_argument("key", metavar="KEY|ID")
    k = keys.add_parser("access", help="a tenant's access record, newest first")
    k.add_argument("--tenant", help="the tenant whose record to show")
    k.add_argument("--refused", action="store_true",
                   help="instead: refused calls (401) whose key names no tenant")
    k.add_argument("--limit", type=positive, default=100)
    for k in keys.choices.values():
        k.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_keys)


def add_webhooks(sub: Commands) -> None:
    p = sub.add_parser("webhooks", help="a tenant's events, pushed to a URL, signed")
    hooks = p.add_subparsers(dest="action", required=True)
    k = hooks.add_parser("add", help="send the tenant's events to URL (tenant * : every event)")
    k.add_argument("--tenant", required=True)
    k.add_argument("--url", required=True)
    hooks.add_parser("list", help="every tenant's webhook URL")
    k = hooks.add_parser("remove", help="stop sending the tenant's events")
    k.add_argument("--tenant", required=True)
    for k in hooks.choices.values():
        k.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_webhooks)
