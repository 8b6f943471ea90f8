"""The store shards' settings (workers.settings) and the placement hash (workers.placement)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memq.workers.placement import home
from memq.workers.settings import Settings


def test_the_first_shard_is_the_single_instance_and_the_rest_follow_in_order() -> None:
    s = Settings(neo4j_port=7001, chroma_port=8001,
                 neo4j_shards="bolt://10.0.0.2:7687, neo4j://10.0.0.3:7687",
                 chroma_shards="10.0.0.2:8000,chroma-b:8002")
    assert s.graph_uris() == ["bolt://127.0.0.1:7001", "bolt://10.0.0.2:7687",
                              "neo4j://10.0.0.3:7687"]
    assert s.chroma_addresses() == [("127.0.0.1", 8001), ("10.0.0.2", 8000), ("chroma-b", 8002)]
    plain = Settings()
    assert len(plain.graph_uris()) == 1 and len(plain.chroma_addresses()) == 1


@pytest.mark.parametrize(("field", "value", "says"), [
    ("neo4j_shards", "http://10.0.0.2:7474", "not a bolt:// or neo4j:// URI"),
    ("chroma_shards", "10.0.0.2", "is not host:port"),
    ("chroma_shards", "10.0.0.2:80a", "is not host:port"),
])
def test_a_malformed_shard_is_refused_with_its_name(field: str, value: str, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        Settings(**{field: value})


def test_placement_is_a_stable_hash_salted_per_kind() -> None:
    assert home("chroma", "acme:u1", 3) == home("chroma", "acme:u1", 3)
    users = [f"u{i}" for i in range(2000)]
    spread = [sum(1 for u in users if home("neo4j", u, 4) == i) for i in range(4)]
    assert min(spread) > 400  # ~500 each
    same = sum(1 for u in users if home("neo4j", u, 4) == home("chroma", u, 4))
    assert 350 < same < 650  # independent maps: ~1/4 agree by chance
