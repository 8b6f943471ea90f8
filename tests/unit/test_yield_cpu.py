"""A worker steps back for the processes it shares a host with: its own nice, and, when it
leads its session, its session's (autogroup) nice, which is what orders it against the agent
and the stores in other sessions. Never the group of a session it merely joined."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import os, sys
if sys.argv[1] == "leader":
    os.setsid()
if sys.argv[2] != "-":
    os.setpriority(os.PRIO_PROCESS, 0, int(sys.argv[2]))
from memq.workers.ops import yield_cpu
yield_cpu(int(sys.argv[3]))
path = "/proc/self/autogroup"
words = open(path).read().split() if os.path.exists(path) else []
group = words[-1] if words else "-"
print(os.getpriority(os.PRIO_PROCESS, 0), group)
"""
AUTOGROUP = Path("/proc/self/autogroup")


def _probe(role: str, start: str, nice: int) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", PROBE, role, start, str(nice)], check=True,
                         capture_output=True, text=True, timeout=60).stdout.split()
    return int(out[0]), out[1]


def _own_group_nice() -> str:
    """The nice of this process's autogroup, or "-" when there is none to read: no autogroups,
    or the root group (init's session and whatever never left it, as under CI's runner), whose
    file reads empty."""
    words = AUTOGROUP.read_text().split() if AUTOGROUP.exists() else []
    return words[-1] if words else "-"


def test_a_session_leader_lowers_its_process_and_its_group() -> None:
    nice, group = _probe("leader", "-", 7)
    assert nice == 7
    assert group == ("7" if AUTOGROUP.exists() else "-")


def test_a_worker_in_someone_elses_session_leaves_that_sessions_group_alone() -> None:
    before = _own_group_nice()
    nice, group = _probe("member", "-", 7)
    assert nice == 7
    assert group == before == _own_group_nice()


def test_a_priority_already_lower_is_kept_and_zero_changes_nothing() -> None:
    assert _probe("leader", "15", 7)[0] == 15
    start = os.getpriority(os.PRIO_PROCESS, 0)
    assert _probe("leader", "-", 0) == (start, "0" if AUTOGROUP.exists() else "-")


def test_the_setting_is_a_nice_value() -> None:
    from pydantic import ValidationError

    from memq.workers.settings import Settings

    assert Settings().worker_nice == 19
    with pytest.raises(ValidationError):
        Settings(worker_nice=20)
