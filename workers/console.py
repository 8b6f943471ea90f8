"""The memory console: ``memq serve`` at ``/ui``, server-rendered pages (Jinja2, autoescaped).

Five views of what memq remembers, each a page that works without script:

1. **Memories** (``/ui/users/<u>``): by person and kind, with confidence, importance after
   decay, status, and the source turns one click away;
2. **Timeline** (``/ui/users/<u>/timeline``): per slot, the values over valid time as bands,
   when each was recorded and closed, why and by which turns; ``as of`` a date;
3. **Why this answer** (``/ui/users/<u>/why``): the ranked hits of a query, what each
   signal contributed (``recall.Signals``), and the context block an agent would receive;
4. **Audit and forget** (``/ui/users/<u>/audit``): the trail, filtered by memory and
   operation, the tombstones, and forget (a memory, or the user) after a confirmation;
5. **Operations** (``/ui/ops``): queues, in flight, mailboxes, dead letters with their
   reasons and a requeue button, throughput and freshness charts (``metrics.samples``).

Access is the API's (``workers.auth``): the browser signs in with an API key and holds an
opaque session id (HttpOnly, SameSite=Strict, scoped to ``/ui``, ``Secure`` over https or
when ``MEMQ_PUBLIC_URL`` is https); the session lives in Redis with its key id for 8 hours,
ends at logout and when the key is revoked (``KeyStore.open_session``). The key's tenant owns
the users it sees, its scopes say what it may do (``read`` the views, ``forget`` the forget
buttons, ``admin`` the operations view), and its pages count against the tenant's request
rate. Sign-in attempts are rate-limited per client address. Every form that changes
something carries the session's own token, which only its pages know. With
``MEMQ_AUTH=off`` everything is open, as the API is.
Every view of a user is kept in the tenant's access record. No user text is logged: the
pages are not, and the query of "why" stays out of every log line.
"""

from __future__ import annotations

import hmac
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import structlog
from fastapi import APIRouter, FastAPI, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..pipeline import console as view
from . import auth, problems, wiring
from .http_deps import Caller

log = structlog.get_logger(__name__)
HERE = Path(__file__).parent / "ui"
COOKIE = "memq_console"
COOKIE_S = 8 * 3600
SIGN_IN_BURST, SIGN_IN_RATE = 20, 1 / 3  # attempts per client address: 20, then one per 3 s
USERS_SHOWN = 200
CHART_W, CHART_H = 560, 120
TIMELINE_W = 720
OPERATIONS = ("add", "update", "supersede", "drop_duplicate", "repair", "archive",
              "consolidate", "forget", "recall")


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def _day(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d") if value else "—"


@cache
def _templates() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(("html",), default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = _when
    env.filters["day"] = _day
    return env


@dataclass(frozen=True)
class Viewer:
    """Who looks: the key (None: auth off) and the token its forms carry."""

    key: auth.ApiKey | None
    form: str = ""

    @property
    def tenant(self) -> str:
        """The key's tenant; with ``MEMQ_AUTH=off``, ``MEMQ_TENANT``."""
        return self.key.tenant if self.key else wiring.settings().tenant

    @property
    def who(self) -> str:
        return self.key.id if self.key else ""

    def may(self, scope: str) -> bool:
        return self.key is None or self.key.allows(scope)

    def user(self, user_id: str) -> str:
        try:
            return auth.tenant_user(self.tenant, user_id)
        except auth.AuthError as exc:
            raise HTTPException(400, str(exc)) from None

    def sees(self, internal: str | None) -> str | None:
        """The viewer's id of a stored user id; None when it is not the viewer's."""
        return auth.external_user(self.tenant, internal)


class _SignIn(Exception):
    """No (valid) key in the cookie: to the sign-in page."""


def _viewer(request: Request, scope: str = "read") -> Viewer:
    s = wiring.settings()
    if s.auth == "off":
        return Viewer(None, wiring.keys().form_token())
    found = wiring.keys().session(request.cookies.get(COOKIE, ""))
    if found is None:
        raise _SignIn
    key, form = found
    if not key.allows(scope):
        raise HTTPException(403, f"this key may not {scope} (its scopes: "
                                 f"{','.join(sorted(key.scopes))})")
    wait = wiring.keys().take(key.tenant, "requests", 1, s.rate_requests_per_s,
                              s.rate_requests_burst)
    if wait > 0:
        raise HTTPException(429, f"tenant {key.tenant}: more than {s.rate_requests_per_s:g} "
                                 f"requests a second; try again in {math.ceil(wait)} s",
                            headers={"Retry-After": str(math.ceil(wait))})
    return Viewer(key, form)


def _record(request: Request, viewer: Viewer, user_id: str) -> None:
    """The view of a user goes to the tenant's access record (the API's middleware)."""
    request.state.caller = Caller(viewer.key, [user_id])


def _same_origin(request: Request) -> None:
    """A form that changes something comes from this console's own pages."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "a form from another site")
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise HTTPException(403, "a form from another site")


def _checked(request: Request, viewer: Viewer, token: str) -> None:
    _same_origin(request)
    if not (viewer.form and hmac.compare_digest(viewer.form, token)):
        raise HTTPException(403, "this form has expired or is not from this console: "
                                 "reload the page")


def _page(request: Request, name: str, viewer: Viewer | None, status: int = 200,
          **values: Any) -> HTMLResponse:
    html = _templates().get_template(name).render(
        viewer=viewer, auth_on=wiring.settings().auth == "on", path=request.url.path,
        token=viewer.form if viewer else "", **values)
    return HTMLResponse(html, status_code=status, headers={
        "Cache-Control": "no-store", "X-Frame-Options": "DENY",
        "Content-Security-Policy": "default-src 'self'; style-src 'self'; img-src 'self' data:;"
                                   " script-src 'none'; frame-ancestors 'none'",
        "Referrer-Policy": "no-referrer"})


def _open(request: Request, user_id: str, scope: str = "read") -> tuple[Viewer, str]:
    """The viewer, allowed ``scope``, and the stores' id of its user ``user_id``; the view is
    kept in the tenant's access record."""
    viewer = _viewer(request, scope)
    internal = viewer.user(user_id)
    _record(request, viewer, user_id)
    return viewer, internal


def _user_page(request: Request, name: str, viewer: Viewer, user_id: str,
               **values: Any) -> HTMLResponse:
    return _page(request, name, viewer, user_id=user_id, nav=_user_nav(user_id), **values)


def _user_nav(user_id: str) -> list[tuple[str, str]]:
    base = f"/ui/users/{user_id}"
    return [("Memories", base), ("Timeline", f"{base}/timeline"),
            ("Why this answer", f"{base}/why"), ("Audit and forget", f"{base}/audit")]


def _parse_day(text: str | None, field: str) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise HTTPException(400, f"{field}: a date as YYYY-MM-DD (or an ISO time)") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC) + timedelta(days=1, seconds=-1)


def mount(app: FastAPI) -> None:
    """The console's routes and its static files, on the API's app: one function a page."""
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")
    router = APIRouter(prefix="/ui", include_in_schema=False)
    _error_pages(app)

    @app.get("/ui", include_in_schema=False)
    def _ui() -> Response:
        return RedirectResponse("/ui/", status_code=307)

    for view_routes in (_view_sign_in, _view_home, _view_memories, _view_turns, _view_timeline,
                        _view_why, _view_audit, _view_forget, _view_ops):
        view_routes(router)
    app.include_router(router)


def _error_pages(app: FastAPI) -> None:
    """A console page that is refused: to the sign-in page, or the error as a page."""

    @app.exception_handler(_SignIn)
    async def _to_sign_in(request: Request, _: Exception) -> Response:
        return RedirectResponse(f"/ui/login?next={request.url.path}", status_code=303)

    @app.exception_handler(StarletteHTTPException)
    async def _error(request: Request, exc: StarletteHTTPException) -> Response:
        """A page of the console gets its error as a page; the API keeps its JSON."""
        if not request.url.path.startswith("/ui/"):
            return await problems.http_error(request, exc)
        titles = {400: "not a valid request", 403: "not allowed", 404: "not found",
                  422: "not possible", 429: "too many requests"}
        page = _page(request, "error.html", None, status=exc.status_code,
                     status_code=exc.status_code, title=titles.get(exc.status_code, "error"),
                     detail=exc.detail if isinstance(exc.detail, str) else str(exc.detail))
        page.headers.update(exc.headers or {})  # e.g. a 429's Retry-After
        return page


def _view_sign_in(router: APIRouter) -> None:
    """The sign-in page, signing in (a session cookie) and out."""

    @router.get("/login", response_class=HTMLResponse)
    def login_page(request: Request, next: str = "/ui/") -> HTMLResponse:
        return _page(request, "login.html", None, next=_local(next), failed=False)

    @router.post("/login", response_class=HTMLResponse)
    def login(request: Request, key: str = Form(...), next: str = Form("/ui/")
              ) -> Response:
        _same_origin(request)
        keys = wiring.keys()
        client = request.client.host if request.client else "unknown"
        wait = keys.take(f"address:{client}", "sign-in", 1, SIGN_IN_RATE, SIGN_IN_BURST)
        if wait > 0:
            log.info("console: sign-in throttled")
            raise HTTPException(429, "too many sign-in attempts from this address; try again "
                                     f"in {math.ceil(wait)} s",
                                headers={"Retry-After": str(math.ceil(wait))})
        found = keys.verify(key.strip())
        if found is None or not found.allows("read"):
            log.info("console: sign-in refused")
            return _page(request, "login.html", None, status=401, next=_local(next),
                         failed=True)
        response = RedirectResponse(_local(next), status_code=303)
        public = wiring.settings().public_url
        secure = (public.startswith("https://") if public
                  else request.url.scheme == "https")
        response.set_cookie(COOKIE, keys.open_session(found, COOKIE_S), max_age=COOKIE_S,
                            path="/ui", httponly=True, samesite="strict", secure=secure)
        log.info("console: signed in", key=found.id)
        return response

    @router.post("/logout")
    def logout(request: Request) -> Response:
        _same_origin(request)
        if session := request.cookies.get(COOKIE):
            wiring.keys().close_session(session)  # the cookie, copied, opens nothing now
        response = RedirectResponse("/ui/login", status_code=303)
        response.delete_cookie(COOKIE, path="/ui")
        return response


def _view_home(router: APIRouter) -> None:
    """The console's first page: the tenant's users, or the one asked for."""

    @router.get("/", response_class=HTMLResponse)
    def home(request: Request, user: str | None = None) -> Response:
        viewer = _viewer(request)
        if user:
            viewer.user(user)  # a valid id, or 400
            return RedirectResponse(f"/ui/users/{user}", status_code=303)
        mine = [u for u in (viewer.sees(i) for i in wiring.all_users()) if u]
        return _page(request, "home.html", viewer, users=mine[:USERS_SHOWN],
                     more=max(0, len(mine) - USERS_SHOWN))


def _view_memories(router: APIRouter) -> None:
    """1. Memories: by person and kind, with their statuses counted."""

    @router.get("/users/{user_id}", response_class=HTMLResponse)
    def memories(request: Request, user_id: str,
                 status: Annotated[list[str] | None, Query()] = None) -> HTMLResponse:
        viewer, internal = _open(request, user_id)
        from .settings import policy  # noqa: PLC0415

        now = datetime.now(UTC)
        found = wiring.graph_for(internal).read_memories(internal, include_inactive=True)
        shown = status or ["current"]
        groups = view.memory_groups(found, now, policy(wiring.settings()), statuses=shown)
        counts: dict[str, int] = {}
        for m in found:
            s = view.display_status(m, now)
            counts[s] = counts.get(s, 0) + 1
        return _user_page(request, "memories.html", viewer, user_id, groups=groups,
                          counts=counts, shown=shown, statuses=view.STATUS_ORDER,
                          total=len(found))


def _view_turns(router: APIRouter) -> None:
    """The source turns of a memory."""

    @router.get("/users/{user_id}/turns", response_class=HTMLResponse)
    def turns(request: Request, user_id: str,
              ref: Annotated[list[str] | None, Query(max_length=200)] = None,
              memory: str | None = None) -> HTMLResponse:
        viewer, internal = _open(request, user_id)
        ref = ref or []
        found = wiring.graph_for(internal).episodes(internal, ref)
        missing = sorted(set(ref) - {h.source_turn_ids[0] for h in found})
        return _user_page(request, "turns.html", viewer, user_id, turns=found,
                          missing=missing, memory=memory)


def _view_timeline(router: APIRouter) -> None:
    """2. Timeline: per slot, the values over valid time; ``as of`` a date."""

    @router.get("/users/{user_id}/timeline", response_class=HTMLResponse)
    def timeline(request: Request, user_id: str, slot: str | None = None,
                 as_of: str | None = None) -> HTMLResponse:
        viewer, internal = _open(request, user_id)
        at = _parse_day(as_of, "as_of")
        now = datetime.now(UTC)
        graph = wiring.graph_for(internal)
        found = graph.read_memories(internal, include_inactive=True)
        every = view.timelines(found, graph.audit(internal))
        chosen = [t for t in every if t.key == slot] if slot else every
        drawn = []
        for t in chosen:
            scale = view.axis(t, max(now, at) if at else now)
            drawn.append({"t": t, "placed": view.band_layout(t, scale, TIMELINE_W),
                          "scale": scale, "as_of_x": scale.x(at, TIMELINE_W) if at else None,
                          "value_at": view.value_at(t, at) if at else None,
                          "believed_at": view.believed_at(t, at) if at else None})
        return _user_page(request, "timeline.html", viewer, user_id, drawn=drawn,
                          slots=every, slot=slot, as_of=as_of or "", at=at, width=TIMELINE_W)


def _view_why(router: APIRouter) -> None:
    """3. Why this answer: a query's ranked hits, their signals, the context block."""

    @router.get("/users/{user_id}/why", response_class=HTMLResponse)
    def why(request: Request, user_id: str, q: str | None = None,
            k: int = Query(default=10, ge=1, le=50),
            max_tokens: int = Query(default=800, ge=50, le=8000)) -> HTMLResponse:
        viewer, internal = _open(request, user_id)
        hits: list[Any] = []
        block = ""
        if q and q.strip():
            from .api import StoresClient  # noqa: PLC0415
            from .search import search_explained  # noqa: PLC0415

            now = datetime.now(UTC)
            hits = search_explained(internal, q, k, now)
            block = StoresClient().context(internal, q, max_tokens=max_tokens, now=now)
        top = max((s.score for _, s in hits), default=0.0) or 1.0
        return _user_page(request, "why.html", viewer, user_id, q=q or "", k=k,
                          max_tokens=max_tokens, hits=hits, block=block, top=top)


def _view_audit(router: APIRouter) -> None:
    """4. Audit: the trail, filtered by memory and operation."""

    @router.get("/users/{user_id}/audit", response_class=HTMLResponse)
    def audit(request: Request, user_id: str, memory: str | None = None,
              operation: str | None = None) -> HTMLResponse:
        viewer, internal = _open(request, user_id)
        if operation and operation not in OPERATIONS:
            raise HTTPException(400, f"operation: one of {', '.join(OPERATIONS)}")
        entries = view.filter_audit(wiring.graph_for(internal).audit(internal), memory_id=memory,
                                    operation=operation)
        return _user_page(request, "audit.html", viewer, user_id, entries=entries,
                          memory=memory or "", operation=operation or "",
                          operations=OPERATIONS, may_forget=viewer.may("forget"))


def _view_forget(router: APIRouter) -> None:
    """4. Forget: a memory, or the user, after a confirmation."""

    @router.get("/users/{user_id}/forget", response_class=HTMLResponse)
    def confirm_forget(request: Request, user_id: str, memory: str | None = None
                       ) -> HTMLResponse:
        viewer, internal = _open(request, user_id, "forget")
        target = wiring.graph_for(internal).get(internal, [memory]) if memory else []
        if memory and not target:
            raise HTTPException(404, f"no memory {memory} of user {user_id}")
        return _user_page(request, "forget.html", viewer, user_id,
                          memory=target[0] if target else None, report=None)

    @router.post("/users/{user_id}/forget", response_class=HTMLResponse)
    def forget(request: Request, user_id: str, token: str = Form(...),
               memory: str | None = Form(None), with_sources: bool = Form(False)
               ) -> HTMLResponse:
        viewer = _viewer(request, "forget")
        _checked(request, viewer, token)
        internal = viewer.user(user_id)
        _record(request, viewer, user_id)
        from .api import StoresClient  # noqa: PLC0415

        report = StoresClient().forget(internal, memory or None, with_sources=with_sources)
        log.info("console: forgot", memory=bool(memory), total=report.total)
        return _user_page(request, "forget.html", viewer, user_id, memory=None,
                          forgot=memory, report=report.to_json())


def _view_ops(router: APIRouter) -> None:
    """5. Operations: queues, dead letters (requeue), throughput and freshness."""

    @router.get("/ops", response_class=HTMLResponse)
    def ops(request: Request, hours: float = Query(default=1.0, gt=0, le=24)) -> HTMLResponse:
        viewer = _viewer(request, "admin")
        from . import deadletters, metrics  # noqa: PLC0415

        coord = wiring.coord()
        now = datetime.now(UTC).timestamp()
        gauges = metrics.gauges(coord)
        dead = [dict(d, user_id=viewer.sees(d.get("user_id")))
                for d in deadletters.dead_letters(coord)
                if viewer.sees(d.get("user_id"))]
        points = metrics.samples(coord.r, since=now - hours * 3600)
        charts = [
            ("Throughput: turns extracted a second", view.rates(points, "turns")),
            ("Memory changes a second", view.rates(points, "written")),
            ("Freshness: age of the oldest turn not yet applied (s)",
             view.series(points, "oldest_inflight_s")),
            ("In flight: deliveries accepted, not done", view.series(points, "inflight")),
        ]
        def clock(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).strftime("%H:%M UTC")

        drawn = [(title, *view.polyline(line, CHART_W, CHART_H), len(line),
                  clock(line[0][0]) if line else "", clock(line[-1][0]) if line else "")
                 for title, line in charts]
        return _page(request, "ops.html", viewer, gauges=gauges, dead=dead, charts=drawn,
                     hours=hours, width=CHART_W, height=CHART_H, samples=len(points),
                     requeued=request.query_params.get("requeued"))

    @router.post("/ops/requeue")
    def requeue(request: Request, token: str = Form(...), delivery_id: str = Form(...)
                ) -> Response:
        viewer = _viewer(request, "admin")
        _checked(request, viewer, token)
        from .ops import requeue_dead  # noqa: PLC0415

        published, refused, _ = requeue_dead(
            wiring.coord(), {delivery_id},
            allowed=lambda e: bool(viewer.sees(e.get("user_id"))))
        if refused:
            raise HTTPException(422, refused[0][1])
        if not published:
            raise HTTPException(404, f"no dead letter {delivery_id} with a batch")
        return RedirectResponse(f"/ui/ops?requeued={published[0].delivery_id}",
                                status_code=303)


def _local(target: str) -> str:
    """Where to go after signing in: a console path of this host only."""
    return target if target.startswith("/ui/") and not target.startswith("//") else "/ui/"
