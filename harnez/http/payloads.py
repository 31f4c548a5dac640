"""Request bodies in, the protocol's JSON objects out: sessions, files, facts of a response."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from harnez.http.errors import ApiError
from harnez.http.translate import ResponseFacts
from harnez.server.uhp import MAX_UPLOAD_BYTES, container_ref, session_ref

MAX_BODY_BYTES = MAX_UPLOAD_BYTES * 4 // 3 + 1024 * 1024
"""The largest JSON body read: one inline file of the upload limit (base64) and some text."""

SESSION_STATUS = {"running": "in_progress", "interrupted": "failed"}
"""Harnez session statuses that UHP names otherwise (the rest keep their name: idle, completed, …)."""


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; `invalid_input` for anything else, 413 past MAX_BODY_BYTES."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(
                "file_too_large",
                f"The request body is larger than {MAX_BODY_BYTES} bytes; upload "
                "large files with POST /v1/files and name them by file_id.",
                detail={"max_bytes": MAX_BODY_BYTES},
            )
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        body = json.loads(raw) if raw.strip() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError.invalid("The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise ApiError.invalid("The body must be a JSON object.")
    return body


def response_facts(row: Any) -> ResponseFacts:
    """The translation's facts of a stored response row (harnez.store.uhp.ResponseRow)."""
    return ResponseFacts(
        row.id,
        row.created_at,
        session_ref(row.session_id),
        row.harness,
        row.model,
        row.previous,
        row.stored,
        row.requested_model,
        row.fallback_reason,
        row.options.get("max_step"),
        row.metadata,
    )


def session_json(record: Any, harness_id: str) -> dict[str, Any]:
    """A Session object (record: harnez.store.sessions.SessionRecord)."""
    data = {
        "id": session_ref(record.id),
        "object": "session",
        "harness_id": harness_id,
        "status": SESSION_STATUS.get(record.status, record.status),
        "created_at": int(record.created_at),
        "updated_at": int(record.updated_at),
        "harnez_container_id": container_ref(record.id),
    }
    if record.title:
        data["title"] = record.title
    return data


def file_json(file_id: str, created_at: float, file: Any, container: str | None = None) -> dict[str, Any]:
    """A File object; `file` has path (or filename) and bytes."""
    name = getattr(file, "path", None) or file.filename
    data = {
        "id": file_id,
        "object": "file",
        "filename": name,
        "bytes": file.bytes,
        "created_at": int(created_at),
    }
    if container is not None:
        data["container_id"] = container
    return data
