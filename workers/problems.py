"""One error shape for every route: RFC 9457 problem details.

Every answer other than 2xx is ``application/problem+json``::

    {"type": "about:blank", "title": "Bad Request", "status": 400,
     "detail": "2 of 3 turns refused; item 1: content is empty",
     "errors": [{"item": 1, "reason": "content is empty"}, ...]}

``detail`` is one line a person can act on; ``errors`` is there when the request had parts
(the turns of a batch: ``item``, the 0-based index; a query or body field: ``loc``, its
dotted path) and lists each with its ``reason``. ``title`` is the status's phrase, as RFC 9457
asks when ``type`` is about:blank. Raised with FastAPI's ``HTTPException`` (``detail`` a
string, or ``{"errors": [...]}`` for a batch), its request validation, memq's own errors, and
refusals made before routing (``workers.bounds``), all turned into this one shape here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.responses import JSONResponse

MEDIA_TYPE = "application/problem+json"


def problem(status: int, detail: str, errors: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The problem document of ``status`` with its one-line ``detail``."""
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status,
                            "detail": " ".join(detail.split()) or title}
    if errors:
        body["errors"] = [dict(e) for e in errors]
    return body


def encoded(status: int, detail: str) -> bytes:
    """The problem document as bytes, for a refusal sent before any route (raw ASGI)."""
    return json.dumps(problem(status, detail)).encode()


def from_detail(status: int, detail: Any) -> dict[str, Any]:
    """The problem document for an ``HTTPException``'s detail: a string, or a batch's
    ``{"errors": [{"item": i, ...}]}`` (summarised in ``detail``, each kept in ``errors``)."""
    if isinstance(detail, Mapping) and isinstance(detail.get("errors"), list):
        errors = [e if isinstance(e, Mapping) else {"reason": str(e)} for e in detail["errors"]]
        first = errors[0] if errors else {}
        where = f"item {first['item']}: " if "item" in first else ""
        reason = first.get("reason") or first.get("error") or ""
        summary = f"{len(errors)} refused; {where}{reason}" if errors else "refused"
        return problem(status, str(detail.get("detail") or summary), errors)
    return problem(status, detail if isinstance(detail, str) else str(detail or ""))


def from_validation(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The problem document for FastAPI's request validation errors: 422, each error's field
    as a dotted ``loc`` ("body.k", "query.limit") with its ``reason``."""
    listed = [{"loc": ".".join(str(part) for part in e.get("loc", ())),
               "reason": str(e.get("msg", "invalid"))} for e in errors]
    first = listed[0] if listed else {"loc": "request", "reason": "invalid"}
    return problem(422, f"{first['loc']}: {first['reason']}", listed)


def response(body: Mapping[str, Any], headers: Mapping[str, str] | None = None
             ) -> JSONResponse:
    """``body`` (a problem document) as a response of its status, typed as a problem."""
    from starlette.responses import JSONResponse  # noqa: PLC0415  (the server's extra)

    return JSONResponse(dict(body), status_code=int(body["status"]), headers=dict(headers or {}),
                        media_type=MEDIA_TYPE)


async def http_error(_: Any, exc: Exception) -> JSONResponse:
    """FastAPI's and Starlette's ``HTTPException`` (a route's refusal, an unknown path, a
    method not allowed) as a problem, its headers (WWW-Authenticate, Retry-After) kept."""
    status = int(getattr(exc, "status_code", 500))
    return response(from_detail(status, getattr(exc, "detail", None)),
                    getattr(exc, "headers", None))


async def validation_error(_: Any, exc: Exception) -> JSONResponse:
    errors = exc.errors() if callable(getattr(exc, "errors", None)) else []  # type: ignore[attr-defined]
    return response(from_validation(errors))


def install(app: Any) -> None:
    """Every refusal of ``app`` as a problem (memq's own errors stay with their routes'
    module, which knows their status)."""
    from fastapi.exceptions import RequestValidationError  # noqa: PLC0415
    from starlette.exceptions import HTTPException  # noqa: PLC0415

    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
