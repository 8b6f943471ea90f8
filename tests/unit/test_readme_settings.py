"""Every setting is documented: the README's configuration table names each MEMQ_* variable
that workers/settings.py reads (a new setting without a row fails here)."""

from __future__ import annotations

import re
from pathlib import Path

from memq.workers.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def _documented() -> set[str]:
    table = README.read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in table.splitlines():
        cell = row.split("|")[1] if row.startswith("|") else ""
        prefix = ""
        for name in re.findall(r"`(MEMQ_[A-Z0-9_]*|_[A-Z0-9_]+)`", cell):
            if name.startswith("MEMQ_"):  # `MEMQ_BEAT_DECAY` / `_EXPIRE`: the prefix carries
                prefix = name.rsplit("_", 1)[0]
                names.add(name)
            else:
                names.add(prefix + name)
    return names


def test_every_setting_has_a_row() -> None:
    wanted = {f"MEMQ_{name.upper()}" for name in Settings.model_fields}
    assert wanted - _documented() == set()


def test_no_row_names_a_setting_that_does_not_exist() -> None:
    known = {f"MEMQ_{name.upper()}" for name in Settings.model_fields} | {"MEMQ_HOME"}
    assert _documented() - known == set()
