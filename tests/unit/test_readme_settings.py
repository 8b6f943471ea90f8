"""Every setting is documented where operators look (workers/README.md), by generation: the
table there is the one workers/settings.py makes from its fields' docstrings. A new setting
without a docstring joins the row before it; an edit of the model without regenerating the
table fails here (python -m memq.workers.settings prints it)."""

from __future__ import annotations

from pathlib import Path

from memq.workers.settings import SECTIONS, Settings, markdown_table

WORKERS_README = Path(__file__).resolve().parents[2] / "workers" / "README.md"
START = "<!-- generated from workers/settings.py"
END = "<!-- end of the generated table -->"


def _block() -> str:
    text = WORKERS_README.read_text()
    start = text.index(START)
    body = text[text.index("\n", start) + 1:text.index(END)]
    return body


def test_the_settings_table_is_the_generated_one() -> None:
    assert _block() == markdown_table(), (
        "workers/README.md's settings table is stale: replace it with the output of "
        "`.venv/bin/python -m memq.workers.settings`")


def test_every_setting_has_a_row_and_each_section_starts_with_a_documented_field() -> None:
    table = markdown_table()
    for name in Settings.model_fields:
        assert f"`MEMQ_{name.upper()}`" in table, name
    for first in SECTIONS:
        assert Settings.model_fields[first].description, first


def test_the_readme_sends_readers_to_the_settings() -> None:
    readme = (WORKERS_README.parents[1] / "README.md").read_text()
    assert "workers/README.md" in readme and "every setting" in readme
