"""Processes of the local stack (workers/stack.py): pid files, whose a process is, ports, stop.

A pid file is trusted only when the process it names is alive and its command line is the one
the stack starts (a pattern): a pid the kernel has since given to another program is never
signalled. Linux only (``/proc``), as the stack itself.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def command_line(pid: int) -> str | None:
    """The process's arguments joined by spaces; None when it is gone or a zombie (whose
    ``cmdline`` is empty)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or None


def read_pid(pidfile: Path) -> int | None:
    try:
        digits = re.sub(r"\D", "", pidfile.read_text())
    except OSError:
        return None
    return int(digits) if digits else None


def owned_pid(pidfile: Path, pattern: str) -> int | None:
    """The pid in ``pidfile`` when that process is alive and its command line matches
    ``pattern`` (a regular expression); None otherwise."""
    pid = read_pid(pidfile)
    if pid is None or pid <= 0:
        return None
    line = command_line(pid)
    if line is None or not re.search(pattern, line):
        return None
    return pid


def alive(pid: int) -> bool:
    """Running, not a zombie: a child of ours that exited stays in the table until reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group (a worker's pool processes follow their parent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _signal(pid: int, sig: int, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def stop(pid: int, grace_s: float, on_kill: str = "") -> bool:
    """SIGTERM, then SIGKILL after ``grace_s``; to the whole group when the process leads one
    (each component starts in a session of its own). True when everything is gone.
    ``on_kill``: printed to stderr before the SIGKILL."""
    try:
        group = os.getpgid(pid) == pid
    except ProcessLookupError:
        return True

    def running() -> bool:
        return alive(pid) or (group and bool(group_members(pid)))

    _signal(pid, signal.SIGTERM, group)
    deadline = time.monotonic() + grace_s
    while running() and time.monotonic() < deadline:
        time.sleep(0.2)
    if running():
        if on_kill:
            print(on_kill, file=sys.stderr, flush=True)
        _signal(pid, signal.SIGKILL, group)
        deadline = time.monotonic() + 5
        while running() and time.monotonic() < deadline:
            time.sleep(0.1)
    return not running()


def port_open(port: int, timeout: float = 0.5) -> bool:
    """Something accepts connections on 127.0.0.1:port."""
    with socket.socket() as s:
        s.settimeout(timeout)
        return s.connect_ex(("127.0.0.1", port)) == 0


def redis_pong(port: int, timeout: float = 3.0) -> bool:
    """Redis answers PING (while it loads its append-only file it answers LOADING: not up)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def http_ok(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as res:
            return bool(res.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def tail(path: Path, lines: int = 25) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []
