"""Which predicates hold one object at a time. Loaded from predicates.json (data, not code)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Predicates:
    single: frozenset[str]

    def is_single(self, predicate: str) -> bool:
        return predicate in self.single

    @classmethod
    def default(cls) -> Predicates:
        raw = json.loads(resources.files("memq.pipeline").joinpath("predicates.json").read_text())
        return cls(single=frozenset(raw["single"]))
