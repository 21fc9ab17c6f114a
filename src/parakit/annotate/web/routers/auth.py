"""Login and logout.

A login is refused before any password hashing when the throttle says wait (HTTP 429), when
the request comes from another site (403), or when too many logins already queue for a
hashing slot (503). The argon2 check runs in a worker thread under a capacity limiter, so
waiting logins hold no thread and other users' requests are served meanwhile.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
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
    """Password checks (argon2: CPU and 64 MiB each) shared out fairly under a login flood.

    * At most ``slots`` checks at once in the general lane, ``max_waiting`` logins waiting
      for it; more get HTTP 503.
    * Once logins queue (more than ``slots``), at most ``per_address`` per client address
      waiting or being checked; more get HTTP 429 at once, so many requests from one address
      hold no place in the queue.
    * A name + address that logged in successfully before is checked in its own lane (one
      slot, outside both limits): attackers from other addresses, however many, cannot
      starve a returning user.

    Limiters are made per event loop (a server process runs one).
    """

    def __init__(self, slots: int, max_waiting: int, per_address: int = 2) -> None:
        self.slots = slots
        self.max_waiting = max_waiting
        self.per_address = per_address
        self.waiting = 0
        self.by_address: dict[str | None, int] = {}
        self._limiters: weakref.WeakKeyDictionary[Any, dict[bool, anyio.CapacityLimiter]] = (
            weakref.WeakKeyDictionary()
        )

    def limiter(self, known: bool = False) -> anyio.CapacityLimiter:
        loop = asyncio.get_running_loop()
        if loop not in self._limiters:
            self._limiters[loop] = {
                False: anyio.CapacityLimiter(self.slots),
                True: anyio.CapacityLimiter(1),
            }
        return self._limiters[loop][known]

    def refusal(self, address: str | None) -> tuple[str, int, str] | None:
        """``(message, status, retry_after)`` when a new login from ``address`` must wait."""
        # per-address places matter once logins queue (more than the slots): an office behind
        # one NAT logs in freely until then
        crowded = self.waiting >= self.slots
        if crowded and self.by_address.get(address, 0) >= self.per_address:
            return "Too many logins at once from your address. Try again shortly.", 429, "2"
        if self.waiting >= self.max_waiting:
            return "The server is busy. Try again shortly.", 503, "5"
        return None

    @contextmanager
    def entered(self, address: str | None, known: bool) -> Iterator[None]:
        """Count a login as waiting (the reserved lane counts nowhere)."""
        if known:
            yield
            return
        self.waiting += 1
        self.by_address[address] = self.by_address.get(address, 0) + 1
        try:
            yield
        finally:
            self.waiting -= 1
            self.by_address[address] -= 1
            if not self.by_address[address]:
                del self.by_address[address]


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
    address = client_address(request)
    # a login that will not be checked now is refused before anything is written: under a
    # flood the store then only records the attempts that reach a password check
    known = await run_in_threadpool(throttle.known, name, address)
    refusal = None if known else queue.refusal(address)
    if refusal is not None:
        message, status, retry = refusal
        return _page(request, message, status, **{"Retry-After": retry})
    with queue.entered(address, known):  # counted at once: the checks above see it
        # the throttle's counts live in the store: off the event loop
        wait, ticket = await run_in_threadpool(throttle.attempt, name, address)
        if wait:
            return _page(
                request,
                f"Too many failed logins. Try again in {wait} seconds.",
                429,
                **{"Retry-After": str(wait)},
            )
        user = await anyio.to_thread.run_sync(
            store.accounts.authenticate, name, password, limiter=queue.limiter(known)
        )
    if user is None:
        return _page(request, "Wrong name or password.", 401)
    await run_in_threadpool(throttle.succeeded, ticket)
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
