"""Login and logout.

A login is refused before any password hashing when the throttle says wait (HTTP 429), when
the request comes from another site (403), or when too many logins already queue for a
hashing slot (503). The argon2 check runs in a worker thread under a capacity limiter, so
waiting logins hold no thread and other users' requests are served meanwhile.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import anyio
from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from parakit.annotate.services.accounts import MAX_NAME, MAX_PASSWORD
from parakit.annotate.web.deps import (
    COOKIE,
    client_address,
    get_settings,
    get_store,
    get_throttle,
    render,
    same_origin,
)

router = APIRouter()


class LoginQueue:
    """At most ``slots`` password checks at once (per event loop; a server runs one), at
    most ``max_waiting`` logins waiting for one."""

    def __init__(self, slots: int, max_waiting: int) -> None:
        self.slots = slots
        self.max_waiting = max_waiting
        self.waiting = 0
        self._limiters: weakref.WeakKeyDictionary[Any, anyio.CapacityLimiter] = (
            weakref.WeakKeyDictionary()
        )

    def limiter(self) -> anyio.CapacityLimiter:
        loop = asyncio.get_running_loop()
        if loop not in self._limiters:
            self._limiters[loop] = anyio.CapacityLimiter(self.slots)
        return self._limiters[loop]


def _page(request: Request, error: str, status: int, **headers: str) -> HTMLResponse:
    response = render(request, "login.html", None, error=error)
    response.status_code = status
    response.headers.update(headers)
    return response


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    return render(request, "login.html", None, error=None)


@router.post("/login")
async def login(
    request: Request,
    name: str = Form(..., max_length=MAX_NAME),
    password: str = Form(..., max_length=MAX_PASSWORD),
) -> Response:
    if not same_origin(request):
        return _page(request, "Cross-site login refused.", 403)
    store, settings, throttle = get_store(request), get_settings(request), get_throttle(request)
    queue: LoginQueue = request.app.state.login_queue
    wait, ticket = throttle.attempt(name, client_address(request))
    if wait:
        return _page(
            request,
            f"Too many failed logins. Try again in {wait} seconds.",
            429,
            **{"Retry-After": str(wait)},
        )
    if queue.waiting >= queue.max_waiting:
        throttle.cancel(ticket)  # not checked: do not count it
        return _page(request, "The server is busy. Try again shortly.", 503, **{"Retry-After": "5"})
    queue.waiting += 1
    try:
        user = await anyio.to_thread.run_sync(
            store.accounts.authenticate, name, password, limiter=queue.limiter()
        )
    finally:
        queue.waiting -= 1
    if user is None:
        return _page(request, "Wrong name or password.", 401)
    throttle.succeeded(ticket)
    token = await run_in_threadpool(store.accounts.start_session, user.id, settings.session_ttl)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(settings.session_ttl.total_seconds()),
        httponly=True,
        samesite="strict",
        secure=settings.secure_cookies,
    )
    return response


@router.post("/logout")
def logout(request: Request) -> Response:
    if not same_origin(request):
        return Response("cross-site logout refused", status_code=403)
    token = request.cookies.get(COOKIE)
    if token:
        get_store(request).accounts.end_session(token)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE)
    return response
