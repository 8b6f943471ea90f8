"""mem0's quickstart, with ``from memq import Memory`` as the only change, on the real services
and a real worker (run as an agent would, in a process of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integration.conftest import Worker, memq_env, new_key, start_api

pytestmark = pytest.mark.integration

QUICKSTART = r"""
import json, sys
from memq import Memory

user = sys.argv[1]
m = Memory() if len(sys.argv) < 4 else Memory(api_url=sys.argv[2], api_key=sys.argv[3])
messages = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about a thriller? They can be quite engaging."},
    {"role": "user", "content": "I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll suggest sci-fi movies from now on."},
]
added = m.add(messages, user_id=user, metadata={"category": "movies"})
m.add("I live in Lisbon.", user_id=user, agent_id="travel-bot", metadata={"category": "home"})
related = m.search("What movies does the user like?", user_id=user, limit=3)
movies = m.search("movies", filters={"user_id": user, "category": "movies"})
by_agent = m.get_all(filters={"user_id": user, "agent_id": "travel-bot"})
everything = m.get_all(user_id=user)
first = next(r["id"] for r in added["results"] if "sci-fi" in r["memory"])
got = m.get(first)
updated = m.update(memory_id=first, data="The user loves science fiction films.")
history = m.history(memory_id=first)
got_again = m.get(first)  # as mem0: the id one had is the memory as it now is
after_update = m.get_all(user_id=user)
all_too = m.get_all(user_id=user, filters={"status": "all"})
new_id = updated["id"]
deleted = m.delete(memory_id=first)  # the README's: the id one had
found_after = m.search("science fiction films", user_id=user, limit=5)
after_delete = m.get_all(user_id=user)
print(json.dumps({
    "added": added, "related": related, "movies": movies, "by_agent": by_agent,
    "everything": everything, "got": got, "updated": updated, "history": history,
    "after_update": after_update, "all_too": all_too, "deleted": deleted,
    "got_again": got_again, "found_after": found_after,
    "after_delete": after_delete, "missing": m.get("m_never_was"),
    "delete_all": m.delete_all(user_id=user), "gone": m.get_all(user_id=user),
}))
"""


def _agent(script: str, user: str, *api: str) -> dict[str, object]:
    res = subprocess.run([sys.executable, "-c", script, user, *api], cwd="/", env=memq_env(),
                         capture_output=True, text=True, timeout=420, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("over", ["stores", "http"])
def test_the_mem0_quickstart_runs_on_memq(worker: Worker, user_id: str, over: str,
                                          tmp_path: Path) -> None:
    """Over the stores (``Memory()``) and over HTTP with a key (``Memory(api_url=…,
    api_key=…)``): the same calls, the same answers."""
    if over == "http":
        api = start_api(tmp_path / "api.log")
        try:
            out: dict[str, object] = _agent(QUICKSTART, user_id, api.base,
                                            new_key("t-mem0", "read,write,forget"))
        finally:
            api.stop()
    else:
        out = _agent(QUICKSTART, user_id)
    _check(out, user_id)


def _check(out: dict[str, object], user_id: str) -> None:
    added = out["added"]["results"]  # type: ignore[index]
    # what the offline extractor finds in these turns, reported as mem0 reports it
    # (the plan is dated: the turns are dated today)
    events = sorted((r["event"], r["memory"]) for r in added)
    assert len(events) == 2 and events[1] == ("ADD", "The user likes sci-fi movies."), added
    assert events[0][0] == "ADD"
    assert events[0][1].startswith("The user is planning to watch a movie on "), added
    sci_fi = next(r["id"] for r in added if "sci-fi" in r["memory"])
    planned = events[0][1]
    assert [r["id"] for r in out["related"]["results"]][:1] == [sci_fi]  # type: ignore[index]
    assert all(r["metadata"]["category"] == "movies"
               for r in out["movies"]["results"])  # type: ignore[index]
    by_agent = out["by_agent"]["results"]  # type: ignore[index]
    assert [r["memory"] for r in by_agent] == ["The user lives in Lisbon."]
    assert by_agent[0]["agent_id"] == "travel-bot"
    assert {r["memory"] for r in out["everything"]["results"]} == {  # type: ignore[index]
        "The user likes sci-fi movies.", planned, "The user lives in Lisbon."}
    got = out["got"]
    assert got["memory"] == "The user likes sci-fi movies." and got["user_id"] == user_id  # type: ignore[index]
    assert out["updated"]["message"] == "Memory updated successfully!"  # type: ignore[index]
    new_id = out["updated"]["id"]  # type: ignore[index]
    assert new_id != sci_fi
    history = out["history"]
    # the id one had, as mem0 keeps it: its versions' trail, the correction's included
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [  # type: ignore[union-attr]
        ("ADD", None, "The user likes sci-fi movies."),
        ("DELETE", "The user likes sci-fi movies.", "The user likes sci-fi movies."),
        ("ADD", None, "The user loves science fiction films.")]
    assert history[1]["reason"] == "corrected by the user"  # type: ignore[index]
    assert out["got_again"]["memory"] == "The user loves science fiction films."  # type: ignore[index]
    # delete() of the id one had leaves nothing of it current or searchable
    assert not any("science fiction" in r["memory"]
                   for r in out["found_after"]["results"])  # type: ignore[index]
    assert {r["memory"] for r in out["after_update"]["results"]} == {  # type: ignore[index]
        "The user loves science fiction films.", planned, "The user lives in Lisbon."}
    old = {r["id"]: r["status"] for r in out["all_too"]["results"]}  # type: ignore[index]
    assert old[sci_fi] == "superseded" and old[new_id] == "current"
    assert out["deleted"] == {"message": "Memory deleted successfully!"}
    assert {r["memory"] for r in out["after_delete"]["results"]} == {  # type: ignore[index]
        planned, "The user lives in Lisbon."}
    assert out["missing"] is None
    assert out["delete_all"] == {"message": "Memories deleted successfully!"}
    assert out["gone"] == {"results": []}
