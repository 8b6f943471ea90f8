"""scripts/own_redis.py: a bench or a fault run empties a Redis database only on a Redis its
own stack started. Real redis-servers on free ports and temporary folders: one started with
the command line scripts/services uses (workers/stack.py), one standing for a user's own."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from script_loader import load_script

from memq.workers import stack

own = load_script("own_redis")

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None,
                                 reason="redis-server is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answering(r: redis.Redis) -> None:
    for _ in range(100):
        try:
            r.ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise AssertionError("redis-server did not answer")


@pytest.fixture
def two_redis(tmp_path: Path) -> Iterator[tuple[stack.Config, redis.Redis, redis.Redis]]:
    """(the stack's config, a client of its Redis, a client of a user's own Redis), db 12."""
    cfg = stack.Config(home=tmp_path / "home", cache=tmp_path / "cache",
                       redis_port=_free_port())
    for folder in (cfg.home / "redis", cfg.logs, tmp_path / "user"):
        folder.mkdir(parents=True)
    user_port = _free_port()
    ours = redis.Redis("127.0.0.1", cfg.redis_port, db=12, decode_responses=True)  # as Coord
    theirs = redis.Redis("127.0.0.1", user_port, db=12)  # and a client that does not decode
    users: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(stack.redis_argv(cfg), check=True)  # daemonizes, as scripts/services'
        users = subprocess.Popen(["redis-server", "--port", str(user_port), "--bind",
                                  "127.0.0.1", "--save", "", "--dir", str(tmp_path / "user")],
                                 stdout=subprocess.DEVNULL)
        _answering(ours)
        _answering(theirs)
        for _ in range(100):  # the pid file is written once it has daemonized
            if stack.components(cfg)["redis"].owned() is not None:
                break
            time.sleep(0.05)
        yield cfg, ours, theirs
    finally:
        if users is not None:
            users.terminate()
            users.wait(timeout=10)
        stack.down(cfg, ["redis"])


@needs_redis
def test_the_redis_the_runs_own_stack_started_is_emptied(
        two_redis: tuple[stack.Config, redis.Redis, redis.Redis],
        monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, ours, _ = two_redis
    monkeypatch.setenv("MEMQ_HOME", str(cfg.home))
    ours.set("queued", "1")
    own.flush_own(ours, "bench enqueue")
    assert ours.dbsize() == 0


@needs_redis
def test_a_users_own_redis_is_refused_and_left_as_it_was(
        two_redis: tuple[stack.Config, redis.Redis, redis.Redis],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the run's own stack is up, but MEMQ_REDIS_URL named the user's Redis
    cfg, _, theirs = two_redis
    monkeypatch.setenv("MEMQ_HOME", str(cfg.home))
    theirs.set("their-data", "1")
    with pytest.raises(SystemExit) as refused:
        own.flush_own(theirs, "bench enqueue")
    message = str(refused.value.code)
    assert message.startswith("bench enqueue: refusing to use the Redis at 127.0.0.1:")
    assert f"it keeps its data in {(tmp_path / 'user').resolve()}, not in " in message
    assert "scripts/services up" in message and "\n" not in message  # what to do, one line
    assert theirs.get("their-data") == b"1"


@needs_redis
def test_a_redis_of_another_home_is_refused(
        two_redis: tuple[stack.Config, redis.Redis, redis.Redis],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a memq stack's Redis, but not the one this run's MEMQ_HOME started (the demo's, say)
    _, ours, _ = two_redis
    monkeypatch.setenv("MEMQ_HOME", str(tmp_path / "bench-home"))
    ours.set("demo-data", "1")
    with pytest.raises(SystemExit) as refused:
        own.flush_own(ours, "chaos")
    assert f"not in {tmp_path / 'bench-home' / 'redis'}" in str(refused.value.code)
    assert ours.get("demo-data") == "1"


def test_the_right_folder_is_not_enough_without_the_stacks_process(tmp_path: Path) -> None:
    expected = own.Expected(tmp_path, 4242, "scripts/services from MEMQ_HOME=h")
    assert own.refusal(str(tmp_path), 4242, expected) is None
    assert own.refusal(str(tmp_path), 999, expected) == (
        "it is process 999, not the redis-server started by scripts/services from "
        "MEMQ_HOME=h (pid 4242)")
    assert own.refusal(str(tmp_path), 4242, own.Expected(tmp_path, None, "x")) == (
        "no redis-server started by x is running")
    assert own.refusal(str(tmp_path / "elsewhere"), 4242, expected) == (
        f"it keeps its data in {tmp_path / 'elsewhere'}, not in {tmp_path}")


def test_without_memq_home_the_home_is_the_checkouts_as_for_scripts_services(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMQ_HOME", raising=False)
    assert own.stack_home() == Path(own.REPO, ".memq").absolute()
    monkeypatch.setenv("MEMQ_HOME", "/srv/bench-home")
    assert own.stack_redis().data_dir == Path("/srv/bench-home/redis")
