"""Which predicates hold one object at a time. Loaded from predicates.json (data, not code)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources


@dataclass(frozen=True)
class Predicates:
    single: frozenset[str]
    # a change of the key's value also ends these predicates' facts held since before it
    closes_with: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def is_single(self, predicate: str) -> bool:
        return predicate in self.single

    def dependents(self, predicate: str) -> frozenset[str]:
        return self.closes_with.get(predicate, frozenset())

    def related(self, predicate: str) -> frozenset[str]:
        """What a plan for a fact of ``predicate`` reads besides its slot: its dependents,
        and the predicates it depends on (a role's employer)."""
        return self.dependents(predicate) | frozenset(
            k for k, deps in self.closes_with.items() if predicate in deps)

    @classmethod
    def default(cls) -> Predicates:
        raw = json.loads(resources.files("memq.pipeline").joinpath("predicates.json").read_text())
        return cls(single=frozenset(raw["single"]),
                   closes_with={k: frozenset(v) for k, v in raw.get("closes_with", {}).items()})
