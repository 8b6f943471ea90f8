"""Neo4j: memories, entities, facts (triples with validity in time), the audit trail and the
turns' words. The one entry point: ``Neo4jGraph``.

Split by concern, one module each, so that each can be read and changed alone:

- ``session``: the driver, the schema, and how a statement runs (the Cypher files loaded by
  name, one auto-commit transaction each, retries of a deadlock, a fenced write of several
  statements); its docstring says why.
- ``records``: the graph's rows as memq's values and back.
- ``plans``: the write path: the user's version (the fence), a plan's reads, its fenced write,
  and how far Chroma holds the graph.
- ``memories``: the state of record read back (memories, audit, facts, ``memq check``'s view),
  and a recall's unfenced importance bump.
- ``episodes``: the turns with their words: written, read back, deleted; and
  consolidation's marks on them.
- ``search``: search's reads (BM25 over memories and turns, what is no longer true).
- ``users``: a user as a whole: listing, copying to another instance, deleting, forgetting.

The names callers import from this module stay importable from here.
"""

from __future__ import annotations

from .episodes import Neo4jEpisodes
from .memories import Neo4jMemories
from .plans import Neo4jPlans
from .records import stored_memory
from .search import Neo4jSearch
from .session import (
    ACQUIRE_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    DRIVER_RETRY_S,
    INCLUDE,
    RETRIES,
    cypher,
)
from .users import COPIED_LABELS, COPIED_TYPES, Neo4jUsers

__all__ = [
    "ACQUIRE_TIMEOUT_S", "CONNECT_TIMEOUT_S", "COPIED_LABELS", "COPIED_TYPES", "DRIVER_RETRY_S",
    "INCLUDE", "RETRIES", "Neo4jGraph", "cypher", "stored_memory",
]


class Neo4jGraph(Neo4jPlans, Neo4jMemories, Neo4jEpisodes, Neo4jSearch, Neo4jUsers):
    """Implements GraphStore and TextIndex on one database."""
