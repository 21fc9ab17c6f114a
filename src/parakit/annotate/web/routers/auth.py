"""Login and logout.

A login is refused before any password hashing when the throttle says wait (HTTP 429), when
the request comes from another site (403), or when too many logins already queue for a
hashing slot, or one waited too long for it (503, with ``Retry-After``). The argon2 check runs
in a worker thread once a capacity limiter gives it a slot, so waiting logins hold no thread
and other users' requests are served meanwhile. Nothing is written before the password is
checked: a wrong one is counted by the throttle, a right one clears its record.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from fastapi import APIRouter, Form, Request
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

    * At most ``slots`` checks at once in the general lane and ``max_waiting`` logins waiting
      for it; more get HTTP 503 with ``Retry-After``, and so does a login that waited
      ``max_wait`` seconds without a slot (refused quickly rather than queued for a minute).
    * Once logins queue (more than ``slots``), an address with recent failed logins (at
      least ``suspect_after``, counted by the throttle) holds at most ``per_address`` places,
      waiting or being checked; an address without (colleagues behind an office NAT typing
      their passwords right) holds up to ``clean_address`` places. More get HTTP 429 at once.
    * One name from one address is checked once at a time (a person does not log in to
      one account twenty times at once; a guesser does): more get HTTP 429 at once, so
      concurrent guesses cannot slip in before the throttle counts the first failures.
    * A name + address that logged in successfully before is checked in its own lane
      (``slots`` more, outside both limits): attackers from other addresses, however many,
      cannot starve a returning user, nor can a shift of returning colleagues starve each
      other behind one slot.

    * The login's store calls (throttle reads and writes, the session) and its password
      check run on threads of their own (``store_threads``; the checks ``slots`` per lane),
      not on the server's shared thread pool: a flood of logins then never queues the
      annotators' requests, which take their threads from that pool, behind its own.

    Limiters are made per event loop (a server process runs one).
    """

    def __init__(
        self,
        slots: int,
        max_waiting: int,
        per_address: int = 2,
        max_wait: float = 5.0,
        suspect_after: int = 5,
    ) -> None:
        self.slots = slots
        self.store_threads = 4
        self.max_waiting = max_waiting
        self.per_address = per_address
        self.max_wait = max_wait
        self.suspect_after = suspect_after
        self.clean_address = max(per_address, max_waiting // 4)
        self.waiting = 0
        self.by_address: dict[str | None, int] = {}
        self.by_pair: set[tuple[str, str | None]] = set()
        self._limiters: weakref.WeakKeyDictionary[Any, dict[str, anyio.CapacityLimiter]] = (
            weakref.WeakKeyDictionary()
        )

    def _lanes(self) -> dict[str, anyio.CapacityLimiter]:
        loop = asyncio.get_running_loop()
        if loop not in self._limiters:
            self._limiters[loop] = {
                "new": anyio.CapacityLimiter(self.slots),
                "known": anyio.CapacityLimiter(self.slots),
                # threads, not places: a check holds one of its lane's places and one of these
                "checks": anyio.CapacityLimiter(2 * self.slots),
                "store": anyio.CapacityLimiter(self.store_threads),
            }
        return self._limiters[loop]

    def limiter(self, known: bool = False) -> anyio.CapacityLimiter:
        """The places of password checks: the lane of returning users or of the others."""
        return self._lanes()["known" if known else "new"]

    async def check(self, function: Any, *args: Any) -> Any:
        """``function(*args)`` (a password check) on the logins' own check threads."""
        return await anyio.to_thread.run_sync(function, *args, limiter=self._lanes()["checks"])

    async def store_call(self, function: Any, *args: Any) -> Any:
        """``function(*args)`` (a store read or write of a login) on the logins' own store
        threads."""
        return await anyio.to_thread.run_sync(function, *args, limiter=self._lanes()["store"])

    def refusal(
        self, address: str | None, failures: int = 0, name: str = ""
    ) -> tuple[str, int, str] | None:
        """``(message, status, retry_after)`` when a new login for ``name`` from ``address``
        (with ``failures`` recent failed logins) must wait."""
        if (name.casefold(), address) in self.by_pair:
            return "A login for this name is already being checked. Try again shortly.", 429, "2"
        # per-address places matter once logins queue (more than the slots): an office behind
        # one NAT logs in freely until then, and an address without failures keeps many
        crowded = self.waiting >= self.slots
        places = self.per_address if failures >= self.suspect_after else self.clean_address
        if crowded and self.by_address.get(address, 0) >= places:
            return "Too many logins at once from your address. Try again shortly.", 429, "2"
        if self.waiting >= self.max_waiting:
            return "The server is busy. Try again shortly.", 503, "5"
        return None

    @contextmanager
    def entered(self, address: str | None, known: bool, name: str = "") -> Iterator[None]:
        """Count a login as waiting (the reserved lane counts nowhere)."""
        if known:
            yield
            return
        pair = (name.casefold(), address)
        self.waiting += 1
        self.by_address[address] = self.by_address.get(address, 0) + 1
        self.by_pair.add(pair)
        try:
            yield
        finally:
            self.by_pair.discard(pair)
            self.waiting -= 1
            self.by_address[address] -= 1
            if not self.by_address[address]:
                del self.by_address[address]


def _page(request: Request, error: str, status: int) -> HTMLResponse:
    response = render(request, "login.html", None, error=error)
    response.status_code = status
    return response


#: the page of a login refused before any check (busy, too many from an address): plain
#: HTML made once, no template, so that a flood of refusals costs the server next to nothing
_REFUSED = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Log in</title>'
    '<meta name="viewport" content="width=device-width, initial-scale=1"></head><body><main>'
    '<h1>Log in</h1><p class="msg" id="login-error">{message}</p>'
    '<form method="post" action="/login">'
    '<p><label>Name <input type="text" name="name" id="name" autocomplete="username" '
    'required></label></p><p><label>Password <input type="password" name="password" '
    'id="password" autocomplete="current-password" required></label></p>'
    '<p><button type="submit" id="login">Log in</button></p></form></main></body></html>'
)


def _refused(message: str, status: int, retry_after: str) -> HTMLResponse:
    return HTMLResponse(
        _REFUSED.format(message=message), status_code=status, headers={"Retry-After": retry_after}
    )


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
    # the throttle only reads here (a flood of refused logins writes nothing, so it never
    # queues the annotators' writes behind it); a failure is written after a wrong password
    known = await queue.store_call(throttle.known, name, address)
    # a full queue refuses a new name at once, before the store is asked anything more
    refusal = None if known else queue.refusal(address, 0, name)
    if refusal is not None and refusal[1] == 503:
        return _refused(*refusal)
    wait, ticket = await queue.store_call(throttle.attempt, name, address)
    if wait:
        return _refused(f"Too many failed logins. Try again in {wait} seconds.", 429, str(wait))
    failures = ticket.address_failures if ticket is not None else 0
    refusal = None if known else queue.refusal(address, failures, name)
    if refusal is not None:
        return _refused(*refusal)
    with queue.entered(address, known, name):  # counted at once: the checks above see it
        limiter = queue.limiter(known)
        try:
            with anyio.fail_after(queue.max_wait):
                await limiter.acquire()
        except TimeoutError:
            return _refused("The server is busy. Try again shortly.", 503, "5")
        try:
            user = await queue.check(store.accounts.authenticate, name, password)
        finally:
            limiter.release()
    if user is None:
        await queue.store_call(throttle.failed, ticket)
        return _page(request, "Wrong name or password.", 401)
    await queue.store_call(throttle.succeeded, ticket)
    token = await queue.store_call(store.accounts.start_session, user.id, settings.session_ttl)
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
