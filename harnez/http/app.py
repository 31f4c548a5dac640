"""The ASGI application of `harnez serve`: version negotiation, bearer auth, routes, the error envelope."""

from __future__ import annotations

import hmac
import logging
import uuid

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harnez.http import DEFAULT_VERSION, VERSIONS, feed, files, harnesses, sessions, tasks
from harnez.http.errors import ApiError
from harnez.server.harnesses import Refusal
from harnez.server.uhp import HarnessHost

JSON_TYPE = b"application/json; charset=utf-8"
PUBLIC_PATHS = frozenset({"/v1/uhp"})
"""Served without a token: a client must learn what a server is before presenting credentials."""

log = logging.getLogger("harnez.http")


class ProtocolGate:
    """Outermost ASGI layer: refuses unsupported versions and bad tokens; stamps `UHP-Version` on everything."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self._token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"].endswith("/") and scope["path"].strip("/"):
            # `/v1/harnesses/` is `/v1/harnesses`: served, not redirected with an empty 307 (every
            # non-2xx carries the error envelope), and `/v1/uhp/` stays public
            scope = {**scope, "path": scope["path"].rstrip("/"), "raw_path": scope["raw_path"].rstrip(b"/")}
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        asked = headers.get("uhp-version", "").strip()
        version = asked or DEFAULT_VERSION

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *(_with_charset(name, value) for name, value in message.get("headers", [])),
                    (b"uhp-version", version.encode()),
                ]
            await send(message)

        refusal = self._refusal(asked, scope["path"], headers.get("authorization", ""))
        if refusal is not None:
            version = DEFAULT_VERSION if asked not in VERSIONS else asked
            await refusal.response()(scope, receive, stamped)
            return
        await self.app(scope, receive, stamped)

    def _refusal(self, asked: str, path: str, authorization: str) -> ApiError | None:
        if asked and asked not in VERSIONS:
            return ApiError(
                "unsupported_protocol_version",
                f"This server does not speak UHP {asked!r}; it speaks {', '.join(VERSIONS)}.",
                detail={"supported": list(VERSIONS)},
            )
        if self._token is None or path in PUBLIC_PATHS:
            return None
        scheme, _, presented = authorization.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            return ApiError(
                "missing_credential",
                "This endpoint needs a bearer token: send `Authorization: Bearer <token>`.",
            )
        if not hmac.compare_digest(presented.strip().encode(), self._token):
            return ApiError("invalid_credential", "The bearer token is not valid for this server.")
        return None


def _with_charset(name: bytes, value: bytes) -> tuple[bytes, bytes]:
    """UHP's JSON bodies are `application/json; charset=utf-8` (Architecture §4), said in the header."""
    if name.lower() == b"content-type" and value == b"application/json":
        return name, JSON_TYPE
    return name, value


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return ApiError(
        exc.code, exc.message, param=exc.param, detail=exc.detail, retry_after=exc.retry_after
    ).response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:  # HTTP asks a 405 to name the methods that are allowed
        allowed = ", ".join(sorted(dict(exc.headers or {}).get("Allow", "").split(", "))).strip(", ")
        return ApiError(
            "harnez_method_not_allowed",
            f"{request.method} is not allowed on this endpoint" + (f"; use {allowed}." if allowed else "."),
            detail={"allowed": allowed.split(", ")} if allowed else None,
        ).response(headers={"Allow": allowed} if allowed else None)
    if exc.status_code == 400:  # a body Starlette could not read (a malformed multipart form)
        return ApiError.invalid(f"The request body could not be read: {exc.detail}").response()
    return ApiError(
        "harnez_unknown_endpoint",
        "There is no such endpoint on this server; see GET /v1/uhp.",
        status=exc.status_code if exc.status_code >= 400 else 404,
    ).response()


async def _crashed(request: Request, exc: Exception) -> Response:
    """A bug: the client gets a correlation id, the operator's log gets the details."""
    correlation = uuid.uuid4().hex[:12]
    log.error(
        "request %s %s failed (correlation %s)", request.method, request.url.path, correlation, exc_info=exc
    )
    return ApiError(
        "harnez_internal_error",
        "The server failed to handle this request; its operator can find "
        f"the details in the log under correlation id {correlation}.",
        detail={"correlation_id": correlation},
    ).response()


def create_app(host: HarnessHost, token: str | None) -> ASGIApp:
    """The whole UHP server over one HarnessHost; `token` None serves without auth (loopback only)."""
    app = Starlette(
        routes=[*harnesses.routes, *tasks.routes, *feed.routes, *sessions.routes, *files.routes],
        exception_handlers={
            ApiError: _api_error,
            Refusal: _refused,
            HTTPException: _http_error,
            Exception: _crashed,
        },
    )
    app.state.host = host
    app.state.feeds = {}
    app.state.token_required = token is not None
    return ProtocolGate(app, token)
