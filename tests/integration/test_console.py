"""The memory console (``/ui``) in a real headless browser (Debian's Chromium through its
chromedriver: scripts/console_shots.browser), against ``memq serve`` with auth on, a real
worker and the real stores."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from script_loader import load_script

from integration.conftest import REDIS_URL, Api, Worker, new_key, start_api, user_collection

TENANT = "t-ui"
OTHER = "t-ui-other"
shots = load_script("console_shots")


@pytest.fixture(scope="module")
def server(worker: Worker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    # every line the console logs, info too: none may hold user text
    api = start_api(tmp_path_factory.mktemp("console") / "serve.log", MEMQ_LOG_LEVEL="INFO")
    yield api
    api.stop()


@pytest.fixture(scope="module")
def keys(server: Api) -> dict[str, str]:
    return {"admin": new_key(TENANT, "admin"), "read": new_key(TENANT, "read"),
            "forget": new_key(TENANT, "read,forget"), "other": new_key(OTHER, "admin")}


@pytest.fixture(scope="module")
def browser(server: Api) -> Iterator[Any]:
    with shots.browser() as driver:
        yield driver


def _http(keys: dict[str, str], who: str = "admin") -> httpx.Client:
    return httpx.Client(headers={"Authorization": f"Bearer {keys[who]}"}, timeout=60)


def _say(server: Api, keys: dict[str, str], user: str,
         said: list[tuple[str, str, str]]) -> None:
    """Each (session, time, text) as one conversation, applied before this returns."""
    with _http(keys) as http:
        ids = []
        for session, at, text in said:
            res = http.post(f"{server.base}/v1/turns", json={
                "user_id": user, "session_id": session,
                "messages": [{"role": "user", "content": text, "timestamp": at}]})
            assert res.status_code == 202, res.text
            ids += res.json()["delivery_ids"]
        assert all(s["state"] == "done" for s in _finished(http, server, ids)), ids


def _finished(http: httpx.Client, server: Api, ids: list[str],
              timeout: float = 240) -> list[dict[str, Any]]:
    """The deliveries' states once all are finished (the API waits 30 s at most a call; a
    loaded host's first batches take longer: the worker is still loading its model)."""
    deadline = time.monotonic() + timeout
    while True:
        states: list[dict[str, Any]] = http.post(
            f"{server.base}/v1/deliveries", json={"delivery_ids": ids, "wait_s": 30}).json()
        if all(s["finished"] for s in states) or time.monotonic() > deadline:
            return states


def _sign_in(driver: Any, server: Api, key: str) -> None:
    driver.delete_all_cookies()
    shots.sign_in(driver, server.base, key)


def _by_css(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


MOVES = [("s1", "2026-01-10T09:00:00Z", "I live in Paris."),
         ("s2", "2026-04-02T09:00:00Z", "I moved to Berlin."),
         ("s3", "2026-09-15T09:00:00Z", "We just moved to Tokyo.")]


def test_the_console_wants_a_key_of_the_tenant(server: Api, keys: dict[str, str],
                                               browser: Any, user_id: str) -> None:
    _say(server, keys, user_id, MOVES[:1])
    browser.delete_all_cookies()
    browser.get(f"{server.base}/ui/users/{user_id}")
    assert "/ui/login" in browser.current_url  # no key: to the sign-in page
    shots.sign_in(browser, server.base, "mq_0000000000000000_" + "x" * 43)
    assert "not valid" in _by_css(browser, "p.warn")[0].text
    _sign_in(browser, server, keys["read"])
    browser.get(f"{server.base}/ui/users/{user_id}")
    assert [r.get_attribute("data-memory") for r in _by_css(browser, "tr[data-memory]")]
    # the cookie is the console's only, and script cannot read it
    cookie = browser.get_cookie("memq_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    # keyboard: the first Tab reaches "Skip to content"
    from selenium.webdriver.common.keys import Keys

    _by_css(browser, "body")[0].send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    # another tenant's key sees none of it: its users list lacks the user, and the same id
    # names its own (empty) user
    _sign_in(browser, server, keys["other"])
    browser.get(f"{server.base}/ui/")
    assert user_id not in [a.text for a in _by_css(browser, "main li a")]
    browser.get(f"{server.base}/ui/users/{user_id}")
    assert _by_css(browser, "tr[data-memory]") == []
    # a read key may not see the operations view: an error page says why
    _sign_in(browser, server, keys["read"])
    browser.get(f"{server.base}/ui/ops")
    assert "may not admin" in _by_css(browser, "#error")[0].text
    # each view of a user is in the tenant's access record, as the API's reads are
    with _http(keys) as http:
        seen = http.get(f"{server.base}/v1/access").json()
    assert {"route": "/ui/users/{user_id}", "user": user_id, "status": "200"}.items() <= next(
        e for e in seen if e["route"].startswith("/ui/")).items()


def test_the_timeline_of_a_fact_that_changed_shows_each_value_once(
        server: Api, keys: dict[str, str], browser: Any, user_id: str) -> None:
    _say(server, keys, user_id, MOVES)
    _sign_in(browser, server, keys["read"])
    browser.get(f"{server.base}/ui/users/{user_id}/timeline")
    (city,) = [s for s in _by_css(browser, "section.timeline") if "lives_in" in s.text]
    from selenium.webdriver.common.by import By

    rows = [[r.find_element(By.CSS_SELECTOR, f"td.{c}").text for c in ("value", "from", "until")]
            for r in city.find_elements(By.CSS_SELECTOR, "tr.band-row")]
    assert rows == [["Paris", "2026-01-10", "2026-04-02"], ["Berlin", "2026-04-02", "2026-09-15"],
                    ["Tokyo", "2026-09-15", "now"]]
    assert "2 changes" in city.text and "conflict, newer by event time wins" in city.text
    assert len(city.find_elements(By.CSS_SELECTOR, "svg rect.band-closed")) == 2
    # as of a date: the value true then
    slot = city.get_attribute("data-slot")
    browser.get(f"{server.base}/ui/users/{user_id}/timeline?slot={slot}&as_of=2026-05-01")
    assert _by_css(browser, "strong.value-at")[0].text == "Berlin"
    assert len(_by_css(browser, "section.timeline")) == 1
    # the superseding turn is a click away
    (section,) = _by_css(browser, "section.timeline")
    shots.follow(browser, section.find_element(By.LINK_TEXT, "superseded by"))  # Paris's
    assert [r.text for r in _by_css(browser, "tr[data-turn] td:last-child")] == [
        "I moved to Berlin."]
    # the memories view: the current one first, history when asked, sources one click away
    browser.get(f"{server.base}/ui/users/{user_id}?status=current&status=superseded")
    statuses = [e.text for e in _by_css(browser, "tr[data-memory] .status")]
    assert statuses == ["current", "superseded", "superseded"]
    shots.follow(browser, _by_css(browser, "tr[data-memory] a")[0])
    assert [r.text for r in _by_css(browser, "tr[data-turn] td:last-child")] == [
        "We just moved to Tokyo."]


def test_why_this_answer_matches_the_api_and_shows_each_signal(
        server: Api, keys: dict[str, str], browser: Any, user_id: str) -> None:
    _say(server, keys, user_id, [*MOVES, ("s4", "2026-10-01T09:00:00Z",
                                          "I love green tea and hiking in the Alps.")])
    query = "Where does the user live now?"
    with _http(keys) as http:
        api = http.post(f"{server.base}/v1/search",
                        json={"user_id": user_id, "query": query, "k": 10}).json()
    _sign_in(browser, server, keys["read"])
    browser.get(f"{server.base}/ui/users/{user_id}/why")
    box = _by_css(browser, "#q")[0]
    box.send_keys(query)
    shots.follow(browser, _by_css(browser, "main form button")[0])
    hits = _by_css(browser, "#hits tr.hit")
    assert [h.get_attribute("data-id") for h in hits] == [h["id"] for h in api]
    from selenium.webdriver.common.by import By

    shown = [float(h.find_element(By.CSS_SELECTOR, "td.score").text) for h in hits]
    assert shown == [round(h["score"], 3) for h in api]
    assert "Tokyo" in _by_css(browser, "#context")[0].text


def test_forget_from_the_console_removes_the_memory_everywhere(
        server: Api, keys: dict[str, str], browser: Any, user_id: str) -> None:
    _say(server, keys, user_id, [("s1", "2026-03-01T09:00:00Z", "I live in Lisbon."),
                                 ("s2", "2026-03-02T09:00:00Z", "I love green tea.")])
    with _http(keys) as http:
        memories = http.get(f"{server.base}/v1/users/{user_id}/memories").json()
    (tea,) = [m["id"] for m in memories if "tea" in m["content"]]
    # a read key: no forget link, and a forged form is refused
    _sign_in(browser, server, keys["read"])
    browser.get(f"{server.base}/ui/users/{user_id}")
    assert not [a for a in _by_css(browser, "a") if a.text == "forget"]
    # the forget key: the link, a confirmation, then gone
    _sign_in(browser, server, keys["forget"])
    browser.get(f"{server.base}/ui/users/{user_id}")
    from selenium.webdriver.common.by import By

    row = _by_css(browser, f"tr[data-memory='{tea}']")[0]
    shots.follow(browser, row.find_element(By.LINK_TEXT, "forget"))
    assert "green tea" in browser.page_source  # the confirmation shows what goes
    shots.follow(browser, _by_css(browser, "#confirm-forget")[0])
    assert f"Memory {tea}" in _by_css(browser, "#forgotten")[0].text
    with _http(keys) as http:
        assert http.get(f"{server.base}/v1/users/{user_id}/memories/{tea}").status_code == 404
        facts = http.get(f"{server.base}/v1/users/{user_id}/facts").json()
        assert tea not in {f["memory_id"] for f in facts}
        left = [m["content"] for m in http.get(
            f"{server.base}/v1/users/{user_id}/memories?all=true").json()]
        assert left == ["The user lives in Lisbon."]
    assert user_collection(f"{TENANT}:{user_id}").get(ids=[tea])["ids"] == []
    # its tombstone, in the audit view
    browser.get(f"{server.base}/ui/users/{user_id}/audit?operation=forget")
    assert [r.get_attribute("data-memory") for r in _by_css(browser, "tr.entry")] == [tea]
    assert "green tea" not in _by_css(browser, "#audit")[0].text
    # a form without the page's token (another site's) changes nothing
    signed_in = httpx.post(f"{server.base}/ui/login", data={"key": keys["forget"]},
                           follow_redirects=False)
    cookie = {"memq_console": signed_in.cookies["memq_console"]}
    lisbon = next(m["id"] for m in memories if "Lisbon" in m["content"])
    for token in ("", "0" * 64):
        res = httpx.post(f"{server.base}/ui/users/{user_id}/forget", cookies=cookie,
                         data={"token": token, "memory": lisbon}, follow_redirects=False)
        assert res.status_code in (403, 422), res.text
    reader = httpx.post(f"{server.base}/ui/login", data={"key": keys["read"]},
                        follow_redirects=False).cookies["memq_console"]
    res = httpx.post(f"{server.base}/ui/users/{user_id}/forget",
                     cookies={"memq_console": reader}, data={"token": "x"})
    assert res.status_code == 403 and "may not forget" in res.text
    with _http(keys) as http:
        assert http.get(f"{server.base}/v1/users/{user_id}/memories/{lisbon}").status_code == 200


def test_forget_the_user_from_the_console(server: Api, keys: dict[str, str], browser: Any,
                                         user_id: str) -> None:
    _say(server, keys, user_id, MOVES[:2])
    _sign_in(browser, server, keys["forget"])
    browser.get(f"{server.base}/ui/users/{user_id}/audit")
    from selenium.webdriver.common.by import By

    shots.follow(browser, browser.find_element(By.LINK_TEXT, "Forget this user…"))
    assert "cannot be undone" in browser.page_source
    shots.follow(browser, _by_css(browser, "#confirm-forget")[0])
    assert f"User {user_id} is forgotten" in _by_css(browser, "#forgotten")[0].text
    with _http(keys) as http:
        assert http.get(f"{server.base}/v1/users/{user_id}/memories?all=true").json() == []
    browser.get(f"{server.base}/ui/users/{user_id}/audit?operation=forget")
    assert _by_css(browser, "tr.entry")  # the tombstones stay, without content
    assert "Paris" not in _by_css(browser, "#audit")[0].text


def test_operations_lists_the_tenants_dead_letters_and_requeues_one(
        server: Api, keys: dict[str, str], browser: Any, user_id: str) -> None:
    from memq.workers import deadletters
    from memq.workers.coord import Coord

    coord = Coord.from_url(REDIS_URL)
    mine, theirs = f"dl-ui-{user_id}", f"dl-ui-other-{user_id}"
    for delivery, owner in ((mine, f"{TENANT}:{user_id}"), (theirs, f"{OTHER}:{user_id}")):
        batch = json.dumps({"schema_version": "1", "user_id": owner, "session_id": "s1",
                            "turns": [{"turn_id": "r1", "role": "user", "timestamp":
                                       "2026-11-03T09:00:00Z", "content": "I live in Tromsø."}]})
        deadletters.dead_letter(coord, delivery, owner, "memq.extract",
                                "TransientError: planted", {"batch": batch})
    _sign_in(browser, server, keys["admin"])
    browser.get(f"{server.base}/ui/ops")
    listed = [r.get_attribute("data-delivery") for r in _by_css(browser, "tr.dead")]
    assert mine in listed and theirs not in listed  # the tenant's only
    assert "TransientError: planted" in browser.page_source
    assert len(_by_css(browser, "figure svg")) == 4  # the charts
    from selenium.webdriver.common.by import By

    shots.follow(browser, _by_css(browser, f"tr.dead[data-delivery='{mine}']")[0].find_element(
        By.CSS_SELECTOR, "button"))
    assert "Requeued as delivery" in browser.page_source
    assert mine not in [r.get_attribute("data-delivery") for r in _by_css(browser, "tr.dead")]
    delivery = browser.page_source.split("Requeued as delivery ")[1].split(".")[0]
    with _http(keys) as http:
        (state,) = _finished(http, server, [delivery])
        assert state["state"] == "done"
        assert [m["content"] for m in http.get(
            f"{server.base}/v1/users/{user_id}/memories").json()] == ["The user lives in Tromsø."]
    # not the other tenant's
    assert theirs in [d["delivery_id"] for d in deadletters.dead_letters(coord)]
    deadletters.take(coord, lambda d: d["delivery_id"] == theirs)


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_console_shots_writes_the_five_views(server: Api, keys: dict[str, str], user_id: str,
                                             tmp_path: Path) -> None:
    _say(server, keys, user_id, MOVES)
    assert shots.main([str(tmp_path), "--url", server.base, "--key", keys["admin"],
                       "--user", user_id]) == 0
    made = sorted(p.name for p in tmp_path.glob("*.png"))
    assert made == ["1-memories.png", "2-timeline.png", "3-why.png", "4-audit.png",
                    "5-operations.png"]
    for name in made:
        width, height = _png_size(tmp_path / name)
        assert width >= 1000 and height >= 600


def test_the_api_docs_render_offline(server: Api, browser: Any, tmp_path: Path) -> None:
    """/docs and /redoc load nothing from another host (their assets are memq's), and render:
    Swagger UI lists the routes, ReDoc the title."""
    import re

    from selenium.webdriver.support.ui import WebDriverWait

    for page in ("/docs", "/redoc"):
        html = httpx.get(server.base + page, timeout=30).text
        loaded = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert loaded and all(u.startswith("/") for u in loaded), (page, loaded)
        for asset in loaded:
            assert httpx.get(server.base + asset, timeout=30).status_code == 200, asset
    browser.get(server.base + "/docs")
    WebDriverWait(browser, 60).until(lambda d: len(_by_css(d, ".opblock")) > 10)
    assert "memq" in _by_css(browser, ".swagger-ui .info .title")[0].text
    browser.save_screenshot(str(tmp_path / "docs.png"))
    assert _png_size(tmp_path / "docs.png")[0] >= 1000
    browser.get(server.base + "/redoc")
    WebDriverWait(browser, 60).until(lambda d: any("memq" in h.text for h in _by_css(d, "h1")))


def test_the_server_log_holds_no_user_text(server: Api, keys: dict[str, str]) -> None:
    """Last in the module: everything above went through this server."""
    text = server.log.read_text()
    assert "console: signed in" in text  # it does log, ids only
    # an operator's server: a start line, and one line per request (route template, key id)
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    (start,) = [e for e in lines if e.get("event") == "memq serve"]
    assert start["auth"] == "on" and start["url"].startswith("http://127.0.0.1:")
    requests = [e for e in lines if e.get("event") == "request"]
    assert any(e["route"] == "/v1/users/{user_id}/memories" and e["status"] == 200
               and e["key"] for e in requests), requests[:5]
    assert all(isinstance(e["ms"], float) for e in requests)
    for said in ("Paris", "Tokyo", "Lisbon", "green tea", "Tromsø", "Where does the user live"):
        assert said not in text
    for key in keys.values():
        assert key not in text
