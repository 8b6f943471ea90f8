"""A Redis Cluster of N primaries on loopback, for a test or a stress run (``--state-cluster``):
Debian's redis-server with ``--cluster-enabled yes``, AOF on as scripts/services runs Redis,
on free ports under a folder of its own; the slots spread by ``redis-cli --cluster create``.
No replicas: the run checks memq's keys against the cluster's slot rules and what a primary
that is down stops (``cluster-require-full-coverage no``: only its slots), not failover."""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path


def _free(port: int) -> bool:
    with contextlib.closing(socket.socket()) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port(taken: list[int]) -> int:
    """A free port whose cluster bus port (10,000 higher, Redis' rule) is free too."""
    rng = random.Random()
    while True:
        port = rng.randrange(20_000, 55_000)
        if port not in taken and _free(port) and _free(port + 10_000):
            return port


class Cluster:
    def __init__(self, n: int, home: Path) -> None:
        if n < 1:
            raise ValueError("a cluster needs at least one primary")
        self.home = home
        self.ports: list[int] = []
        for _ in range(n):
            self.ports.append(_free_port(self.ports))
        for port in self.ports:
            self._start(port)
        for port in self.ports:
            self._until(lambda p=port: self._cli(p, "ping").strip() == "PONG", "start")
        subprocess.run(["redis-cli", "--cluster", "create",
                        *(f"127.0.0.1:{p}" for p in self.ports), "--cluster-replicas", "0",
                        "--cluster-yes"], check=True, stdout=subprocess.DEVNULL)
        self._until(lambda: all("cluster_state:ok" in self._cli(p, "cluster", "info")
                                for p in self.ports), "agree on the slots")

    def _start(self, port: int) -> None:
        folder = self.home / str(port)
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
             "--cluster-enabled", "yes", "--cluster-config-file", str(folder / "nodes.conf"),
             # the other primaries go on serving their slots while one is down (by default a
             # cluster with a slot uncovered refuses every command: CLUSTERDOWN)
             "--cluster-require-full-coverage", "no",
             "--dir", str(folder), "--daemonize", "yes", "--save", "",
             "--appendonly", "yes", "--appendfsync", "everysec",
             "--pidfile", str(folder / "redis.pid"), "--logfile", str(folder / "redis.log")],
            check=True)

    def stop(self, i: int) -> None:
        """Primary ``i`` shut down as an operator would (SHUTDOWN: its AOF written out); its
        slots answer nothing until ``start(i)``."""
        self._cli(self.ports[i], "shutdown")
        self._until(lambda: self._cli(self.ports[i], "ping").strip() != "PONG", "stop")

    def start(self, i: int) -> None:
        """Primary ``i`` back, from its AOF and nodes.conf; returns once the cluster is ok."""
        self._start(self.ports[i])
        self._until(lambda: all("cluster_state:ok" in self._cli(p, "cluster", "info")
                                for p in self.ports), "agree on the slots again")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}"

    @staticmethod
    def _cli(port: int, *command: str) -> str:
        done = subprocess.run(["redis-cli", "-p", str(port), *command], capture_output=True,
                              text=True, check=False)
        return done.stdout

    @staticmethod
    def _until(ok: object, what: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not ok():  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis cluster: did not {what} in {timeout_s:g} s")
            time.sleep(0.1)

    def close(self) -> None:
        for port in self.ports:
            self._cli(port, "shutdown", "nosave")
        shutil.rmtree(self.home, ignore_errors=True)
