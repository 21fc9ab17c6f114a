"""The annotation web app (``parakit annotate serve``): FastAPI, server-rendered pages, light JS.

Identity comes only from the session cookie (never from the URL); every project page checks
membership, every item action checks the caller's lease or own annotation, and every write is
one committed transaction before the reply. Pages are Jinja templates with autoescaping and a
per-request CSP nonce, so document text cannot inject script. JSON actions require the
``X-Parakit`` header, which a cross-site form cannot send (with the ``SameSite=Strict``
cookie this closes CSRF).

Layout (FastAPI's "bigger applications"): :func:`create_app` builds the app, its middleware
and error mapping; the routes live in :mod:`~parakit.annotate.web.routers` (``auth``,
``pages``, ``api``, ``admin``) and reach the store, the settings and the user through
:mod:`~parakit.annotate.web.deps`; the routes call the store's services, never SQL.

Example:
    >>> from parakit.annotate.web import create_app
    >>> app = create_app("project.sqlite")   # doctest: +SKIP
    >>> import uvicorn; uvicorn.run(app, proxy_headers=False)     # doctest: +SKIP

``proxy_headers=False``: the app reads ``X-Forwarded-For`` itself, only from the proxies given
in ``forwarded_allow_ips``. A server that rewrites the client address from the header anyway
(uvicorn's default trusts 127.0.0.1) does not bypass the login throttle: every such request
counts as the one address ``forwarded-unverified``.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException

from parakit.annotate.store import Store
from parakit.annotate.throttle import LoginThrottle, StoreLedger
from parakit.annotate.web.deps import COOKIE, TEMPLATES, LoginRequired, render
from parakit.annotate.web.routers import admin, api, auth, pages
from parakit.annotate.web.routers.auth import LoginQueue
from parakit.annotate.web.settings import WebSettings, env_name
from parakit.errors import Conflict, Forbidden, NotFound, ParakitError


def create_app(
    store: Store | str | Path | None = None,
    settings: WebSettings | None = None,
    **overrides: Any,
) -> FastAPI:
    """Build the web app on a store.

    Args:
        store: a :class:`Store` or a path/URL to open; None: ``settings.store``, opened
            without migrating (the app factory of ``parakit annotate serve``'s workers, run
            as ``uvicorn --factory``: serve upgraded the store before they start).
        settings: the :class:`~parakit.annotate.web.settings.WebSettings`; by default read
            from the environment (``PARAKIT_ANNOTATE_*``) and the defaults.
        overrides: settings by name, over ``settings`` (``session_ttl=timedelta(hours=1)``,
            ``login_attempts=0``...).
    """
    if settings is None or overrides:
        settings = WebSettings(**{**(settings.model_dump() if settings else {}), **overrides})
    if store is None:
        if settings.store is None:
            raise RuntimeError(
                f"no store: set {env_name('store')} or start with 'parakit annotate serve'"
            )
        store = Store.open(
            settings.store,
            migrate=False,
            hash_concurrency=settings.hash_concurrency,
            # the database's connection limit is shared by every worker
            connections=settings.worker_connections,
        )
    elif not isinstance(store, Store):
        store = Store.open(store)
    app = FastAPI(title="parakit annotate", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.templates = Jinja2Templates(directory=str(TEMPLATES))
    app.state.settings = settings
    # the counts live in the store, so every worker of `serve --workers N` shares them
    app.state.login_throttle = LoginThrottle(
        max_failures=settings.login_attempts,
        window=settings.login_window,
        base_delay=settings.login_delay,
        ledger=StoreLedger(store),
    )
    app.state.login_queue = LoginQueue(
        settings.hash_concurrency,
        settings.max_waiting_logins,
        per_address=settings.logins_per_address,
        max_wait=settings.login_wait.total_seconds(),
        suspect_after=max(1, settings.login_attempts),
    )

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, exc: LoginRequired) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(ParakitError)
    async def parakit_error(request: Request, exc: ParakitError) -> Response:
        status = next((code for kind, code in STATUSES if isinstance(exc, kind)), 400)
        if wants_html(request):
            return error_page(request, status, str(exc))
        return JSONResponse({"error": str(exc), "code": exc.code}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        # a page with a malformed query (?item=abc) gets an HTML page, never raw JSON
        if wants_html(request):
            where = "; ".join(
                f"{'.'.join(str(x) for x in e.get('loc', ())[1:]) or 'request'}: "
                f"{e.get('msg', 'invalid')}"
                for e in exc.errors()
            )
            return error_page(request, 400, f"bad request ({where})")
        return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if wants_html(request):
            return error_page(request, exc.status_code, str(exc.detail))
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)

    for module in (auth, pages, api, admin):
        app.include_router(module.router)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)

    @app.get("/healthz")
    def health() -> dict[str, Any]:
        # the worker's process id tells a load balancer's checks (and tests) which one answered
        return {"status": "ok", "worker": os.getpid()}

    return app


def wants_html(request: Request) -> bool:
    """Pages (not ``/api/``) asked for by a browser get HTML error pages, scripts get JSON."""
    return not request.url.path.startswith("/api/") and "text/html" in request.headers.get(
        "accept", ""
    )


#: the HTTP status of a :class:`ParakitError` of these kinds (others: 400)
STATUSES = ((NotFound, 404), (Forbidden, 403), (Conflict, 409))
TITLES = {400: "Bad request", 403: "Forbidden", 404: "Not found", 409: "Conflict"}


def error_page(request: Request, status: int, message: str) -> Response:
    """The error as an HTML page in the app's layout."""
    try:
        user = request.app.state.store.accounts.session_user(request.cookies.get(COOKIE))
    except Exception:  # the error page must not fail on a broken store
        user = None
    if not hasattr(request.state, "nonce"):
        request.state.nonce = secrets.token_urlsafe(16)
    response = render(
        request,
        "error.html",
        user,
        status=status,
        title=TITLES.get(status, "Error"),
        message=message,
    )
    response.status_code = status
    return response


#: the Content-Security-Policy of every answer; ``{nonce}`` is the request's script nonce
CSP = (
    "default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class SecurityHeaders:
    """ASGI middleware: a script nonce per request (``request.state.nonce``, for the
    templates) and the security headers of every answer (CSP with that nonce, ``nosniff``,
    ``same-origin`` referrer, ``no-store``).

    Plain ASGI rather than ``@app.middleware("http")``: Starlette's ``BaseHTTPMiddleware``
    runs every request through a task group and memory streams, which a profile of the
    server under a login flood showed as a steady share of the one event loop that also
    answers the annotators."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = CSP.format(nonce=nonce)
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "same-origin"
                headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, with_headers)


class BodyLimit:
    """ASGI middleware: HTTP 413 for a request body over ``max_bytes``, whether it declares
    its length or streams it (the body is counted as it arrives, never held in full)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0
        too_large = False

        async def counted() -> Any:
            nonlocal seen, too_large
            if too_large:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # stop reading: to the app the client went away mid-body, so no
                    # endpoint runs on a partial body; its answer is replaced by 413 below
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        refused = False

        async def replaced(message: Any) -> None:
            nonlocal refused
            if too_large:
                if not refused:
                    refused = True
                    await self._refuse(send)
                return
            await send(message)

        await self.app(scope, counted, replaced)
        if too_large and not refused:
            await self._refuse(send)

    async def _refuse(self, send: Any) -> None:
        body = f'{{"error": "request larger than {self.max_bytes} bytes", "code": "E617"}}'
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body.encode()})
