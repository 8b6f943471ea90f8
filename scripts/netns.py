"""Hosts for the stress run: network namespaces made here, each joined to this one by a
virtual link (a veth pair), whose link can be cut and restored (scripts/stress --netns).

The stores listen on loopback only (scripts/services), which another namespace cannot reach;
so this namespace relays each store port from the host end of every link to 127.0.0.1 (a TCP
relay per link, in a thread of the caller). A worker in namespace i reaches Redis, Neo4j and
Chroma at ``10.x.y.1`` over its own link, as a worker on another host reaches them over the
network: cutting the link (its host end down) stalls that worker's connections mid-flight, and
restoring it lets TCP carry on. Needs CAP_NET_ADMIN (root) and ``ip`` (iproute2).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {res.stderr.strip()}")


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.200-249.x.0 that no interface here overlaps (two runs at once: each its
    own)."""
    out = subprocess.run(["ip", "-o", "-4", "addr"], check=True, capture_output=True,
                         text=True).stdout.split()
    used = [ipaddress.IPv4Interface(out[k + 1]).network
            for k, word in enumerate(out[:-1]) if word == "inet"]
    for _ in range(200):
        net = ipaddress.IPv4Network(f"10.{200 + secrets.randbelow(50)}."
                                    f"{secrets.randbelow(256)}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    raise RuntimeError("no free 10.200-249.x.0/24 for the links")


@dataclass
class Link:
    ns: str  # the namespace's name
    host_if: str  # the link's end here (cut: down)
    host_ip: str  # what the namespace's workers dial


class Relay:
    """TCP from (host ip, port) to (127.0.0.1, port), both ways, on one asyncio loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list[asyncio.base_events.Server] = []

    def listen(self, host: str, ports: Sequence[int]) -> None:
        for port in ports:
            fut = asyncio.run_coroutine_threadsafe(self._serve(host, port), self.loop)
            self.servers.append(fut.result(timeout=10))

    async def _serve(self, host: str, port: int) -> asyncio.base_events.Server:
        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            with contextlib.suppress(ConnectionError, OSError):
                writer.close()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        return await asyncio.start_server(handle, host, port, reuse_address=True)

    def close(self) -> None:
        async def stop() -> None:
            for s in self.servers:
                s.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


class Hosts:
    """``n`` namespaces with a link each and the store ports relayed over every link."""

    def __init__(self, n: int, ports: Sequence[int]) -> None:
        tag = secrets.token_hex(3)
        net = _free_subnet()
        self.links: list[Link] = []
        self.relay = Relay()
        try:
            for i in range(n):
                ns, host_if, ns_if = f"memq-{tag}-{i}", f"mq{tag}h{i}", f"mq{tag}n{i}"
                host_ip, ns_ip = net.network_address + 4 * i + 1, net.network_address + 4 * i + 2
                _ip("netns", "add", ns)
                self.links.append(Link(ns, host_if, str(host_ip)))
                _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
                _ip("link", "set", ns_if, "netns", ns)
                _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
                _ip("link", "set", host_if, "up")
                _ip("addr", "add", f"{ns_ip}/30", "dev", ns_if, ns=ns)
                _ip("link", "set", ns_if, "up", ns=ns)
                _ip("link", "set", "lo", "up", ns=ns)
                self.relay.listen(str(host_ip), ports)
        except BaseException:
            self.close()
            raise

    def prefix(self, i: int) -> list[str]:
        """The command prefix that runs a program in namespace ``i``."""
        return ["ip", "netns", "exec", self.links[i].ns]

    def cut(self, i: int) -> None:
        _ip("link", "set", self.links[i].host_if, "down")

    def restore(self, i: int) -> None:
        _ip("link", "set", self.links[i].host_if, "up")

    def close(self) -> None:
        self.relay.close()
        for link in self.links:  # the namespace's end of the link goes with it
            with contextlib.suppress(RuntimeError):
                _ip("netns", "del", link.ns)
