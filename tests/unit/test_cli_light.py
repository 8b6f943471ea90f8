"""``memq --help`` stays light: the CLI's modules (workers/cli.py and its cli_*.py) import what
a command needs when it runs, so parsing loads no broker, store driver or web server."""

from __future__ import annotations

import subprocess
import sys


def test_building_the_parser_loads_no_broker_store_or_server() -> None:
    code = ("import sys, memq.workers.cli as cli\n"
            "cli.build_parser().parse_args(['search', '--user', 'u', 'q'])\n"
            "heavy = [m for m in ('celery', 'kombu', 'redis', 'chromadb', 'neo4j', 'fastapi',"
            " 'uvicorn', 'onnxruntime', 'memq.workers.wiring') if m in sys.modules]\n"
            "print(heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
