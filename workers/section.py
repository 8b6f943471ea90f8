"""The per-user section: at most one worker at a time does a user's work (workers.coord has
the words). Its claim is a token with a lease under the user's claim key; the claimant renews
it while it works, drains the user's mailbox, and releases it atomically with finding the
mailbox empty. A drain that has had its turns hands off (publishes the next drain with the
claim); work outside the pipeline holds the claim for its span; the reaper wakes the orphans
(users with work waiting and no claimant) by claiming them and handing off.

The claim is not what keeps a user's writes correct -- the graph's version fence is -- it
keeps two workers from doing the same user's work at once.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

import structlog

from . import mailbox
from .coord import Coord, beating
from .layout import RELEASED, bucket, claim_key, mailbox_key, mailboxes_key

log = structlog.get_logger(__name__)

Handoff = Callable[[str, str], None]  # (user, token): publish the user's drain with the claim


def new_token() -> str:
    return uuid.uuid4().hex


def claim(coord: Coord, user_id: str, lease_s: float, token: str | None = None) -> str | None:
    token = token or new_token()
    if coord.r.set(claim_key(user_id), token, nx=True, px=int(lease_s * 1000)):
        return token
    return None


def reclaim(coord: Coord, user_id: str, token: str, lease_s: float) -> bool:
    """Whether ``token`` holds the user: a redelivered or retried drain whose claim lapsed
    takes it back if nobody else did."""
    current = claimant(coord, user_id)
    if current is None:
        return claim(coord, user_id, lease_s, token=token) is not None
    return current == token


def claimant(coord: Coord, user_id: str) -> str | None:
    return cast(str | None, coord.r.get(claim_key(user_id)))


def renew(coord: Coord, user_id: str, token: str, lease_s: float) -> bool:
    return bool(coord.script("renew")(keys=[claim_key(user_id)],
                                      args=[token, int(lease_s * 1000)]))


def drop(coord: Coord, user_id: str, token: str) -> None:
    """Drop the claim if it is still ours, whatever waits (the reaper claims it again)."""
    coord.script("drop")(keys=[claim_key(user_id)], args=[token])


def release(coord: Coord, user_id: str, token: str) -> int:
    """1: let go (mailbox empty); 0: work waiting, keep draining; -1: not the claimant."""
    return int(coord.script("release")(
        keys=[claim_key(user_id), mailbox_key(user_id), mailboxes_key(bucket(user_id))],
        args=[token, user_id]))


@contextmanager
def renewing(coord: Coord, user_id: str, token: str, lease_s: float) -> Iterator[None]:
    """Renew the claim in the background while the claimant works."""
    with beating(lambda: renew(coord, user_id, token, lease_s), lease_s / 3):
        yield


def drain(coord: Coord, user_id: str, token: str, lease_s: float, *, take: int, turns: int,
          run_round: Callable[[str, list[str]], None], handoff: Handoff) -> None:
    """The claimant's loop: up to ``take`` deliveries of the mailbox a round (``run_round``),
    until the mailbox is empty and the claim is released with it, or ``turns`` rounds were had
    (fair to other users: ``handoff``, to the back of the queue, the claim kept), or the claim
    was lost (a pause past the lease: another drain has it)."""
    if not reclaim(coord, user_id, token, lease_s):
        log.info("user claimed by another drain; nothing to do")
        return
    rounds = 0
    with renewing(coord, user_id, token, lease_s):
        while True:
            waiting = mailbox.waiting(coord, user_id, take)
            if not waiting:
                if release(coord, user_id, token) != 0:
                    return  # let go (or lost the claim): nothing stranded, see ``release``
                continue
            if rounds >= turns:
                handoff(user_id, token)
                return
            rounds += 1
            run_round(user_id, waiting)
            if claimant(coord, user_id) != token:
                log.warning("claim lapsed during the round (paused?); another drain has it")
                return


@contextmanager
def hold(coord: Coord, user_id: str, lease_s: float, wait_s: float,
         handoff: Handoff) -> Iterator[str | None]:
    """The claim, for work outside the pipeline (check, lifecycle, forget, a shard move): waits
    up to ``wait_s`` for the drain that holds it; yields the token, or None. On exit,
    deliveries posted meanwhile are handed on with the claim: ``handoff(user, token)``
    publishes the drain."""
    token = claim(coord, user_id, lease_s)
    if token is None and wait_s > 0:
        token = _claim_when_released(coord, user_id, lease_s, time.monotonic() + wait_s)
    try:
        if token is None:
            yield None
        else:
            with renewing(coord, user_id, token, lease_s):
                yield token
    finally:
        if token is not None and release(coord, user_id, token) == 0:
            handoff(user_id, token)


def _claim_when_released(coord: Coord, user_id: str, lease_s: float, deadline: float
                         ) -> str | None:
    """Block until the user's claim is let go (its claimant publishes on RELEASED) or runs out
    (a dead claimant's lease: the wait never outlasts it), then claim; None at the deadline.
    Subscribed before each attempt, so a release between the two is seen."""
    key = claim_key(user_id)
    with coord.listening(RELEASED) as heard:
        while (token := claim(coord, user_id, lease_s)) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            lease_left = int(coord.r.pttl(key)) / 1000
            heard(lambda message: message == key,
                  min(left, lease_left + 0.01 if lease_left > 0 else 0.01))
    return token


def orphans(coord: Coord) -> list[str]:
    """Users whose mailbox holds work and whom nobody has claimed (the claimant died, or was
    frozen past its lease); users with an empty mailbox are dropped from the set."""
    users = sorted(u for got in coord.each([mailboxes_key(b) for b in coord.buckets()],
                                           "smembers") for u in got)
    if not users:
        return []
    pipe = coord.r.pipeline(transaction=False)
    for u in users:
        pipe.exists(claim_key(u))
        pipe.zcard(mailbox_key(u))
    flags = pipe.execute()
    out = []
    for i, u in enumerate(users):
        claimed, waiting = flags[2 * i], flags[2 * i + 1]
        if not claimed and waiting:
            out.append(u)
    return out


def wake_orphans(coord: Coord, lease_s: float, handoff: Handoff) -> int:
    """Claim each orphan and hand its drain off (the reaper's pass); how many were woken."""
    woken = 0
    for user_id in orphans(coord):
        token = claim(coord, user_id, lease_s)
        if token is not None:
            handoff(user_id, token)
            woken += 1
    return woken
