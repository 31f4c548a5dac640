"""The UHP error envelope: one exception carrying a stable code, and the JSON body every failure gets."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

STATUS_BY_CODE = {
    "unsupported_protocol_version": 400,
    "invalid_input": 400,
    "harness_not_found": 404,
    "response_not_found": 404,
    "session_not_found": 404,
    "file_not_found": 404,
    "session_expired": 404,
    "harness_mismatch": 409,
    "session_busy": 409,
    "file_too_large": 413,
    "model_unavailable": 422,
    "unsupported_base": 422,
    "missing_credential": 401,
    "invalid_credential": 401,
    "insufficient_scope": 403,
    "rate_limited": 429,
    "harness_unavailable": 503,
    "preview_unavailable": 501,
    "preview_failed": 502,
    "harnez_skill_not_found": 404,
    "harnez_share_not_found": 404,
    "harnez_unknown_endpoint": 404,
    "harnez_method_not_allowed": 405,
    "harnez_workspace_unsafe": 409,
    "harnez_idempotency_pending": 409,
    "harnez_headers_too_large": 431,
    "harnez_internal_error": 500,
}
"""HTTP status of each code; `harnez_…` codes are this server's own (UHP asks for a vendor prefix)."""


def error_type(status: int) -> str:
    """The envelope's broad `type` for an HTTP status."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    return "server_error" if status >= 500 else "invalid_request_error"


class ApiError(Exception):
    """A failed request: HTTP status, UHP code, a message safe to show, the field at fault, detail."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        param: str | None = None,
        detail: dict[str, Any] | None = None,
        status: int | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.param, self.detail = code, message, param, detail
        self.status = status or STATUS_BY_CODE.get(code, 400)
        self.retry_after = retry_after
        """`Retry-After` seconds (a 429 or 503 says when to try again)."""

    @classmethod
    def invalid(cls, message: str, param: str | None = None) -> ApiError:
        """`invalid_input`: the body could not be parsed, or a field has the wrong type."""
        return cls("invalid_input", message, param=param)

    def envelope(self) -> dict[str, Any]:
        return {
            "error": {
                "type": error_type(self.status),
                "code": self.code,
                "message": self.message,
                "param": self.param,
                "detail": self.detail,
            }
        }

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        if self.retry_after is not None:
            headers = {**(headers or {}), "Retry-After": str(self.retry_after)}
        return JSONResponse(self.envelope(), status_code=self.status, headers=headers)
