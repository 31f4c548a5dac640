"""Files: uploads for task input, a session's artifacts, their download (raw, nosniff) and archive."""

from __future__ import annotations

import asyncio
import mimetypes
import tempfile
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harnez.http.errors import ApiError
from harnez.http.payloads import file_json
from harnez.http.principals import principal
from harnez.http.translate import TaskStream
from harnez.server.uhp import MAX_UPLOAD_BYTES, HarnessHost, container_ref, too_large

DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Cache-Control": "private, no-store",
}
"""Artifacts are attacker-influenced: never sniffed, never run as a page of this origin, never framed
(an `.html` artifact is HTML this server serves: UHP Security §7 asks for `X-Frame-Options: DENY`)."""


def _host(request: Request) -> HarnessHost:
    return request.app.state.host


async def upload(request: Request) -> Response:
    """`multipart/form-data` with a `file` part; refused whole (413) above the size limit."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_UPLOAD_BYTES + 64 * 1024:
        raise ApiError(too_large().code, too_large().message, detail=too_large().detail)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError.invalid("Upload a file as multipart/form-data with a `file` part.", "file")
    async with request.form(max_files=1, max_fields=10) as form:
        part = form.get("file")
        if not isinstance(part, UploadFile):
            raise ApiError.invalid("The form has no `file` part.", "file")
        content = await part.read(MAX_UPLOAD_BYTES + 1)
        if len(content) > MAX_UPLOAD_BYTES:
            raise ApiError(too_large().code, too_large().message, detail=too_large().detail)
        row = await _host(request).upload(
            part.filename or "file", part.content_type or "", content, principal(request)
        )
    data = file_json(row.id, row.created_at, row)
    data["purpose"] = "user_data"
    return JSONResponse(data)


async def _artifacts(host: HarnessHost, record: Any) -> list[tuple[str, float, Any]]:
    written: list[str] = []
    streams: dict[int, TaskStream] = {}
    for event in await host.server.events_after(record.id, 0):
        if event.task is not None:
            streams.setdefault(event.task, TaskStream(event.task)).feed(event)
    for stream in streams.values():
        written += stream.written
    return await host.artifacts(record, written)


async def session_files(request: Request) -> Response:
    """Every artifact of the session, from every task."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    container = container_ref(record.id)
    files = [
        file_json(file_id, seen, file, container) for file_id, seen, file in await _artifacts(host, record)
    ]
    return JSONResponse({"object": "list", "files": files})


async def archive(request: Request) -> Response:
    """Every artifact of the session in one zip file."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    found = await _artifacts(host, record)
    spool = await asyncio.to_thread(_zip, Path(record.workspace), [file.path for _, _, file in found])

    async def chunks():
        try:
            while chunk := await asyncio.to_thread(spool.read, 256 * 1024):
                yield chunk
        finally:
            spool.close()

    name = f"{request.path_params['session_id']}.zip"
    return StreamingResponse(
        chunks(),
        media_type="application/zip",
        headers={**DOWNLOAD_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'},
    )


def _zip(workspace: Path, paths: list[str]) -> Any:
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115 - returned to the response
    with zipfile.ZipFile(spool, "w", zipfile.ZIP_DEFLATED) as bundle:
        for relative in paths:
            target = (workspace / relative).resolve()
            if target.is_relative_to(workspace.resolve()) and target.is_file():
                bundle.write(target, relative)
    spool.seek(0)
    return spool


async def download(request: Request) -> Response:
    """The artifact's raw bytes with its own media type; ids go through the database, never the path."""
    _, path = await _host(request).artifact(
        request.path_params["container_id"], request.path_params["file_id"], principal(request)
    )
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    # RFC 6266: a plain `filename` for clients that read only that, `filename*` for the exact name
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in path.name)
    disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(path.name)}"
    return FileResponse(
        path, media_type=media_type, headers={**DOWNLOAD_HEADERS, "Content-Disposition": disposition}
    )


async def preview(request: Request) -> Response:
    """No preview rendering here: 501 for an artifact that exists (404 otherwise)."""
    await _host(request).artifact(
        request.path_params["container_id"], request.path_params["file_id"], principal(request)
    )
    raise ApiError("preview_unavailable", "This server does not render previews; download the file instead.")


routes = [
    Route("/v1/files", upload, methods=["POST"]),
    Route("/v1/sessions/{session_id}/files", session_files, methods=["GET"]),
    Route("/v1/sessions/{session_id}/files/archive", archive, methods=["GET"]),
    Route("/v1/containers/{container_id}/files/{file_id}/content", download, methods=["GET"]),
    Route("/v1/containers/{container_id}/files/{file_id}/pdf", preview, methods=["GET"]),
]
