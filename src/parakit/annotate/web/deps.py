"""What every router depends on: the store, the settings, the logged-in user, access checks
and page rendering. Routers get these through FastAPI ``Depends`` or call them directly; they
reach the store only through :func:`get_store`."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from parakit.annotate.services.projects import IMPORTING
from parakit.annotate.store import Store, User
from parakit.annotate.throttle import LoginThrottle
from parakit.errors import Forbidden, NotFound

COOKIE = "parakit_session"
HEADER = "x-parakit"
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


@dataclass
class WebSettings:
    """The app's settings (see :func:`parakit.annotate.web.create_app`)."""

    session_ttl: timedelta = timedelta(hours=8)
    lease: timedelta = timedelta(minutes=30)
    secure_cookies: bool = False
    overlap_words: int = 6
    #: proxies whose ``X-Forwarded-For`` is believed (addresses or networks); empty = none
    forwarded_allow_ips: tuple[str, ...] = ()
    max_body_bytes: int = 20 * 1024 * 1024
    #: an uploaded file, gunzipped, may not be larger than this
    max_expanded_bytes: int = 100 * 1024 * 1024
    #: logins that may wait for a password-hashing slot; more get HTTP 503 at once
    max_waiting_logins: int = 64

    def trusts(self, address: str | None) -> bool:
        """Whether ``address`` is one of the proxies named in ``forwarded_allow_ips``."""
        if not address or not self.forwarded_allow_ips:
            return False
        if "*" in self.forwarded_allow_ips:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return address in self.forwarded_allow_ips
        for entry in self.forwarded_allow_ips:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                if address == entry:
                    return True
        return False


#: the address of every request whose peer the server took from a header the app does not trust
UNVERIFIED_FORWARDED = "forwarded-unverified"


def client_address(request: Request) -> str | None:
    """The client's address: the socket peer, or, when the peer is a proxy the admin named
    (``--forwarded-allow-ips``), the last address in ``X-Forwarded-For`` that is not itself a
    trusted proxy. A client cannot choose its address by sending the header itself."""
    peer = request.client.host if request.client else None
    settings = get_settings(request)
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
    if not settings.trusts(peer):
        if peer is not None and peer in hops and not settings.forwarded_allow_ips:
            # the server took the peer from X-Forwarded-For (uvicorn's default trusts
            # 127.0.0.1): the header's sender chose it, so all such requests count as one
            # address rather than as whatever address each one names
            return UNVERIFIED_FORWARDED
        return peer
    for hop in reversed(hops):
        if not settings.trusts(hop):
            return hop
    return hops[0] if hops else peer


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site (``Origin``, else
    ``Referer``, naming another host, or ``Sec-Fetch-Site: cross-site``); requests without
    these headers (not from a browser form) pass. Hosts are compared without the scheme, so
    a TLS proxy in front (https outside, http inside) is fine; behind a proxy named in
    ``forwarded_allow_ips`` its ``X-Forwarded-Host`` counts too."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        return False
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source:
        return True
    if source == "null":
        return False
    hosts = {request.headers.get("host", request.url.netloc).lower()}
    peer = request.client.host if request.client else None
    if get_settings(request).trusts(peer) and request.headers.get("x-forwarded-host"):
        hosts.add(request.headers["x-forwarded-host"].split(",")[0].strip().lower())
    return urlsplit(source).netloc.lower() in hosts


class LoginRequired(Exception):
    """Raised by :func:`page_user`; the app answers with a redirect to the login page."""


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_settings(request: Request) -> WebSettings:
    return request.app.state.settings


def get_throttle(request: Request) -> LoginThrottle:
    return request.app.state.login_throttle


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    """A Jinja page with the user and the request's CSP nonce."""
    templates: Jinja2Templates = request.app.state.templates
    context.update(request=request, user=user, nonce=request.state.nonce)
    return templates.TemplateResponse(request, name, context)


def page_user(request: Request) -> User:
    """The logged-in user of a page; redirects to the login page when there is none."""
    user = get_store(request).accounts.session_user(request.cookies.get(COOKIE))
    if user is None:
        raise LoginRequired()
    return user


def api_user(request: Request) -> User:
    """The logged-in user of a JSON action; writes need the ``X-Parakit`` header and, when
    the browser names one, this site as their ``Origin`` (defence in depth: a header a
    cross-site page cannot send, and a check that does not rely on it)."""
    if request.method != "GET":
        if request.headers.get(HEADER) != "1":
            raise HTTPException(403, "missing X-Parakit header (cross-site request refused)")
        if not same_origin(request):
            raise HTTPException(403, "request from another site refused (Origin)")
    user = get_store(request).accounts.session_user(request.cookies.get(COOKIE))
    if user is None:
        raise HTTPException(401, "not logged in or session expired")
    return user


def require_member(store: Store, user: User, project_id: int) -> None:
    """Refuse a project the user may not open (Forbidden), saying why: an archived project
    is named as archived to its members, not as one they are not a member of."""
    if store.projects.can_access(user, project_id):
        return
    try:
        project = store.project(project_id)
    except NotFound:
        project = None
    settings = (project.settings or {}) if project is not None else {}
    if (
        project is not None
        and settings.get("archived")
        and IMPORTING not in settings
        and user.id in store.projects.members(project_id)
    ):
        raise Forbidden(
            f"project {project.name!r} is archived: its work is closed; ask an admin to "
            "unarchive it if it should go on"
        )
    raise Forbidden(f"you are not a member of project {project_id}")


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise Forbidden("admin only")


def require_adjudicator(user: User) -> None:
    if not user.can_adjudicate:
        raise Forbidden("admins and adjudicators only")


#: the store of the app, as a dependency (``st: StoreDep``)
StoreDep = Annotated[Store, Depends(get_store)]
#: the logged-in user of an API request (401 otherwise)
ApiUser = Annotated[User, Depends(api_user)]
#: the logged-in user of a page request (redirect to the login page otherwise)
PageUser = Annotated[User, Depends(page_user)]
