"""What every router depends on: the store (one database session per request), the settings,
the logged-in user and their role, and page rendering.

Access is checked by route dependencies (full-stack-fastapi-template's ``deps.py``), never
inline: a route that names ``user: ProjectAdjudicator`` runs only for an admin or adjudicator
who may open the project of its ``project_id``; ``ItemMember``/``DocPairMember`` check the
project of the ``item_id``/``doc_pair_id`` in the path; ``Admin`` and ``Adjudicator`` check
the role alone. A refusal is :class:`~parakit.errors.Forbidden` (HTTP 403, an error page for
a browser)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from parakit.annotate.store import Store, User
from parakit.annotate.throttle import LoginThrottle
from parakit.annotate.web.settings import WebSettings
from parakit.errors import Errors, Forbidden, NotFound

COOKIE = "parakit_session"
HEADER = "x-parakit"
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


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
    """Raised by :func:`current_user` on a page; the app answers with a redirect to the login
    page."""


def get_store(request: Request) -> Store:
    return request.app.state.store


async def request_store(request: Request) -> AsyncIterator[Store]:
    """The store, its reads during this request in one database session and transaction
    (a page's dozen lookups see one state of the store); each write still commits on its own
    before the reply (see :meth:`~parakit.annotate.db.Database.shared_reads`)."""
    with get_store(request).shared_reads():
        yield get_store(request)


def get_settings(request: Request) -> WebSettings:
    return request.app.state.settings


def get_throttle(request: Request) -> LoginThrottle:
    return request.app.state.login_throttle


def render(request: Request, name: str, user: User | None, **context: Any) -> HTMLResponse:
    """A Jinja page with the user and the request's CSP nonce."""
    templates: Jinja2Templates = request.app.state.templates
    context.update(request=request, user=user, nonce=request.state.nonce)
    return templates.TemplateResponse(request, name, context)


#: the store of the app, as a dependency (``st: StoreDep``), one database session per request
StoreDep = Annotated[Store, Depends(request_store)]
#: the app's settings (``cfg: SettingsDep``)
SettingsDep = Annotated[WebSettings, Depends(get_settings)]


def current_user(request: Request, st: StoreDep) -> User:
    """The logged-in user. A page without one redirects to the login page; a JSON action
    (``/api/``) gets HTTP 401, and its writes need the ``X-Parakit`` header and, when the
    browser names one, this site as their ``Origin`` (defence in depth: a header a
    cross-site page cannot send, and a check that does not rely on it)."""
    api = request.url.path.startswith("/api/")
    if api and request.method != "GET":
        if request.headers.get(HEADER) != "1":
            raise HTTPException(403, "missing X-Parakit header (cross-site request refused)")
        if not same_origin(request):
            raise HTTPException(403, "request from another site refused (Origin)")
    user = st.accounts.session_user(request.cookies.get(COOKIE))
    if user is None:
        if api:
            raise HTTPException(401, "not logged in or session expired")
        raise LoginRequired()
    return user


CurrentUser = Annotated[User, Depends(current_user)]


def admin(user: CurrentUser) -> User:
    """The user, if an admin."""
    if not user.is_admin:
        raise Forbidden(Errors.E602_admin_only)
    return user


def adjudicator(user: CurrentUser) -> User:
    """The user, if an admin or adjudicator."""
    if not user.can_adjudicate:
        raise Forbidden(Errors.E602_admins_adjudicators_only)
    return user


Admin = Annotated[User, Depends(admin)]
Adjudicator = Annotated[User, Depends(adjudicator)]


def project_member(project_id: int, user: CurrentUser, st: StoreDep) -> User:
    """The user, if they may open the project ``project_id`` of the path."""
    check_member(st, user, project_id)
    return user


def project_adjudicator(project_id: int, user: Adjudicator, st: StoreDep) -> User:
    """The user, if an admin or adjudicator who may open the project ``project_id``."""
    check_member(st, user, project_id)
    return user


def item_member(item_id: int, user: CurrentUser, st: StoreDep) -> User:
    """The user, if they may open the project of the item ``item_id`` (404 for no item)."""
    check_member(st, user, st.item(item_id).project_id)
    return user


def item_adjudicator(item_id: int, user: Adjudicator, st: StoreDep) -> User:
    """The user, if an admin or adjudicator who may open the project of ``item_id``."""
    check_member(st, user, st.item(item_id).project_id)
    return user


def doc_pair_member(doc_pair_id: int, user: CurrentUser, st: StoreDep) -> User:
    """The user, if they may open the project of the document pair ``doc_pair_id``."""
    check_member(st, user, st.doc_pair(doc_pair_id).project_id)
    return user


ProjectMember = Annotated[User, Depends(project_member)]
ProjectAdjudicator = Annotated[User, Depends(project_adjudicator)]
ItemMember = Annotated[User, Depends(item_member)]
ItemAdjudicator = Annotated[User, Depends(item_adjudicator)]
DocPairMember = Annotated[User, Depends(doc_pair_member)]


def check_member(store: Store, user: User, project_id: int) -> None:
    """Refuse a project the user may not open (Forbidden), saying why: an archived project
    is named as archived to its members, not as one they are not a member of."""
    if store.projects.can_access(user, project_id):
        return
    try:
        project = store.project(project_id)
    except NotFound:
        project = None
    if (
        project is not None
        and (project.settings or {}).get("archived")
        and not store.projects.importing(project_id)
        and user.id in store.projects.members(project_id)
    ):
        raise Forbidden(Errors.E602_project_archived_work.format(project_name=project.name))
    raise Forbidden(Errors.E602_you_member_project.format(project_id=project_id))
