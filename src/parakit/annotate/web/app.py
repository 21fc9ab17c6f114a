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
    >>> import uvicorn; uvicorn.run(app)     # doctest: +SKIP
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from parakit.annotate.store import Conflict, Forbidden, NotFound, Store
from parakit.annotate.throttle import LoginThrottle
from parakit.annotate.web.deps import TEMPLATES, LoginRequired, WebSettings
from parakit.annotate.web.routers import admin, api, auth, pages
from parakit.errors import ParakitError


def create_app(
    store: Store | str | Path,
    *,
    session_ttl: timedelta = timedelta(hours=8),
    lease: timedelta = timedelta(minutes=30),
    secure_cookies: bool = False,
    overlap_words: int = 6,
    login_attempts: int = 5,
    login_window: timedelta = timedelta(minutes=5),
) -> FastAPI:
    """Build the web app on a store.

    Args:
        store: a :class:`Store` or a path/URL to open.
        session_ttl: login sessions expire after this long.
        lease: how long an item stays reserved for the annotator who opened it.
        secure_cookies: send the session cookie only over HTTPS (set behind a TLS proxy).
        overlap_words: verbatim copies of at least this many words are highlighted in the
            extraction view.
        login_attempts: wrong passwords allowed per account name and per client address
            within ``login_window`` before logins are refused with HTTP 429 (0 = no limit).
        login_window: how long a wrong password counts.
    """
    if not isinstance(store, Store):
        store = Store.open(store)
    app = FastAPI(title="parakit annotate", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.templates = Jinja2Templates(directory=str(TEMPLATES))
    app.state.settings = WebSettings(
        session_ttl=session_ttl,
        lease=lease,
        secure_cookies=secure_cookies,
        overlap_words=overlap_words,
    )
    app.state.login_throttle = LoginThrottle(max_failures=login_attempts, window=login_window)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        request.state.nonce = secrets.token_urlsafe(16)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = (
            f"default-src 'self'; script-src 'nonce-{request.state.nonce}'; "
            "style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; "
            "frame-ancestors 'none'; form-action 'self'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, exc: LoginRequired) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(ParakitError)
    async def parakit_error(request: Request, exc: ParakitError) -> Response:
        status = 400
        if isinstance(exc, NotFound):
            status = 404
        elif isinstance(exc, Forbidden):
            status = 403
        elif isinstance(exc, Conflict):
            status = 409
        return JSONResponse({"error": str(exc), "code": exc.code}, status_code=status)

    for module in (auth, pages, api, admin):
        app.include_router(module.router)

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
