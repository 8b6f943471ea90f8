"""memq: the write pipeline for AI-agent long-term memory.

The import root: the repository's root is this package and its top-level folders are its
subpackages: ``memq.schemas`` (the contract), ``memq.pipeline`` (the pure core
and its adapters), ``memq.workers`` (Celery app ``memq.workers.app``, tasks, CLI, HTTP API).

An agent needs only::

    from memq import Client
    memory = Client()                        # MEMQ_* settings from the environment / .env
    ids = memory.add("u42", [{"role": "user", "content": "I moved to Berlin."}])
    memory.wait(ids)
    memory.search("u42", "where do I live?")

From a host outside the trusted network, with only the API's URL and a key (``memq serve``,
``memq keys create``), the same methods over HTTP::

    from memq import HttpClient
    memory = HttpClient("https://memq.example", api_key="mq_...")  # or MEMQ_API_URL / _KEY

Code written for mem0 runs with ``from memq import Memory`` (``memq.workers.mem0``: mem0's
calls and results, memq's pipeline underneath).

The clients are loaded on first use, so ``import memq`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from .workers.api import AsyncClient, Client
    from .workers.http_client import ApiError, AsyncHttpClient, HttpClient
    from .workers.mem0 import AsyncMemory, Memory

# Nothing but definitions runs at import: pytest imports the checkout's root as a package of
# whatever name its folder has (a CI clone's may be no identifier), where no relative import
# resolves (tests/unit/test_imports.py: test_the_root_imports_alone).

__all__ = ["ApiError", "AsyncClient", "AsyncHttpClient", "AsyncMemory", "Client", "HttpClient",
           "Memory", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from .workers.version import version  # noqa: PLC0415

        return version()
    if name in ("Client", "AsyncClient"):
        from .workers import api  # noqa: PLC0415  (lazy: keeps `import memq` light)

        return getattr(api, name)
    if name in ("Memory", "AsyncMemory"):
        from .workers import mem0  # noqa: PLC0415

        return getattr(mem0, name)
    if name in ("HttpClient", "AsyncHttpClient", "ApiError"):
        from .workers import http_client  # noqa: PLC0415

        return getattr(http_client, name)
    raise AttributeError(f"module 'memq' has no attribute {name!r}")
