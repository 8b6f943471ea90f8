"""Stress run with a serial oracle (see scripts/stress). Prints one line per figure."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

SLOTS = {  # single-valued: values change, never come back
    "production_environment": ("Our production servers run {}.",
                               ["CentOS 7", "Ubuntu 22.04", "Debian 12", "Rocky Linux 9",
                                "Alpine 3.19", "Fedora 40"]),
    "lives_in": ("I live in {}.", ["Lisbon", "Porto", "Berlin", "Osaka", "Nairobi", "Quito"]),
    "role": ("I'm a {}.", ["data engineer", "product manager", "staff engineer",
                           "designer", "researcher"]),
    "works_at": ("I work at {}.", ["Initech", "Globex", "Umbrella", "Hooli", "Vandelay"]),
}
MULTI = {  # multi-valued: accumulate
    "likes": ("I like {}.", ["jazz", "hiking", "chess", "sushi", "cycling", "origami"]),
    "uses": ("We use {}.", ["Terraform", "Grafana", "Kafka", "Postgres", "Kubernetes"]),
}
# a change of tool ends the one it names ("switched from X"), though 'uses' holds many: what
# it switches to is said only there, and what it ends is never said again
SWITCH = ("We switched from {} to {}.", ["Pulumi", "Datadog", "Pulsar", "CockroachDB", "Nomad"])
ENDED = ""  # oracle: the slot holds no value now (a role whose employer changed since)
NOISE = ["Hi there!", "Thanks, that helps.", "Haha, if I were a cat I'd nap all day.",
         "What time is it in Tokyo?", "Could you summarise that?"]


@dataclass
class UserPlan:
    user_id: str
    lines: list[dict[str, object]] = field(default_factory=list)
    # pred, obj, t; "-uses": the tool a switch ended
    statements: list[tuple[str, str, datetime]] = field(default_factory=list)


def generate(user_id: str, turns: int, rng: random.Random) -> UserPlan:
    plan = UserPlan(user_id)
    slot_seq = {p: rng.sample(v, k=min(len(v), rng.randint(1, 3))) for p, (_, v) in SLOTS.items()}
    slot_pos = dict.fromkeys(SLOTS, 0)
    used: list[str] = []  # tools stated and not yet switched from
    retired: set[str] = set()
    t = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 600))
    session, in_session = 0, 0
    for _ in range(turns):
        if in_session == 0 or (in_session >= 6 and rng.random() < 0.3):
            session, in_session = session + 1, 0
            t += timedelta(days=1)
        in_session += 1
        t += timedelta(minutes=1)
        roll = rng.random()
        if roll < 0.45:  # a single-valued statement: repeat the value or move to the next
            pred = rng.choice(list(SLOTS))
            seq = slot_seq[pred]
            if slot_pos[pred] + 1 < len(seq) and rng.random() < 0.5:
                slot_pos[pred] += 1
            obj = seq[slot_pos[pred]]
            content, role = SLOTS[pred][0].format(obj), "user"
            plan.statements.append((pred, obj, t))
        elif roll < 0.66 and used and rng.random() < 0.4:  # a switch of tool
            # to the tool for the same job (a tool ends the one its job had: tools.json)
            old = rng.choice(used)
            new = SWITCH[1][MULTI["uses"][1].index(old)]
            used.remove(old)
            retired.add(old)
            content, role = SWITCH[0].format(old, new), "user"
            plan.statements += [("-uses", old, t), ("uses", new, t)]
        elif roll < 0.7:  # multi-valued, sometimes a repeat
            pred = rng.choice(list(MULTI))
            if all(o in retired for o in MULTI[pred][1]):
                pred = "likes"  # every tool switched from
            obj = rng.choice([o for o in MULTI[pred][1] if o not in retired])
            content, role = MULTI[pred][0].format(obj), "user"
            plan.statements.append((pred, obj, t))
            if pred == "uses" and obj not in used:
                used.append(obj)
        elif roll < 0.85:
            content, role = "Noted.", "assistant"
        else:
            content, role = rng.choice(NOISE), "user"
        # Turn ids numbered per session (t1, t2, ... in every session), as many producers do.
        plan.lines.append({"user_id": user_id, "session_id": f"s{session:03d}",
                           "turn_id": f"t{in_session}", "role": role, "content": content,
                           "timestamp": t.isoformat()})
    return plan


def oracle(plan: UserPlan) -> tuple[dict[str, list[tuple[str, datetime]]], dict[str, set[str]]]:
    """Serial, in event order: single slots as runs of equal values, multi as sets. A new
    employer ends the role held there (predicates.json: closes_with): the next statement of
    a role of another value starts a run of its own, the same role said again holds on, and
    a role not said since is current no more (its runs then end with ``ENDED``)."""
    runs: dict[str, list[tuple[str, datetime]]] = defaultdict(list)
    multi: dict[str, set[str]] = defaultdict(set)
    role_open = False
    for pred, obj, t in sorted(plan.statements, key=lambda s: s[2]):
        if pred == "works_at" and runs[pred] and runs[pred][-1][0] != obj:
            role_open = False  # the employer changed: the role held there ends
        if pred in SLOTS:
            if pred == "role":
                role_open = True
            if not runs[pred] or runs[pred][-1][0] != obj:
                runs[pred].append((obj, t))
        elif pred.startswith("-"):  # a switch ended it
            multi[pred[1:]].discard(obj)
        else:
            multi[pred].add(obj)
    if runs.get("role") and not role_open:
        runs["role"].append((ENDED, runs["role"][-1][1]))
    return runs, multi


HOSTS: Any = None  # netns.Hosts with --netns: worker i runs in namespace i % n


def start_worker(i: int, env: dict[str, str], logdir: Path) -> subprocess.Popen[bytes]:
    log = (logdir / f"stress-worker-{i}.log").open("ab")
    prefix: list[str] = []
    if HOSTS is not None:  # on a "host" of its own: the stores over its link
        link = HOSTS.links[i % len(HOSTS.links)]
        prefix = HOSTS.prefix(i % len(HOSTS.links))
        env = {**env, "MEMQ_REDIS_URL": env["MEMQ_REDIS_URL"].replace("127.0.0.1", link.host_ip),
               "MEMQ_NEO4J_URI": f"bolt://{link.host_ip}:{env.get('MEMQ_NEO4J_PORT', '7687')}",
               "MEMQ_CHROMA_HOST": link.host_ip,
               **{k: env[k].replace("127.0.0.1", link.host_ip)
                  for k in ("MEMQ_NEO4J_SHARDS", "MEMQ_CHROMA_SHARDS") if env.get(k)}}
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "memq.workers.cli", "worker", "--concurrency", "1",
         "-n", f"stress{i}@%h"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """The worker's whole process group: its main process and its pool child."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


class Faults:
    """Pause (SIGSTOP past every lease and stall bound, then SIGCONT) or kill -9 random
    workers while the run goes on; burn CPU with busy processes. Counts what it did."""

    def __init__(self, args: argparse.Namespace, workers: list[subprocess.Popen[bytes]],
                 env: dict[str, str], logdir: Path, rng: random.Random) -> None:
        self.args, self.workers, self.env, self.logdir, self.rng = args, workers, env, logdir, rng
        self.stop = threading.Event()
        self.paused = self.killed = self.cut = 0
        # at the workers' priority (each in a session of its own, as the workers): background
        # work that competes with them, not a foreground process they yield to
        burn = ("from memq.workers.ops import yield_cpu; from memq.workers.settings import load; "
                "yield_cpu(load().worker_nice)\nwhile True: pass")
        self.burners = [subprocess.Popen([sys.executable, "-c", burn], env=env,
                                         start_new_session=True) for _ in range(args.cpu_burn)]
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.5, 1.5) * self.args.fault_every):
            if self.args.cut_links:  # a host's link down mid-run, then back
                k = self.rng.randrange(len(HOSTS.links))
                HOSTS.cut(k)
                self.cut += 1
                self.stop.wait(self.args.cut_s)
                HOSTS.restore(k)
            i = self.rng.randrange(len(self.workers))
            if self.args.kill_workers:
                signal_group(self.workers[i], signal.SIGKILL)
                self.workers[i].wait()
                self.workers[i] = start_worker(i, self.env, self.logdir)
                self.killed += 1
            if self.args.pause_workers:
                signal_group(self.workers[i], signal.SIGSTOP)
                self.paused += 1
                self.stop.wait(self.args.pause_s)
                signal_group(self.workers[i], signal.SIGCONT)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=self.args.pause_s + 30)
        for w in self.workers:
            signal_group(w, signal.SIGCONT)
        for b in self.burners:
            b.kill()
            b.wait()


class Shards:
    """The store shards past the first (``--neo4j-shards``, ``--chroma-shards``): instances of
    this run's own, started by scripts/services on free ports under MEMQ_HOME/shards/, named to
    the workers by MEMQ_NEO4J_SHARDS / MEMQ_CHROMA_SHARDS; one of them restarted mid-run
    (``--restart-shard``), with the deliveries finished while it was down counted per shard."""

    def __init__(self, args: argparse.Namespace, home: Path) -> None:
        self.args, self.extra = args, []  # (kind, index, env of its scripts/services)
        self.down_at = self.up_at = None
        self.finished: list[tuple[float, str]] = []  # (monotonic, delivery id)
        self.stop, self.flowing, self.no_moves = (threading.Event(), threading.Event(),
                                                  threading.Event())
        for kind, n in (("neo4j", args.neo4j_shards), ("chroma", args.chroma_shards)):
            for i in range(1, n):
                with contextlib.closing(socket.socket()) as s:
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                env = {**os.environ, "MEMQ_HOME": str(home / "shards" / f"{kind}-{i}"),
                       f"MEMQ_{kind.upper()}_PORT": str(port)}
                self.extra.append((kind, i, port, env))
                self.services("up", kind, env)
        os.environ["MEMQ_NEO4J_SHARDS"] = ",".join(
            f"bolt://127.0.0.1:{p}" for k, _, p, _ in self.extra if k == "neo4j")
        os.environ["MEMQ_CHROMA_SHARDS"] = ",".join(
            f"127.0.0.1:{p}" for k, _, p, _ in self.extra if k == "chroma")

    @staticmethod
    def services(verb: str, kind: str, env: dict[str, str]) -> None:
        subprocess.run([str(REPO / "scripts" / "services"), verb, kind], env=env, check=True,
                       stdout=subprocess.DEVNULL)

    def ports(self) -> list[int]:
        return [p for _, _, p, _ in self.extra]

    def start(self, coord: Any, users: list[str]) -> None:
        """Listen for finished deliveries; restart the chosen shard after --restart-after s;
        move a random user to random shards every --move-every s (workers.shards.move)."""
        from memq.workers.layout import FINISHED

        pubsub = coord.r.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(FINISHED)

        def listen() -> None:
            while not self.stop.is_set():
                m = pubsub.get_message(timeout=0.5)  # blocks up to 0.5 s: not a poll
                if m:
                    self.finished.append((time.monotonic(), str(m["data"])))
                    self.flowing.set()
            pubsub.close()

        threading.Thread(target=listen, daemon=True).start()
        if self.args.restart_shard:
            kind, index = self.args.restart_shard.split(":")
            env = next(e for k, i, _, e in self.extra if k == kind and i == int(index))

            def restart() -> None:  # once work flows (the workers are up), then after a while
                while not self.flowing.wait(0.5):
                    if self.stop.is_set():
                        return
                if self.stop.wait(self.args.restart_after):
                    return
                self.services("down", kind, env)
                self.down_at = time.monotonic()
                self.stop.wait(self.args.down_s)
                self.up_at = time.monotonic()
                self.services("up", kind, env)

            self.thread = threading.Thread(target=restart, daemon=True)
            self.thread.start()
        self.moves = self.moves_busy = self.moves_failed = 0
        if self.args.move_every:
            self.mover = threading.Thread(target=self._move_loop, args=(users,), daemon=True)
            self.mover.start()

    def _move_loop(self, users: list[str]) -> None:
        from memq.pipeline.errors import TransientError, UserBusy
        from memq.workers.shards import move

        rng = random.Random(self.args.seed + 17)
        while not self.flowing.wait(0.5):
            if self.no_moves.is_set():
                return
        while not self.no_moves.wait(rng.uniform(0.5, 1.5) * self.args.move_every):
            user = rng.choice(users)
            try:
                move(user, neo4j=rng.randrange(self.args.neo4j_shards),
                     chroma=rng.randrange(self.args.chroma_shards), wait_s=10)
                self.moves += 1
            except UserBusy:
                self.moves_busy += 1
            except TransientError:  # a store down (--restart-shard): given up, user stays
                self.moves_failed += 1

    def figures(self, users: list[str], published: dict[str, str],
                shard_of: Any) -> dict[str, object]:
        """Users per shard; deliveries finished while the shard was down (from a second after
        it went down: one in flight may have finished meanwhile), its users' and the others'."""
        out: dict[str, object] = {"users on each shard": " / ".join(
            f"{kind} " + ",".join(str(sum(1 for u in users if getattr(shard_of(u), kind) == i))
                                  for i in range(n))
            for kind, n in (("neo4j", self.args.neo4j_shards),
                            ("chroma", self.args.chroma_shards)))}
        out["shard restarted"] = self.args.restart_shard or "none"
        mine = others = 0
        if self.down_at is not None and self.up_at is not None:
            out["shard down seconds"] = round(self.up_at - self.down_at, 1)
            kind, index = self.args.restart_shard.split(":")
            for at, delivery in self.finished:
                if self.down_at + 1.0 <= at <= self.up_at and delivery in published:
                    on = getattr(shard_of(published[delivery]), kind) == int(index)
                    mine, others = mine + on, others + (not on)
        out["done while down, its users"] = mine
        out["done while down, other users"] = others
        out["users moved"] = self.moves
        out["moves given up (busy)"] = self.moves_busy
        out["moves given up (store down)"] = self.moves_failed
        return out

    def quiesce(self) -> bool:
        """No more moves; the one under way finished. Whether any move was made."""
        self.no_moves.set()
        if hasattr(self, "mover"):
            self.mover.join(timeout=300)
        return bool(self.moves)

    def close(self) -> None:
        self.stop.set()
        self.quiesce()
        if self.args.restart_shard and hasattr(self, "thread"):
            self.thread.join(timeout=self.args.down_s + 120)
        for kind, _, _, env in self.extra:
            self.services("down", kind, env)


class Sizes:
    """Samples the messages waiting on the broker's queues: their size on the wire."""

    def __init__(self, r: Any) -> None:
        self.r, self.sizes = r, Counter[str]()
        self.max = dict.fromkeys(("memq.extract", "memq.store"), 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self) -> None:
        while not self.stop.wait(0.5):
            for queue in self.max:
                for raw in self.r.lrange(queue, 0, 20):
                    self.max[queue] = max(self.max[queue], len(raw))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def wait_through(coord: Any, timeout_s: float) -> bool:
    """``outbox.wait``, through an outage of the state's Redis (--restart-state-node: a count
    of the buckets fails while one primary is down; waiting resumes on its return)."""
    import redis

    from memq.workers import outbox

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return bool(outbox.wait(coord, max(0.0, deadline - time.monotonic())))
        except redis.RedisError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)


class StateRestart:
    """--restart-state-node I: primary I of the state's cluster shut down once work flows,
    after --restart-after s, for --down-s, then started again; the deliveries finished while
    it was down are counted, of the users whose bucket it holds and of the others (from a
    second after it went down: one under way may have finished meanwhile)."""

    def __init__(self, args: argparse.Namespace, cluster: Any, coord: Any,
                 users: list[str]) -> None:
        import redis

        from memq.workers.layout import FINISHED, mailbox_key

        if cluster is None:
            sys.exit("stress: --restart-state-node needs --state-cluster N")
        slots = coord.r.nodes_manager
        port_of = {u: slots.get_node_from_slot(coord.r.keyslot(mailbox_key(u))).port
                   for u in users}
        self.i = args.restart_state_node
        if self.i < 0:
            held = Counter(port_of.values())
            self.i = max(range(len(cluster.ports)), key=lambda i: held[cluster.ports[i]])
        self.args, self.cluster = args, cluster
        self.on_node = {u for u, port in port_of.items() if port == cluster.ports[self.i]}
        self.finished: list[tuple[float, str]] = []
        self.down_at = self.up_at = None
        self.stop, self.flowing = threading.Event(), threading.Event()
        # a node that stays up hears every PUBLISH (the cluster bus carries them)
        other = cluster.ports[(self.i + 1) % len(cluster.ports)]
        self.pubsub = redis.Redis(port=other, decode_responses=True).pubsub(
            ignore_subscribe_messages=True)
        self.pubsub.subscribe(FINISHED)
        threading.Thread(target=self._listen, daemon=True).start()
        self.thread = threading.Thread(target=self._restart, daemon=True)
        self.thread.start()

    def _listen(self) -> None:
        while not self.stop.is_set():
            m = self.pubsub.get_message(timeout=0.5)  # blocks up to 0.5 s: not a poll
            if m:
                self.finished.append((time.monotonic(), str(m["data"])))
                self.flowing.set()

    def _restart(self) -> None:
        while not self.flowing.wait(0.5):
            if self.stop.is_set():
                return
        if self.stop.wait(self.args.restart_after):
            return
        self.cluster.stop(self.i)
        self.down_at = time.monotonic()
        self.stop.wait(self.args.down_s)
        self.up_at = time.monotonic()
        self.cluster.start(self.i)

    def figures(self, published: dict[str, str]) -> dict[str, object]:
        out: dict[str, object] = {"state node restarted": self.i,
                                  "users on that node": len(self.on_node)}
        mine = others = 0
        if self.down_at is not None and self.up_at is not None:
            out["state node down seconds"] = round(self.up_at - self.down_at, 1)
            for at, delivery in self.finished:
                if self.down_at + 1.0 <= at <= self.up_at and delivery in published:
                    on = published[delivery] in self.on_node
                    mine, others = mine + on, others + (not on)
        out["done while down, its users"] = mine
        out["done while down, other users"] = others
        return out

    def close(self) -> None:
        self.thread.join(timeout=self.args.down_s + 120)
        self.stop.set()


def redis_commands(coord: Any) -> int:
    """Commands the broker's and the state's Redis processed so far (every primary of a
    cluster)."""
    def total(client: Any) -> int:
        return int(client.info("stats")["total_commands_processed"])

    if not coord.cluster:
        return total(coord.r) + (0 if coord.broker is coord.r else total(coord.broker))
    nodes = coord.r.get_primaries()
    return total(coord.broker) + sum(total(coord.r.get_redis_connection(n)) for n in nodes)


def state_keys(coord: Any) -> list[int]:
    """Keys held by each primary of the state's Redis (one without a cluster)."""
    if not coord.cluster:
        return [int(coord.r.dbsize())]
    return [int(coord.r.get_redis_connection(n).dbsize()) for n in coord.r.get_primaries()]


def compare(plans: list[UserPlan], stores_for: Any) -> Counter[str]:
    """Every user's final state (the graph's) against the oracle, and the index against the
    graph (``stores_for(user)``: its graph and Chroma, workers.wiring); a Counter."""
    from memq.pipeline.ids import content_hash

    n: Counter[str] = Counter()
    for plan in plans:
        graph, chroma = stores_for(plan.user_id)
        runs, multi = oracle(plan)
        # one memory per value run, and per multi-valued fact ever stated (an ended one stays,
        # superseded)
        n["expected"] += sum(len([x for x in r if x[0] != ENDED]) for r in runs.values()) + len(
            {(p, o) for p, o, _ in plan.statements if p in MULTI})
        memories = graph.read_memories(plan.user_id, include_inactive=True)  # the record
        n["found"] += len(memories)
        index = chroma.index(plan.user_id)  # must hold each memory, of its text and status
        n["index_drift"] += len(index.keys() ^ {m.id for m in memories}) + sum(
            1 for m in memories if m.id in index and (
                index[m.id].status != str(m.status)
                or index[m.id].content_hash != content_hash(m.content)))
        ops = {(a.memory_id, str(a.operation)) for a in graph.audit(plan.user_id)}
        keys: Counter[tuple[str, str, datetime]] = Counter()
        multi_keys: Counter[tuple[str, str]] = Counter()
        for m in memories:
            t = m.triples[0]
            keys[(t.predicate, t.object, m.valid_at)] += 1
            if t.predicate in MULTI:
                multi_keys[(t.predicate, t.object)] += 1
            n["missing_audit"] += (m.id, "add") not in ops
            n["missing_audit"] += m.status == "superseded" and (m.id, "supersede") not in ops
        n["duplicates"] += sum(c - 1 for c in [*keys.values(), *multi_keys.values()])
        for pred, told in runs.items():
            spans = sorted((m for m in memories if m.triples[0].predicate == pred),
                           key=lambda m: m.valid_at)
            current = [m.triples[0].object for m in spans if m.status == "current"]
            got = [(m.triples[0].object, m.valid_at) for m in spans]
            expected_runs = [r for r in told if r[0] != ENDED]
            now = [] if told and told[-1][0] == ENDED else [expected_runs[-1][0]]
            n["wrong_current"] += current != now  # ENDED: the slot holds nothing now
            if current != now and os.environ.get("MEMQ_STRESS_VERBOSE"):
                said = sorted((s[2], s[0], s[1]) for s in plan.statements
                              if s[0] in (pred, "works_at"))
                found = [(m.triples[0].object, m.valid_at, m.invalid_at, str(m.status))
                         for m in spans]
                print(f"{plan.user_id} {pred}: current {current}, expected {now}\n  said {said}"
                      f"\n  found {found}", file=sys.stderr)
            n["wrong_intervals"] += got != expected_runs
            if got != expected_runs and os.environ.get("MEMQ_STRESS_VERBOSE"):
                said = sorted((s[2], s[1]) for s in plan.statements if s[0] == pred)
                print(f"{plan.user_id} {pred}: expected {expected_runs}\n  found {got}"
                      f"\n  statements {said}", file=sys.stderr)
        for pred, objs in multi.items():
            current_objs = {m.triples[0].object for m in memories
                            if m.triples[0].predicate == pred and m.status == "current"}
            n["wrong_current"] += len(current_objs ^ objs)
        open_facts = {(f["predicate"], f["object"]) for f in graph.facts(plan.user_id)
                      if f["invalid_at"] is None and f["expired_at"] is None}
        current_facts = {(t.predicate, t.object) for m in memories  # a tool's job too
                         if m.status == "current" for t in m.triples}
        n["graph_drift"] += len(open_facts ^ current_facts)
        n["episodes_missing"] += len(plan.lines) - chroma.count_episodes(plan.user_id)
    return n


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--redeliver", action="store_true", help="enqueue every batch twice")
    ap.add_argument("--shuffle", action="store_true", help="enqueue in random order")
    ap.add_argument("--pause-workers", action="store_true",
                    help="SIGSTOP a random worker for --pause-s (past every lease), then SIGCONT")
    ap.add_argument("--kill-workers", action="store_true",
                    help="kill -9 a random worker (and start a new one) every --fault-every s")
    ap.add_argument("--cpu-burn", type=int, default=0, metavar="N",
                    help="N busy processes for the whole run: a loaded host")
    ap.add_argument("--netns", type=int, default=0, metavar="N",
                    help="workers on N hosts: network namespaces made here, each reaching "
                         "the stores over a virtual link of its own (scripts/netns.py; root)")
    ap.add_argument("--cut-links", action="store_true",
                    help="with --netns: cut a random host's link for --cut-s, then restore "
                         "it, every --fault-every s")
    ap.add_argument("--cut-s", type=float, default=10.0)
    ap.add_argument("--neo4j-shards", type=int, default=1, metavar="N",
                    help="N Neo4j instances (the configured one and N-1 started here)")
    ap.add_argument("--chroma-shards", type=int, default=1, metavar="N")
    ap.add_argument("--restart-shard", metavar="KIND:I",
                    help="restart that shard (neo4j:1, chroma:2…; one started here) mid-run")
    ap.add_argument("--restart-after", type=float, default=4.0,
                    help="seconds after the first delivery is done")
    ap.add_argument("--down-s", type=float, default=8.0, help="how long it stays down")
    ap.add_argument("--move-every", type=float, default=0.0, metavar="S",
                    help="with shards: move a random user to random shards every S s")
    ap.add_argument("--state-cluster", type=int, default=0, metavar="N",
                    help="the coordination state on a Redis Cluster of N primaries started "
                         "for the run (the broker stays on --redis-url)")
    ap.add_argument("--restart-state-node", type=int, default=None, metavar="I",
                    help="with --state-cluster: shut primary I down mid-run (after "
                         "--restart-after s of work, for --down-s), then start it again; "
                         "-1: the primary holding most of the run's users")
    ap.add_argument("--fault-every", type=float, default=8.0)
    ap.add_argument("--pause-s", type=float, default=15.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--redis-url", default=None,
                    help="default: db 14 of the Redis on MEMQ_REDIS_PORT (6379)")
    return ap.parse_args()


def configure(args: argparse.Namespace) -> dict[str, str]:
    """The environment of this process and of the workers."""
    port = os.environ.get("MEMQ_REDIS_PORT", "6379")
    os.environ["MEMQ_REDIS_URL"] = args.redis_url or f"redis://127.0.0.1:{port}/14"
    if args.pause_workers or args.kill_workers or args.cut_links:
        # Short bounds, so that a frozen or killed worker is overtaken within the run: the
        # frozen one wakes up long after its claim lapsed and its plan is stale.
        frozen = max(args.pause_s if args.pause_workers else 0,
                     args.cut_s if args.cut_links else 0, 1.0)
        os.environ.setdefault("MEMQ_CLAIM_S", str(max(2.0, frozen / 3)))
        os.environ.setdefault("MEMQ_STALL_S", str(max(4.0, frozen / 2)))
        os.environ.setdefault("MEMQ_REAPER_INTERVAL_S", "1")
    return {**os.environ, "C_FORCE_ROOT": "1"}


def main() -> int:
    global HOSTS  # noqa: PLW0603  (the run's hosts, for start_worker and Faults)
    args = parse_args()
    if args.cut_links and not args.netns:
        sys.exit("stress: --cut-links needs --netns N")
    if args.state_cluster and args.netns:
        # a cluster's nodes name themselves 127.0.0.1 in their redirects: no relay follows
        sys.exit("stress: --state-cluster runs on loopback only (not with --netns)")

    cluster = None
    if args.state_cluster:
        sys.path.insert(0, str(Path(__file__).parent))
        from redis_cluster import Cluster

        cluster = Cluster(args.state_cluster, Path(os.environ.get("MEMQ_HOME", REPO / ".memq"))
                          / f"redis-cluster-{os.getpid()}")
        os.environ.update(MEMQ_STATE_URL=cluster.url, MEMQ_STATE_CLUSTER="on")
    env = configure(args)
    shards = None
    if args.neo4j_shards > 1 or args.chroma_shards > 1:
        shards = Shards(args, Path(os.environ.get("MEMQ_HOME", REPO / ".memq")))
        env = {**env, "MEMQ_NEO4J_SHARDS": os.environ["MEMQ_NEO4J_SHARDS"],
               "MEMQ_CHROMA_SHARDS": os.environ["MEMQ_CHROMA_SHARDS"]}
    if args.netns:
        sys.path.insert(0, str(Path(__file__).parent))
        import netns

        ports = [int(os.environ.get(k, d)) for k, d in (
            ("MEMQ_REDIS_PORT", "6379"), ("MEMQ_NEO4J_PORT", "7687"),
            ("MEMQ_CHROMA_PORT", "8000"))]
        HOSTS = netns.Hosts(args.netns, ports + (shards.ports() if shards else []))
    try:
        return run(args, env, shards, cluster)
    finally:
        if HOSTS is not None:
            HOSTS.close()
        if shards is not None:
            shards.close()
        if cluster is not None:
            cluster.close()


def run(args: argparse.Namespace, env: dict[str, str],  # noqa: PLR0912, PLR0915  (one run)
        shards: Shards | None, cluster: Any = None) -> int:
    from memq.workers import counters, deadletters, wiring
    from memq.workers.client import enqueue, parse_lines

    rng = random.Random(args.seed)
    run = uuid.uuid4().hex[:6]
    plans = [generate(f"stress-{run}-u{u:03d}", args.turns, rng) for u in range(args.users)]
    batches, errors = parse_lines(json.dumps(line) for p in plans for line in p.lines)
    assert not errors, errors
    deliveries = batches * (2 if args.redeliver else 1)
    if args.shuffle:
        rng.shuffle(deliveries)

    logdir = Path(os.environ.get("MEMQ_HOME", REPO / ".memq")) / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    coord = wiring.coord()
    counters.reset(coord, "replans", "reaped")
    dead_before = len(deadletters.dead_letters(coord))
    commands_before = redis_commands(coord)
    workers = [start_worker(i, env, logdir) for i in range(args.workers)]
    load_before = os.getloadavg()
    sizes = Sizes(coord.broker)
    faults = Faults(args, workers, env, logdir, rng)
    if shards is not None:
        shards.start(coord, [p.user_id for p in plans])
    restart = (StateRestart(args, cluster, coord, [p.user_id for p in plans])
               if args.restart_state_node is not None else None)
    started = time.monotonic()
    published: dict[str, str] = {}  # delivery id -> user
    try:
        enqueue_times = []
        for batch in deliveries:
            t0 = time.perf_counter()
            published.update((p.delivery_id, p.user_id) for p in enqueue([batch]))
            enqueue_times.append(time.perf_counter() - t0)
        done = wait_through(coord, args.timeout)
        if shards is not None and shards.quiesce():  # a move's refused posts: extracted again
            done = wait_through(coord, args.timeout)
        seconds = time.monotonic() - started
        load = os.getloadavg()
    finally:
        faults.close()
        sizes.close()
        if restart is not None:
            restart.close()
        for w in workers:
            signal_group(w, signal.SIGTERM)
        for w in workers:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                signal_group(w, signal.SIGKILL)
    commands = redis_commands(coord) - commands_before

    if shards is not None:
        shards.stop.set()
    score = compare(plans, wiring.stores_for)
    dead = len(deadletters.dead_letters(coord)) - dead_before
    enqueue_times.sort()
    figures = {
        "users": args.users, "turns": args.users * args.turns, "batches": len(batches),
        "deliveries": len(deliveries), "workers": args.workers,
        "cpu burners": args.cpu_burn, "workers paused": faults.paused,
        "workers killed": faults.killed, "hosts": args.netns or 1,
        "store addresses": ",".join(link.host_ip for link in HOSTS.links) if HOSTS
        else "127.0.0.1",
        "links cut": faults.cut,
        "store shards": f"neo4j {args.neo4j_shards}, chroma {args.chroma_shards}",
        "state": (f"Redis Cluster, {args.state_cluster} primaries, broker apart"
                  if args.state_cluster else "the broker's Redis"),
        "state keys per primary": ",".join(str(n) for n in state_keys(coord)),
        "memories expected": score["expected"], "memories found": score["found"],
        "duplicates": score["duplicates"], "wrong current values": score["wrong_current"],
        "wrong validity intervals": score["wrong_intervals"],
        "missing audit entries": score["missing_audit"],
        "graph/fact drift": score["graph_drift"], "index drift": score["index_drift"],
        "episodes missing": score["episodes_missing"], "dead letters": dead,
        "finished": done, "seconds": round(seconds, 1),
        "turns/s": round(args.users * args.turns / seconds, 1),
        "stale plans refused": counters.stat(coord, "replans"),
        "re-plans per delivery": round(counters.stat(coord, "replans")
                                       / len(deliveries), 3),
        "reaped (stalled work)": counters.stat(coord, "reaped"),
        "max message bytes": max(sizes.max.values()),
        "redis commands/delivery": round(commands / len(deliveries), 1),
        "enqueue p50 ms": round(1000 * enqueue_times[len(enqueue_times) // 2], 2),
        "enqueue p99 ms": round(1000 * enqueue_times[int(len(enqueue_times) * 0.99)], 2),
        "load average": " ".join(f"{x:.2f}" for x in load),
        "load average at start": " ".join(f"{x:.2f}" for x in load_before),
    }
    if shards is not None:
        figures.update(shards.figures([p.user_id for p in plans], published,
                                      wiring.shard_map().of))
    if restart is not None:
        figures.update(restart.figures(published))
    for key, value in figures.items():
        print(f"{key:>26}: {value}")
    bad = not done or dead or score["expected"] != score["found"] or any(
        score[k] for k in ("duplicates", "wrong_current", "wrong_intervals", "missing_audit",
                           "graph_drift", "index_drift", "episodes_missing"))
    print("stress: FAIL" if bad else "stress: OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
