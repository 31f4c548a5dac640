"""Tasks: `POST /v1/responses` (blocking, streaming, background), reading, cancelling, deleting."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harnez.events import Finished
from harnez.http.errors import ApiError
from harnez.http.inputs import check_lists, optional_flag, optional_int, optional_text, parse_input
from harnez.http.payloads import json_body, response_facts
from harnez.http.principals import principal
from harnez.http.translate import TaskStream, response_object, terminal_event
from harnez.server.uhp import HarnessHost, TaskRequest, container_ref, inline_file

KEEPALIVE_SECONDS = 15.0
"""A comment line is sent when a stream has been quiet this long (UHP asks for at least every 30 s)."""
MAX_KEY_LENGTH = 255
"""The longest Idempotency-Key (the OpenAPI document's `maxLength`)."""
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _host(request: Request) -> HarnessHost:
    return request.app.state.host


async def create_response(request: Request) -> Response:
    """Run a task: the final Response, an event stream, or (background) the Response at once."""
    host = _host(request)
    body = await json_body(request)
    if "input" not in body:
        raise ApiError.invalid("input is required: the work to do, as text or input items.", "input")
    key = request.headers.get("idempotency-key") or None
    if key is not None and len(key) > MAX_KEY_LENGTH:
        raise ApiError.invalid(
            f"Idempotency-Key must be at most {MAX_KEY_LENGTH} characters; a longer one is not cut, "
            "since two keys cut alike would share one task.",
            "Idempotency-Key",
        )
    # Checked before the task starts: a wrong type is refused, not read as false or as nothing.
    streamed, background = optional_flag(body, "stream"), optional_flag(body, "background")
    optional_flag(body, "store")
    optional_int(body, "max_output_tokens")
    check_lists(body)
    task = await _task_request(host, body, key, principal(request))
    row, replayed = await host.start(task)
    if streamed:
        # A retried stream (the same Idempotency-Key) resumes after the client's Last-Event-ID.
        after = resume_after(request) if replayed else -1
        return stream_response(follow(host, row, str(request.base_url)), after)
    if background:
        return JSONResponse(await snapshot(host, row, str(request.base_url)))
    return JSONResponse(await final(host, row, str(request.base_url)))


async def _task_request(host: HarnessHost, body: dict[str, Any], key: str | None, owner: str) -> TaskRequest:
    parsed = parse_input(body["input"])
    metadata = {} if body.get("metadata") is None else body["metadata"]
    if not isinstance(metadata, dict):  # `false` or `[]` was read as no metadata
        raise ApiError.invalid("metadata must be an object, or null for none.", "metadata")
    harness_id = metadata.get("harness_id")
    if harness_id is not None and not isinstance(harness_id, str):
        raise ApiError.invalid("metadata.harness_id must be text.", "metadata.harness_id")
    inline = []
    for sent in parsed.inline:  # stored by the host once the task is accepted, never before
        upload = inline_file(sent.filename, sent.media_type, sent.content, owner)
        inline.append((upload, sent.content))
        parsed.items[sent.where[0]]["content"][sent.where[1]]["file_id"] = upload.id
    guidance = [*parsed.instructions, optional_text(body, "instructions") or ""]
    return TaskRequest(
        text=parsed.text,
        input_items=parsed.items,
        file_ids=parsed.file_ids,
        inline=inline,
        model=_model(body),
        harness_id=harness_id,
        previous_response_id=optional_text(body, "previous_response_id"),
        instructions="\n\n".join(g for g in guidance if g) or None,
        max_step=optional_int(body, "max_step"),
        timeout=optional_int(body, "timeout_seconds"),
        store=body.get("store") is not False,
        metadata={k: v for k, v in metadata.items() if k != "harness_id"},
        idempotency_key=key,
        owner=owner,
    )


def _model(body: dict[str, Any]) -> str | None:
    """The task's model reference, None when absent or null; `""` is refused like any other empty
    field (it was read as "no model" and ran the default, which the client did not ask for)."""
    model = optional_text(body, "model")
    if model is not None and not model.strip():
        raise ApiError.invalid(
            "model must be a model reference `<provider>/<model>[:<thinking>]` (for example "
            "`openai/gpt-5:high`); leave it out, or send null, for the session's or harness's default.",
            "model",
        )
    return model


async def follow(
    host: HarnessHost, row: Any, base_url: str, *, hide: bool = True
) -> AsyncGenerator[dict[str, Any], None]:
    """The UHP events of a response's task, from `response.created` to its terminal event (live);
    `hide` False leaves a finished `store: false` response to the request that made it."""
    facts, stream = response_facts(row), TaskStream(row.task)
    opening = response_object(facts, stream, status="in_progress")
    yield {"type": "response.created", "response": opening}
    yield {"type": "response.in_progress", "response": opening}
    events = host.server.subscribe(row.session_id, after=row.start_seq)
    try:
        async for event in events:
            for translated in stream.feed(event):
                yield translated
            if isinstance(event.body, Finished) and event.task == row.task:
                break
    finally:
        await events.aclose()
    if stream.finished is None:
        stream.finished = Finished(stop="failed", error="The session was deleted while the task ran.")
    else:
        await host.settle(row)
    for translated in stream.finish(await _annotations(host, row, stream, base_url)):
        yield translated
    response = response_object(facts, stream)
    if hide:
        await host.hide_unstored(row)
    yield terminal_event(response)


async def final(host: HarnessHost, row: Any, base_url: str) -> dict[str, Any]:
    """Wait for the task to end; its final Response (the one the stream's terminal event carries)."""
    last: dict[str, Any] = {}
    async for event in follow(host, row, base_url):
        last = event
    return last["response"]


async def snapshot(host: HarnessHost, row: Any, base_url: str) -> dict[str, Any]:
    """The Response as it stands now, from the stored events (final once the task ended)."""
    stream = TaskStream(row.task)
    after = row.start_seq
    while stream.finished is None:
        batch = await host.server.events_after(row.session_id, after, 2000)
        for event in batch:
            stream.feed(event)
            if isinstance(event.body, Finished) and event.task == row.task:
                break
        if len(batch) < 2000:
            break
        after = batch[-1].seq
    if stream.finished is not None:
        stream.finish(await _annotations(host, row, stream, base_url))
        await host.hide_unstored(row)
    return response_object(response_facts(row), stream)


async def _annotations(
    host: HarnessHost, row: Any, stream: TaskStream, base_url: str
) -> list[dict[str, Any]]:
    """Citations of the files the task wrote, for its last message."""
    if not stream.written:
        return []
    record = await host.server.get_session(row.session_id)
    files = await host.task_artifacts(record, stream.written)
    text = next((i["content"][0]["text"] for i in reversed(stream.output) if i["type"] == "message"), "")
    container = container_ref(row.session_id)
    return [
        {
            "type": "container_file_citation",
            "container_id": container,
            "file_id": file_id,
            "filename": file.path,
            "start_index": 0,
            "end_index": len(text),
            "download_url": f"{base_url.rstrip('/')}/v1/containers/{container}/files/{file_id}/content",
        }
        for file_id, file in files
    ]


def stream_response(events: AsyncGenerator[dict[str, Any], None], after: int = -1) -> StreamingResponse:
    """Server-Sent Events, one frame per event, sent as each is made; numbered 0, 1, 2, … and sent
    from the one after `after` on."""
    return numbered_stream(_numbered(events, after))


def numbered_stream(events: AsyncGenerator[dict[str, Any], None]) -> StreamingResponse:
    """Server-Sent Events of events that carry their `sequence_number` (the frame's `id:`)."""
    return StreamingResponse(_frames(events), media_type="text/event-stream", headers=SSE_HEADERS)


async def _numbered(
    events: AsyncGenerator[dict[str, Any], None], after: int
) -> AsyncGenerator[dict[str, Any], None]:
    number = 0
    try:
        async for event in events:
            if number > after:
                yield {**event, "sequence_number": number}
            number += 1
    finally:
        await events.aclose()


async def _frames(events: AsyncGenerator[dict[str, Any], None]) -> AsyncIterator[bytes]:
    pending = asyncio.ensure_future(anext(events))
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
            if not done:
                yield b": keep-alive\n\n"
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                return
            pending = asyncio.ensure_future(anext(events))
            data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            yield f"id: {event['sequence_number']}\nevent: {event['type']}\ndata: {data}\n\n".encode()
    finally:
        pending.cancel()
        with contextlib.suppress(BaseException):
            await pending
        await events.aclose()


async def get_response(request: Request) -> Response:
    """A Response as it stands; `?stream=true` replays its events and follows it live (resumed after
    `Last-Event-ID` or `?starting_after=N`)."""
    host = _host(request)
    row = await host.response(request.path_params["response_id"], principal(request))
    if request.query_params.get("stream") == "true":
        return stream_response(follow(host, row, str(request.base_url)), resume_after(request))
    return JSONResponse(await snapshot(host, row, str(request.base_url)))


def resume_after(request: Request) -> int:
    """The sequence number a client has seen (-1: none): SSE's `Last-Event-ID` header, or the
    `starting_after` query parameter (the Responses API's cursor); the stream resumes after it."""
    for given in (request.headers.get("last-event-id", ""), request.query_params.get("starting_after", "")):
        if given.strip().isdigit():
            return int(given.strip())
    return -1


async def cancel_response(request: Request) -> Response:
    """Stop the task if it runs (answer within a second); a finished one is returned unchanged."""
    host = _host(request)
    row = await host.response(request.path_params["response_id"], principal(request))
    await host.cancel_task(row)
    return JSONResponse(await snapshot(host, row, str(request.base_url)))


async def delete_response(request: Request) -> Response:
    """Forget a stored response; its task is not cancelled and stays in the session's history."""
    host = _host(request)
    response_id = request.path_params["response_id"]
    await host.delete_response(response_id, principal(request))
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})


async def response(request: Request) -> Response:
    """One route per path, so that a 405 names every method the path allows."""
    return await (delete_response if request.method == "DELETE" else get_response)(request)


async def input_items(request: Request) -> Response:
    row = await _host(request).response(request.path_params["response_id"], principal(request))
    return JSONResponse({"object": "list", "data": row.input})


routes = [
    Route("/v1/responses", create_response, methods=["POST"]),
    Route("/v1/responses/{response_id}", response, methods=["GET", "DELETE"]),
    Route("/v1/responses/{response_id}/input_items", input_items, methods=["GET"]),
    Route("/v1/responses/{response_id}/cancel", cancel_response, methods=["POST"]),
]
