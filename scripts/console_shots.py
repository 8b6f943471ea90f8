"""``scripts/console-shots DIR``: PNG screenshots of the console's five views, taken by headless
Chromium (Debian's, through its chromedriver: nothing downloads a browser) against running
services, so a reviewer can look without running anything else.

By default it serves the console itself for the span of the run (``memq serve`` on a free
loopback port, with ``MEMQ_AUTH=off``: it shows the users of ``MEMQ_TENANT``, the CLI's, such
as the demo's) and shows ``demo-user`` (``scripts/demo`` makes it). ``--url`` and ``--key`` take an
existing ``memq serve`` instead, signing in with the key; ``--user`` names another user.

Also the browser factory of the console's tests (``tests/integration/test_console.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("MEMQ_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MEMQ_CHROMEDRIVER", "/usr/bin/chromedriver")
# as the machine's notes say: without the background-networking flags Chromium keeps dialling
# out (refused here), and it must not look for updates or sync
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")
VIEWS = ("memories", "timeline", "why", "audit", "operations")


@contextlib.contextmanager
def browser(width: int = 1366, height: int = 900) -> Iterator[Any]:
    """A headless Chromium under WebDriver, with a fresh profile; quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists():
            raise SystemExit(f"console-shots: {path} is missing: apt-get install chromium "
                             "chromium-driver (scripts/test installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    with tempfile.TemporaryDirectory(prefix="memq-chromium-") as profile:
        for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/ui/login")
    driver.find_element(By.ID, "key").send_keys(key)
    follow(driver, driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]"))


def follow(driver: Any, element: Any, timeout: float = 30) -> None:
    """Click a link or a form's button and wait for the page it leads to: the click returns
    before the browser navigates, and the page it left would otherwise still be read. The
    old page is marked (a window property, set through WebDriver, which the pages' CSP does
    not govern); the new one has no mark and has loaded. Asking an element of the old page
    instead whether it is stale fails now and then in Chromium mid-navigation ("Node with
    given id does not belong to the document")."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__memqLeft = true;")
    element.click()
    WebDriverWait(driver, timeout, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.__memqLeft === undefined && document.readyState === 'complete';"))


def full_page(driver: Any, path: Path, width: int = 1366) -> Path:
    """The whole page, not only the window: the window grown to the document's height."""
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(width, max(900, min(height + 120, 6000)))
    driver.save_screenshot(str(path))
    return path


def shoot(driver: Any, base: str, user: str, query: str, out: Path) -> list[Path]:
    """The five views of ``user`` (and the operations view), one PNG each, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    u = quote(user, safe="")
    pages = {"memories": f"/ui/users/{u}?status=current&status=superseded",
             "timeline": f"/ui/users/{u}/timeline",
             "why": f"/ui/users/{u}/why?q={quote(query)}",
             "audit": f"/ui/users/{u}/audit",
             "operations": "/ui/ops"}
    shots = []
    for i, name in enumerate(VIEWS, start=1):
        driver.get(base + pages[name])
        if "/ui/login" in driver.current_url:
            raise SystemExit("console-shots: the console asks for a key (pass --key)")
        shots.append(full_page(driver, out / f"{i}-{name}.png"))
    return shots


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def own_server() -> Iterator[str]:
    """``memq serve`` on a free loopback port with MEMQ_AUTH=off, for the span of the run."""
    import httpx

    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="memq-shots-")) / "serve.log"
    proc = subprocess.Popen([str(REPO / ".venv" / "bin" / "memq"), "serve", "--host",
                             "127.0.0.1", "--port", str(port)], cwd=REPO,
                            env={**os.environ, "MEMQ_AUTH": "off"},
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"console-shots: memq serve did not start: {log}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scripts/console-shots", description=__doc__.split("\n")[0])
    p.add_argument("dir", type=Path, help="where the PNG files go")
    p.add_argument("--url", help="an existing memq serve (default: one of its own, auth off)")
    p.add_argument("--key", help="an API key to sign in with (with --url and auth on)")
    p.add_argument("--user", default="demo-user", help="whose memory (default: demo-user)")
    p.add_argument("--query", default="What do our production servers run?",
                   help="the query of the 'why this answer' view")
    args = p.parse_args(argv)
    import httpx

    with contextlib.ExitStack() as stack:
        base = args.url.rstrip("/") if args.url else stack.enter_context(own_server())
        headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}
        found = httpx.get(f"{base}/v1/users/{quote(args.user, safe='')}/memories",
                          headers=headers, timeout=30)
        if found.status_code != 200:
            print(f"console-shots: {base} answered {found.status_code} for the user's "
                  f"memories: {found.text[:200]}", file=sys.stderr)
            return 2
        if not found.json():
            print(f"console-shots: user {args.user} has no memory here: run scripts/demo "
                  "first, or pass --user", file=sys.stderr)
            return 2
        driver = stack.enter_context(browser())
        if args.key:
            sign_in(driver, base, args.key)
        for path in shoot(driver, base, args.user, args.query, args.dir):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
