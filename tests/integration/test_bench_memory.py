"""scripts/bench memory end to end on a small LoCoMo-shaped file (made here; the published
sets stay out of the repo and out of CI): it ingests through a worker process of its own,
asks every question and writes a report whose figures follow from what was asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from integration.conftest import REPO, memq_env

pytestmark = pytest.mark.integration

TURNS = [
    ("Ana", "Hi Rui! I finally adopted a greyhound called Biscuit last weekend."),
    ("Rui", "That's wonderful! How is Biscuit settling in?"),
    ("Ana", "She sleeps all day on the sofa, and she loves the beach."),
    ("Rui", "I started learning the cello this month, it is harder than I thought."),
    ("Ana", "Keep going! My sister plays the violin in an orchestra in Porto."),
    ("Rui", "I'll be visiting Porto in August for a conference on solar panels."),
]


def _dataset(path: Path) -> None:
    session = [{"speaker": who, "dia_id": f"D1:{i + 1}", "text": text}
               for i, (who, text) in enumerate(TURNS)]
    sample = {
        "sample_id": "tiny",
        "conversation": {"speaker_a": "Ana", "speaker_b": "Rui",
                         "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session},
        "qa": [
            {"question": "What is the name of Ana's dog?", "answer": "Biscuit",
             "evidence": ["D1:1"], "category": 4},
            {"question": "Which instrument is Rui learning?", "answer": "cello",
             "evidence": ["D1:4"], "category": 4},
            {"question": "Why is Rui going to Porto?", "answer": "a conference on solar panels",
             "evidence": ["D1:6"], "category": 3},
            {"question": "Is there an answer?", "adversarial_answer": "no", "evidence": [],
             "category": 5}]}
    path.write_text(json.dumps([sample]))


def test_bench_memory_on_a_tiny_locomo_file(tmp_path: Path) -> None:
    _dataset(tmp_path / "tiny.json")
    out = tmp_path / "report.json"
    res = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench.py"), "memory", "--dataset",
         str(tmp_path / "tiny.json"), "--out", str(out), "--png", str(tmp_path / "r.png")],
        cwd=REPO, env=memq_env(), capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "locomo: 1 users, 6 turns (0 empty published turns skipped), 3 questions" in res.stdout
    report = json.loads(out.read_text())
    table = report["table"]
    assert table["all"]["n"]["questions"] == 3  # category 5 has no answer: not asked
    assert table["single-hop"]["memq"]["R@10"] == 1.0  # six turns: every one is in the top 10
    assert table["all"]["memq"]["R@5"] >= table["all"]["bm25"]["R@5"]
    assert report["moved_lists"] == {"moved": 0, "of": 3}
    assert report["context"]["n"]["all"] == 3
    assert report["context"]["memq"]["single-hop"] == 1.0  # six short turns fit in 800 tokens
    assert report["ingest"]["turns"] == 6
    assert res.stdout.rstrip().splitlines()[-3].startswith("summary dataset=locomo")
