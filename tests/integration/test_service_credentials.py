"""memq's own credentials to the services: a Redis that wants a password (an ACL user, the
default user off) and speaks only TLS, started here, with the URL read from a file
(MEMQ_REDIS_URL_FILE). A real worker (its reaper included), ``memq serve``, ``memq keys``,
``memq status`` and ``memq doctor`` all run on it; a wrong password is one line; the password
is in no log line and no output."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from integration.conftest import (
    Worker,
    free_port,
    memq,
    memq_env,
    start_api,
    start_worker,
)

pytestmark = pytest.mark.integration


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def tls_redis(services: None, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[tuple[str, str, Path]]:
    """(the URL, the password, its folder): a CA, a server certificate for 127.0.0.1, and a
    redis-server with TLS only and one ACL user."""
    d = tmp_path_factory.mktemp("tls-redis")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
             "/CN=memq-test-ca", "-keyout", "ca.key", "-out", "ca.crt", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
             "server.key", "-out", "server.csr", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "1", "-extfile", "ext.cnf", "-out", "server.crt",
             cwd=d)
    password = secrets.token_urlsafe(18)
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--tls-cert-file",
         "server.crt", "--tls-key-file", "server.key", "--tls-ca-cert-file", "ca.crt",
         "--tls-auth-clients", "no", "--appendonly", "yes", "--dir", str(d),
         "--user", "default", "off", "--user", "memq", "on", f">{password}", "~*", "&*",
         "+@all", "--save", ""], cwd=d, stdout=(d / "redis.log").open("wb"),
        stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while b"Ready to accept connections" not in (d / "redis.log").read_bytes():
        assert proc.poll() is None and time.monotonic() < deadline, (d / "redis.log").read_text()
        time.sleep(0.1)
    url = (f"rediss://memq:{password}@127.0.0.1:{port}/0"
           f"?ssl_ca_certs={d / 'ca.crt'}&ssl_cert_reqs=required")
    yield url, password, d
    proc.terminate()
    proc.wait(timeout=20)


def test_a_password_and_tls_redis_end_to_end(tls_redis: tuple[str, str, Path],
                                             tmp_path: Path) -> None:
    from memq.workers.http_client import HttpClient

    url, password, folder = tls_redis
    secret = folder / "redis_url"
    secret.write_text(url + "\n")
    env = {k: v for k, v in memq_env().items() if k != "MEMQ_REDIS_URL"}
    env["MEMQ_REDIS_URL_FILE"] = str(secret)
    worker: Worker | None = None
    api = None
    try:
        worker = start_worker(tmp_path, "wtls", concurrency=1, env=env)
        api = start_api(tmp_path / "serve.log", base_env=env)
        key = json.loads(memq("keys", "create", "--tenant", "tls", "--scope", "admin",
                              "--json", env=env).stdout)["key"]
        user = f"t-tls-{uuid.uuid4().hex[:8]}"
        with HttpClient(api.base, api_key=key) as memory:
            ids = memory.add(user, [{"role": "user", "content": "I live in Valparaiso."}])
            assert [s.state for s in memory.wait(ids, timeout=300)] == ["done"]
            assert any("Valparaiso" in h.content for h in memory.search(user, "where?"))
            memory.forget(user)
        status = json.loads(memq("status", "--json", env=env).stdout)
        assert any(name.startswith("wtls@") for name in status["workers"]), status
        doctor = json.loads(memq("doctor", "--json", env=env).stdout)
        assert [c["ok"] for c in doctor["checks"] if c["name"] == "redis"] == [True]
        assert [u.split()[0] for u in doctor["unauthenticated"]] == ["neo4j", "chroma"]
        config = memq("doctor", "--config", env=env).stdout

        wrong = {**memq_env(MEMQ_REDIS_URL=url.replace(password, "not-the-password"))}
        res = memq("status", env=wrong, check=False)
        assert res.returncode == 3 and res.stderr.count("\n") == 1, res.stderr
        assert "cannot reach Redis" in res.stderr and "not-the-password" not in res.stderr
        plain = memq_env(MEMQ_REDIS_URL=url.replace("rediss://", "redis://").split("?")[0])
        assert memq("status", env=plain, check=False).returncode == 3
        unauthenticated = json.loads(memq("doctor", "--json", check=False).stdout)
        assert unauthenticated["unauthenticated"][0].startswith("redis")  # the tests' own
    finally:
        if api is not None:
            api.stop()
        if worker is not None:
            worker.stop()
    for text in (worker.log.read_text(errors="replace"), api.log.read_text(errors="replace"),
                 config):
        assert password not in text
