"""Chroma (server mode) for memories and episodes: the one entry point, ``ChromaStores``.

Split by concern, one module each, so that each can be read and changed alone:

- ``chroma_layout``: where records live (collection names, shards and own collections per kind
  and embedding model, the registry of models, every read's user clause) and the reads and
  writes of a place; its docstring is the design of the layout.
- ``chroma_records``: what a record holds (no words) and how it is read back.
- ``chroma_memories``: the memory index (``MemoryStore``).
- ``chroma_episodes``: the episode index (``EpisodeStore``).
- ``chroma_moves``: moving a user's records between places, servers and models.

The names callers import from this module stay importable from here.
"""

from __future__ import annotations

from .chroma_episodes import ChromaEpisodes
from .chroma_layout import (
    BASE_MODEL,
    DEMOTE_AT,
    EPISODES,
    HNSW,
    MEMORIES,
    MODELS_TTL_S,
    OWN_AFTER,
    OWN_EF,
    OWN_SYNC,
    OWN_TTL_S,
    PAGE,
    REGISTRY,
    SHARD_HNSW,
    SHARDS,
    USER,
    WRITE_BATCH,
)
from .chroma_memories import ChromaMemories
from .chroma_records import (
    EPISODE_KEYS,
    LEGACY_CONSOLIDATED,
    RECORD,
    WORDS,
    UnreadableRecord,
    Words,
    episode_fields,
    episode_metadata,
    memory_metadata,
    pack_passages,
    passage_cosine,
)

__all__ = [
    "BASE_MODEL", "DEMOTE_AT", "EPISODES", "EPISODE_KEYS", "HNSW", "LEGACY_CONSOLIDATED",
    "MEMORIES", "MODELS_TTL_S", "OWN_AFTER", "OWN_EF", "OWN_SYNC", "OWN_TTL_S", "PAGE",
    "RECORD", "REGISTRY", "SHARDS", "SHARD_HNSW", "USER", "WORDS", "WRITE_BATCH",
    "ChromaStores", "UnreadableRecord", "Words", "episode_fields", "episode_metadata",
    "memory_metadata", "pack_passages", "passage_cosine",
]


class ChromaStores(ChromaMemories, ChromaEpisodes):
    """Implements MemoryStore (memories) and EpisodeStore (episodes) on one client."""
