"""What each component of the local stack (workers/stack.py) needs before it starts, installed
where that is reasonable, or one line saying how.

Debian's packages (redis-server; java 17 and maven for Neo4j) come from apt only when running
as root where apt-get exists, as on a fresh CI machine; anywhere else the line names the
package. Neo4j 5 Community's jars come from Maven Central once, into
``MEMQ_CACHE/neo4j-<version>/lib`` (the launcher and its pom ship in memq: workers/neo4j/).
The stack's :class:`Config` is defined here too; workers/stack.py starts what this installs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NEO4J_VERSION = "5.26.0"
LAUNCHER = Path(__file__).resolve().parent / "neo4j"
JAVA_MIN = 17


@dataclass(frozen=True)
class Config:
    """The local stack's configuration (``stack.config`` reads it from the settings): here,
    beside the installers that take it, so that ``workers/stack.py`` builds on this module
    and not the other way round."""

    home: Path
    cache: Path
    redis_port: int = 6379
    neo4j_port: int = 7687
    chroma_port: int = 8000
    api_port: int = 8080
    neo4j_heap: str = "512m"
    neo4j_pagecache: str = "128m"
    neo4j_checkpoint_s: int = 60
    neo4j_java_opts: str = ""
    chroma_bin: Path = Path(sys.executable).parent / "chroma"
    chroma_log_index: bool = False
    python: str = sys.executable

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    @property
    def neo4j_lib(self) -> Path:
        return self.cache / f"neo4j-{NEO4J_VERSION}" / "lib"


class StackError(Exception):
    """A component that cannot start, in one line; ``log``: the file whose end says why."""

    def __init__(self, message: str, log: Path | None = None) -> None:
        super().__init__(message)
        self.log = log


def can_apt() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


_apt_updated = False


def apt_install(*packages: str) -> None:
    global _apt_updated  # noqa: PLW0603  (one `apt-get update` per run, as the script did)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        if not _apt_updated:
            subprocess.run(["apt-get", "update", "-q"], check=True, env=env,
                           stdout=subprocess.DEVNULL)
            _apt_updated = True
        subprocess.run(["apt-get", "install", "-y", "-q", *packages], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError as exc:
        raise StackError(f"apt-get install {' '.join(packages)} failed "
                         f"(exit {exc.returncode})") from None


def ensure_redis(cfg: Config) -> None:
    if shutil.which("redis-server"):
        return
    if not can_apt():
        raise StackError("redis: redis-server not found: apt install redis-server "
                         "(or your system's package), then memq up again")
    print("redis: installing redis-server (apt)", flush=True)
    apt_install("redis-server")
    # Debian's package may start its own instance on 6379; the stack runs its own instead
    init = Path("/etc/init.d/redis-server")
    if init.exists():
        subprocess.run([str(init), "stop"], check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def java_major(version_text: str) -> int | None:
    """The major version in ``java -version``'s output: ``"17.0.13"`` is 17, ``"1.8.0_412"``
    is 8; None when there is none."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _java() -> int | None:
    if not shutil.which("java"):
        return None
    done = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    return java_major(done.stderr + done.stdout)


def neo4j_missing(java: int | None, have_jars: bool, have_mvn: bool) -> list[str]:
    """What Neo4j lacks: java 17+ always (the launcher runs from source), mvn only while its
    jars are not downloaded yet."""
    missing = []
    if java is None or java < JAVA_MIN:
        missing.append(f"java {JAVA_MIN}+" + (f" (found java {java})" if java else ""))
    if not have_jars and not have_mvn:
        missing.append("mvn")
    return missing


def ensure_neo4j(cfg: Config) -> None:
    have_jars = any(cfg.neo4j_lib.glob("*.jar"))

    def missing() -> list[str]:
        return neo4j_missing(_java(), have_jars, shutil.which("mvn") is not None)

    if missing() and can_apt():
        print("neo4j: installing java 17 + maven (apt)", flush=True)
        apt_install("openjdk-17-jdk-headless", "maven")
    lacking = missing()
    if lacking:
        raise StackError(f"neo4j: needs {' and '.join(lacking)}: "
                         "apt install openjdk-17-jdk-headless maven")
    if not have_jars:
        download_neo4j(cfg)


def mvn_argv(out: Path) -> list[str]:
    return ["mvn", "-q", "-B", "-f", str(LAUNCHER / "pom.xml"), "dependency:copy-dependencies",
            f"-Dneo4j.version={NEO4J_VERSION}", f"-DoutputDirectory={out}"]


def download_neo4j(cfg: Config) -> None:
    lib = cfg.neo4j_lib
    print(f"neo4j: downloading Neo4j {NEO4J_VERSION} jars into {lib} (~130 MB, once)",
          flush=True)
    partial = lib.with_name(lib.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    cfg.logs.mkdir(parents=True, exist_ok=True)
    log = cfg.logs / "neo4j-download.log"
    with log.open("wb") as out:
        done = subprocess.run(mvn_argv(partial), stdout=out, stderr=subprocess.STDOUT,
                              check=False)
    if done.returncode != 0:
        raise StackError("neo4j: jar download failed", log)
    shutil.rmtree(lib, ignore_errors=True)
    partial.rename(lib)  # only a complete download is ever named lib/


def ensure_chroma(cfg: Config) -> None:
    if cfg.chroma_bin.is_file() and os.access(cfg.chroma_bin, os.X_OK):
        return
    raise StackError(f"chroma: {cfg.chroma_bin} not found: pip install \"memq[worker]\" "
                     "(chromadb ships it) or set MEMQ_CHROMA_BIN")


def _needs(name: str, modules: tuple[str, ...], extra: str) -> None:
    lacking = [m for m in modules if importlib.util.find_spec(m) is None]
    if lacking:
        raise StackError(f"{name}: needs {', '.join(lacking)}: pip install \"memq[{extra}]\" "
                         f"(or memq up --no-{name})")


def ensure_worker(cfg: Config) -> None:
    _needs("worker", ("celery", "chromadb", "neo4j"), "worker")


def ensure_server(cfg: Config) -> None:
    _needs("server", ("fastapi", "uvicorn"), "server")
