"""Sessions: listing, inspecting, turns, cancelling, sharing and deleting (`/v1/traces/{id}`)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harnez.http.errors import ApiError
from harnez.http.payloads import response_facts, session_json
from harnez.http.principals import principal
from harnez.http.translate import TaskStream, input_text, output_text, response_object
from harnez.server.uhp import HarnessHost

PAGE_DEFAULT, PAGE_MAX = 20, 100


def _host(request: Request) -> HarnessHost:
    return request.app.state.host


async def list_sessions(request: Request) -> Response:
    """Newest first, keyset-paginated; `next_cursor` is null on the last page."""
    host = _host(request)
    raw = request.query_params.get("limit") or str(PAGE_DEFAULT)
    if not raw.isdigit() or not 1 <= int(raw) <= PAGE_MAX:
        raise ApiError.invalid(f"limit must be a whole number from 1 to {PAGE_MAX}.", "limit")
    harness = request.query_params.get("harness") or None
    cursor = request.query_params.get("cursor") or None
    page = await host.list_sessions(harness, cursor, int(raw), principal(request))
    sessions = [session_json(record, await host.session_harness(record)) for record in page.sessions]
    return JSONResponse({"object": "list", "sessions": sessions, "next_cursor": page.next_cursor})


async def get_session(request: Request) -> Response:
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    data = session_json(record, await host.session_harness(record))
    data["harnez_response_ids"] = [row.id for row in await host.session_responses(record)]
    return JSONResponse(data)


async def turns(request: Request) -> Response:
    """The session's tasks, oldest first, each naming its response."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    return JSONResponse(
        {
            "object": "list",
            "session_id": request.path_params["session_id"],
            "turns": [_turn(row, stream) for row, stream in await _replayed(host, record)],
        }
    )


async def _replayed(host: HarnessHost, record: Any) -> list[tuple[Any, TaskStream]]:
    """Each response of a session with its task's events fed through a TaskStream."""
    rows = await host.session_responses(record)
    streams = {row.task: TaskStream(row.task) for row in rows if row.task is not None}
    for event in await host.server.events_after(record.id, 0):
        stream = streams.get(event.task) if event.task is not None else None
        if stream is not None:
            stream.feed(event)
    for stream in streams.values():
        stream.finish()
    return [(row, streams[row.task]) for row in rows if row.task in streams]


def _turn(row: Any, stream: TaskStream) -> dict[str, Any]:
    return {
        "response_id": row.id,
        "status": stream.status,
        "model": stream.model or row.model,
        "input": input_text(row.input),
        "output_text": output_text(stream.output),
        "created_at": int(row.created_at),
    }


async def cancel_session(request: Request) -> Response:
    """Stop whatever runs in the session (answering within a second); the session stays continuable."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    await host.cancel_session(record)
    fresh = await host.session(request.path_params["session_id"], principal(request))
    return JSONResponse({**session_json(fresh, await host.session_harness(fresh))})


async def delete_session(request: Request) -> Response:
    """Cancel the running task, then delete the session, its history and its own folder."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    await host.delete_session(record)
    return JSONResponse({"id": request.path_params["session_id"], "object": "session", "deleted": True})


async def share(request: Request) -> Response:
    """POST makes (or returns) the read-only share, GET shows it, DELETE revokes it."""
    host = _host(request)
    record = await host.session(request.path_params["session_id"], principal(request))
    if request.method == "DELETE":
        revoked = await host.revoke_share(record)
        return JSONResponse(
            {"session_id": request.path_params["session_id"], "object": "session.share", "revoked": revoked}
        )
    share_id, created = await host.share(record, create=request.method == "POST")
    return JSONResponse(
        {
            "id": share_id,
            "object": "session.share",
            "session_id": request.path_params["session_id"],
            "url": f"{str(request.base_url).rstrip('/')}/v1/shares/{share_id}",
            "created_at": int(created),
            "read_only": True,
        }
    )


async def shared_view(request: Request) -> Response:
    """A shared session, read-only: its metadata and each task's input and output. Nothing else."""
    host = _host(request)
    record = await host.shared(request.path_params["share_id"])
    turns = [
        {**_turn(row, stream), "output": response_object(response_facts(row), stream)["output"]}
        for row, stream in await _replayed(host, record)
    ]
    session = {
        key: value
        for key, value in session_json(record, await host.session_harness(record)).items()
        if key in ("id", "object", "title", "status", "created_at", "updated_at")
    }
    return JSONResponse({"object": "session.shared", "session": session, "turns": turns})


routes = [
    Route("/v1/sessions", list_sessions, methods=["GET"]),
    Route("/v1/sessions/{session_id}", get_session, methods=["GET"]),
    Route("/v1/sessions/{session_id}/turns", turns, methods=["GET"]),
    Route("/v1/sessions/{session_id}/cancel", cancel_session, methods=["POST"]),
    Route("/v1/sessions/{session_id}/share", share, methods=["GET", "POST", "DELETE"]),
    Route("/v1/shares/{share_id}", shared_view, methods=["GET"]),
    Route("/v1/traces/{session_id}", delete_session, methods=["DELETE"]),
]
