"""A setting's old name still sets it (a deployment's environment keeps working), the new
name wins when both are set, code sets it by the field's name, and `memq worker` warns of the
old name (workers.settings.RENAMED)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memq.workers.settings import RENAMED, Settings, renamed_in


@pytest.fixture(autouse=True)
def _neither(monkeypatch: pytest.MonkeyPatch) -> None:
    for old, new in RENAMED.items():
        monkeypatch.delenv(old, raising=False)
        monkeypatch.delenv(new, raising=False)


def test_the_claim_s_old_name_is_read_and_the_new_one_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().claim_s == 60
    monkeypatch.setenv("MEMQ_LOCK_LEASE_S", "7")
    assert Settings().claim_s == 7
    monkeypatch.setenv("MEMQ_CLAIM_S", "9")
    assert Settings().claim_s == 9
    assert Settings(claim_s=3).claim_s == 3


def test_every_old_name_is_read_by_its_field_and_warned_of(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert renamed_in({}) == []
    for old, new in RENAMED.items():
        field = new.removeprefix("MEMQ_").lower()
        monkeypatch.setenv(old, "2")
        assert getattr(Settings(), field) == 2, old
        assert renamed_in({old: "2"}) == [
            f"{old} is the old name of {new}: it is still read, rename it"]


def test_an_old_name_in_the_env_file_is_warned_of_with_the_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("MEMQ_LOCK_LEASE_S=7\n")
    monkeypatch.chdir(tmp_path)
    assert Settings().claim_s == 7  # the settings read it ...
    assert renamed_in({}, env) == [  # ... so the warning names it, and where it is
        f"MEMQ_LOCK_LEASE_S is the old name of MEMQ_CLAIM_S: it is still read, rename it "
        f"(in {env})"]
    assert renamed_in({}, tmp_path / "none") == []
