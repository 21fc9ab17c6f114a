"""Login and logout."""

from __future__ import annotations

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from parakit.annotate.web.deps import COOKIE, get_settings, get_store, get_throttle, render

router = APIRouter()


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    return render(request, "login.html", None, error=None)


@router.post("/login")
def login(request: Request, name: str = Form(...), password: str = Form(...)) -> Response:
    store, settings, throttle = get_store(request), get_settings(request), get_throttle(request)
    address = request.client.host if request.client else None
    wait = throttle.retry_after(name, address)
    if wait:
        response = render(
            request,
            "login.html",
            None,
            error=f"Too many failed logins. Try again in {wait} seconds.",
        )
        response.status_code = 429
        response.headers["Retry-After"] = str(wait)
        return response
    user = store.accounts.authenticate(name, password)
    if user is None:
        throttle.failed(name, address)
        response = render(request, "login.html", None, error="Wrong name or password.")
        response.status_code = 401
        return response
    throttle.succeeded(name)
    token = store.accounts.start_session(user.id, settings.session_ttl)
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
    token = request.cookies.get(COOKIE)
    if token:
        get_store(request).accounts.end_session(token)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE)
    return response
