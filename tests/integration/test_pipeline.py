"""The write pipeline end to end on real Redis, Neo4j, Chroma and a real worker process."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, cast

import pytest
import redis

from integration.conftest import (
    REDIS_URL,
    demo_lines,
    episodes,
    memq,
    memq_json,
    stored,
    wait_done,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("worker")]


def _state(user: str) -> tuple[list[dict], list[dict], int]:
    memories = memq_json("memories", "--user", user, "--all")
    audit = memq_json("audit", "--user", user)
    return memories, audit, len(episodes(user))


def test_demo_outcome(user_id: str) -> None:
    memq("enqueue", "-", stdin=demo_lines(user_id))
    wait_done()
    memories = memq_json("memories", "--user", user_id, "--all")
    by_content = {m["content"]: m for m in memories}
    ubuntu = by_content["The user's production environment is Ubuntu 22.04."]
    centos = by_content["The user's production environment is CentOS 7."]
    assert ubuntu["status"] == "current"
    assert centos["status"] == "superseded"
    assert centos["superseded_by"] == ubuntu["id"]
    assert centos["invalid_at"] == ubuntu["valid_at"]
    assert by_content["The user is a product manager."]["status"] == "current"
    assert by_content["用户喜欢简洁的回答。"]["status"] == "current"
    assert not [m for m in memories if "cat" in m["content"] or "cardboard" in m["content"]]
    assert len(memories) == 5

    trail = memq_json("audit", "--user", user_id, "--memory", centos["id"])
    supersede = [e for e in trail if e["operation"] == "supersede"]
    assert len(supersede) == 1
    assert supersede[0]["source_turn_ids"] == ["s-day2/d2-t1"]  # <session>/<turn>
    assert supersede[0]["after"]["status"] == "superseded"
    # Two workers may take day 2 before day 1: then CentOS arrives late, is stored as history
    # and was never current in the store (before=None). Either way the trail is the same.
    assert supersede[0]["before"] is None or supersede[0]["before"]["status"] == "current"

    # What was true on day 1, as known now: CentOS, not Ubuntu.
    day1 = [m["content"] for m in memq_json("memories", "--user", user_id,
                                            "--as-of", "2026-11-01T12:00:00Z")]
    assert "The user's production environment is CentOS 7." in day1
    assert "The user's production environment is Ubuntu 22.04." not in day1

    facts = memq_json("facts", "--user", user_id)
    prod = {f["object"]: f for f in facts if f["predicate"] == "production_environment"}
    assert prod["Ubuntu 22.04"]["invalid_at"] is None
    assert prod["CentOS 7"]["invalid_at"] is not None
    assert prod["CentOS 7"]["expired_at"] is not None


def test_same_jsonl_twice_changes_nothing(user_id: str) -> None:
    lines = demo_lines(user_id)
    memq("enqueue", "-", stdin=lines)
    wait_done()
    before = _state(user_id)
    assert before[2] == 8  # every turn is an episode, the assistant's and the joke too
    memq("enqueue", "-", stdin=lines)
    memq("enqueue", "-", stdin=lines)
    wait_done()
    assert _state(user_id) == before


def test_users_are_isolated(user_id: str) -> None:
    other = f"t-{uuid.uuid4().hex[:12]}"
    memq("enqueue", "-", stdin=demo_lines(user_id))
    mine = json.dumps({"user_id": other, "session_id": "s1", "turn_id": "x1", "role": "user",
                       "content": "Our production servers run Debian 12.",
                       "timestamp": "2026-11-03T08:00:00+00:00"})
    memq("enqueue", "-", stdin=mine + "\n")
    wait_done()
    theirs = memq_json("memories", "--user", other, "--all")
    assert [m["content"] for m in theirs] == ["The user's production environment is Debian 12."]
    # Debian 12 did not supersede anything of the first user, and no search crosses over.
    assert all(m["user_id"] == user_id for m in memq_json("memories", "--user", user_id, "--all"))
    hits = memq_json("search", "--user", other, "--k", "20", "production environment")
    assert hits and all("Debian" in h["content"] for h in hits)


def test_malformed_lines_reported_good_lines_processed(user_id: str) -> None:
    good = json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": "g1", "role": "user",
                       "content": "I live in Lisbon.", "timestamp": "2026-11-03T08:00:00Z"})
    no_time = json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": "g2",
                          "role": "user", "content": "I live in Porto."})
    bad_role = json.dumps({"user_id": user_id, "session_id": "s1", "turn_id": "g3",
                           "role": "robot", "content": "hi", "timestamp": "2026-11-03T08:00Z"})
    res = memq("enqueue", "-", stdin="\n".join([good, "{not json", no_time, bad_role]) + "\n",
               check=False)
    assert res.returncode == 1
    assert "line 2: rejected: not JSON" in res.stderr
    assert "line 3: rejected: timestamp" in res.stderr
    assert "line 4: rejected: role" in res.stderr
    assert "published 1 turn(s)" in res.stdout
    wait_done()
    contents = [m["content"] for m in memq_json("memories", "--user", user_id)]
    assert contents == ["The user lives in Lisbon."]


def test_permanent_failure_goes_to_dead_letter_queue(user_id: str) -> None:
    from memq.workers import queues, tasks
    from memq.workers.coord import Coord
    from memq.workers.layout import (
        delivery_bucket,
        delivery_key,
        inflight_key,
        new_delivery_id,
    )
    from memq.workers.wire import task_message

    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    tasks.app.conf.broker_url = REDIS_URL
    # An off-contract batch in the outbox: the message is fine, the batch is not.
    delivery = new_delivery_id(user_id)
    bad = json.dumps({"schema_version": "99", "user_id": user_id, "session_id": "s",
                      "turns": []})
    r.hset(delivery_key(delivery), mapping={"user": user_id, "batch": bad,
                                                  "enqueued_at": "1.0", "state": "queued"})
    r.sadd(inflight_key(delivery_bucket(delivery)), delivery)
    # published the way enqueue publishes (publish.publish_extract, on the tests' Redis db)
    queues.publish(Coord.from_url(REDIS_URL), *task_message(
        "memq.extract", [{"v": "1", "user_id": user_id, "delivery_id": delivery,
                          "token": None}]))
    # An off-contract message (the old payload shape): dead-lettered with the reason too.
    other = new_delivery_id(user_id)
    r.sadd(inflight_key(delivery_bucket(other)), other)
    tasks.extract.apply_async(({"delivery_id": other, "batch": {"user_id": user_id}},))
    wait_done(60)
    dead = {d["delivery_id"]: d for d in memq_json("deadletters")}
    assert dead[delivery]["stage"] == "memq.extract"
    assert dead[delivery]["reason"].startswith("InvalidMessage: not an IngestBatch v1")
    assert dead[delivery]["message"]["batch"] == bad
    assert dead[other]["reason"].startswith("InvalidMessage: not a StageMessage v1")


def test_dead_letters_are_requeued_without_duplicates(user_id: str) -> None:
    from memq.workers import deadletters
    from memq.workers.coord import Coord

    coord = Coord.from_url(REDIS_URL)
    batch = json.dumps({"schema_version": "1", "user_id": stored(user_id), "session_id": "s1",
                        "turns": [{"turn_id": "r1", "role": "user", "timestamp":
                                   "2026-11-03T09:00:00Z", "content": "I live in Tromsø."}]})
    # Dead-lettered twice (say an outage outlasted the retries, and a replay did too).
    for delivery in (f"dl1-{user_id}", f"dl2-{user_id}"):
        deadletters.dead_letter(coord, delivery, stored(user_id), "memq.extract",
                                "TransientError: planted", {"batch": batch})
    memq("deadletters", "--requeue", f"dl1-{user_id}", f"dl2-{user_id}")
    wait_done()
    memories = memq_json("memories", "--user", user_id)
    assert [m["content"] for m in memories] == ["The user lives in Tromsø."]
    assert len(memq_json("audit", "--user", user_id)) == 1  # once, not twice
    left = [d for d in memq_json("deadletters") if d.get("user_id") == user_id]
    assert left == []
    res = memq("deadletters", "--requeue", f"dl1-{user_id}", check=False)
    assert res.returncode == 1 and "no dead letter" in res.stderr


def test_a_stale_duplicate_failing_after_the_delivery_is_done_records_nothing(
        user_id: str) -> None:
    """A redelivered or reaped copy of a delivery that fails (say a worker stopped in the
    middle of it) after another run finished the delivery does not turn done into dead."""
    from memq.workers import deadletters, mailbox, outbox
    from memq.workers.coord import Coord

    coord = Coord.from_url(REDIS_URL)
    done, live = f"done-{user_id}", f"live-{user_id}"
    outbox.accept(coord, [(d, user_id, "{}") for d in (done, live)], time.time(),
                  time.time() + 60)
    mailbox.finish(coord, user_id, [done])
    assert not deadletters.dead_letter(coord, done, user_id, "memq.extract", "BufferError: late",
                                       None)
    assert deadletters.dead_letter(coord, live, user_id, "memq.extract", "BufferError: real",
                                   None)
    states = {s["delivery_id"]: s["state"] for s in outbox.statuses(coord, [done, live])}
    assert states == {done: "done", live: "dead_lettered"}
    dead = [d["delivery_id"] for d in deadletters.dead_letters(coord)
            if d.get("user_id") == user_id]
    assert dead == [live]
    deadletters.take(coord, lambda d: d.get("user_id") == user_id)


def test_the_reaper_reads_a_deep_queue_a_page_at_a_time_and_misses_nothing(
        user_id: str) -> None:
    """queued_deliveries pages through the queue (no single read of a whole backlog holds
    Redis up). Every delivery queued when it starts is found, though an agent enqueues
    mid-read (a push at the head shifts what is left to read; the reaper only asks about
    deliveries that were due before it read, so published before)."""
    from memq.schemas import StageMessage
    from memq.workers.coord import Coord
    from memq.workers.reaper import queued_deliveries
    from memq.workers.wire import task_message

    queue = f"memq:test:queue:{user_id}"  # a list of its own: no worker reads it
    ids = [uuid.uuid4().hex for _ in range(700)]
    late = uuid.uuid4().hex
    pages: list[tuple[int, int]] = []

    class Reading(redis.Redis):  # the real client; it records each read and, after the
        # first page, lets an agent enqueue
        def lrange(self, name: str, start: int, end: int) -> Any:
            pages.append((start, end))
            if len(pages) == 2:
                push([late])
            return super().lrange(name, start, end)

    coord = Coord(Reading.from_url(REDIS_URL, decode_responses=True))

    def push(delivery_ids: list[str]) -> None:
        redis.Redis.lpush(coord.r, queue, *(task_message("memq.extract", [StageMessage(
            user_id=user_id, delivery_id=d).model_dump()])[1] for d in delivery_ids))

    push(ids)
    try:
        found = queued_deliveries(coord, queue=queue, page=256)
    finally:
        coord.r.delete(queue)
    assert found == set(ids)  # the late one went to the head, read already
    assert pages == [(0, 255), (256, 511), (512, 767)]  # 701 on the queue by the 2nd page


def test_forget_purges_a_deep_queue_a_page_at_a_time(user_id: str) -> None:
    """purge_queued reads the queue in pages and removes the user's messages as it goes:
    what it removes shifts the rest back, and nothing of the user's is skipped."""
    from memq.schemas import StageMessage
    from memq.workers.coord import Coord
    from memq.workers.forget import purge_queued, queued_delivery
    from memq.workers.wire import QUEUE_PAGE, task_message

    coord = Coord.from_url(REDIS_URL)
    queue = f"memq:test:queue:{user_id}"  # a list of its own: no worker reads it
    other = f"{user_id}-other"
    owners = [user_id if i % 3 else other for i in range(3 * QUEUE_PAGE + 7)]
    coord.r.lpush(queue, *(task_message("memq.extract", [StageMessage(
        user_id=u, delivery_id=uuid.uuid4().hex).model_dump()])[1] for u in owners))
    try:
        removed = purge_queued(coord, user_id, keys=[queue])
        left = cast(list[str], coord.r.lrange(queue, 0, -1))
    finally:
        coord.r.delete(queue)
    assert removed == owners.count(user_id)
    assert len(left) == owners.count(other)
    assert all(queued_delivery(raw, other) is not None for raw in left)
