"""Helpers for driving `harnez serve`: the served process, SSE reading, schema validation."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema

from harnez.testing.scripted_model import ScriptedModel
from tests.shared_files import uhp_schema, validate_uhp

SECRET = "sk-test-PLANTED-serve-0123456789abcdef"
TOKEN = "uhp-test-token-5d1c0ffee"


@dataclass
class Served:
    """A running `harnez serve` process."""

    process: subprocess.Popen[str]
    url: str
    project: Path
    model: ScriptedModel

    @property
    def database(self) -> Path:
        return self.project / ".harnez" / "harnez.sqlite"

    def stop(self) -> str:
        """SIGTERM, wait, and return what it wrote on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.stderr.read() if self.process.stderr else ""


def validate(instance: Any, definition: str) -> None:
    """Fail unless `instance` matches `$defs/<definition>` of the UHP JSON Schema (tests/shared_files.py)."""
    validate_uhp(instance, definition)


_DELETED = {
    "type": "object",
    "required": ["id", "deleted"],
    "properties": {"id": {"type": "string"}, "deleted": {"const": True}},
}
_OBJECT: dict[str, Any] = {"type": "object"}


def _list_of(key: str, definition: str) -> dict[str, Any]:
    """An object whose `key` is an array of `$defs/<definition>` (the OpenAPI document's list bodies)."""
    items = {"type": "array", "items": {"$ref": f"#/$defs/{definition}"}}
    return {"type": "object", "required": [key], "properties": {key: items}}


OPERATIONS: list[tuple[str, str, str | dict[str, Any]]] = [
    # (methods, path pattern, the 2xx JSON body's schema: a `$defs` name of the UHP JSON Schema, or
    # the OpenAPI document's inline schema). Every JSON answer must match one row: an endpoint
    # missing here fails the hook, so that no body goes unchecked.
    ("GET", r"/v1/uhp", "Discovery"),
    ("GET", r"/v1/harnesses", _list_of("harnesses", "Harness")),
    ("POST", r"/v1/harnesses", "Harness"),
    ("GET|PUT", r"/v1/harnesses/[^/]+", "Harness"),
    ("DELETE", r"/v1/harnesses/[^/]+", _DELETED),
    ("GET", r"/v1/harnesses/[^/]+/models", "HarnessModels"),
    ("GET", r"/v1/harnesses/[^/]+/skills/[^/]+/files", _list_of("files", "SkillFile")),
    ("GET", r"/v1/models", "ModelCatalog"),
    ("POST", r"/v1/responses", "Response"),
    ("GET", r"/v1/responses/[^/]+", "Response"),
    ("DELETE", r"/v1/responses/[^/]+", _DELETED),
    (
        "GET",
        r"/v1/responses/[^/]+/input_items",
        {
            "type": "object",
            "required": ["data"],
            "properties": {
                "object": {"const": "list"},
                "data": {"type": "array", "items": {"type": "object"}},
            },
        },
    ),
    ("POST", r"/v1/responses/[^/]+/cancel", "Response"),
    ("GET", r"/v1/sessions", "SessionList"),
    ("GET", r"/v1/sessions/[^/]+", "Session"),
    (
        "GET",
        r"/v1/sessions/[^/]+/turns",
        {
            "type": "object",
            "required": ["turns"],
            "properties": {
                "turns": {"type": "array", "items": {"type": "object", "required": ["response_id"]}}
            },
        },
    ),
    (
        "POST",
        r"/v1/sessions/[^/]+/cancel",
        {
            "type": "object",
            "required": ["id", "status"],
            "properties": {"id": {"type": "string"}, "status": {"type": "string"}},
        },
    ),
    ("GET|POST|DELETE", r"/v1/sessions/[^/]+/share", _OBJECT),  # Full class; the protocol gives no shape
    ("GET", r"/v1/shares/[^/]+", _OBJECT),
    ("DELETE", r"/v1/traces/[^/]+", _DELETED),
    ("POST", r"/v1/files", "File"),
    ("GET", r"/v1/sessions/[^/]+/files", _list_of("files", "File")),
]

ERROR_STATUSES = {  # Errors §2: the HTTP statuses of each error type
    "invalid_request_error": {
        400,
        404,
        405,
        409,
        413,
        422,
        431,
    },  # 405, 431: harnez_ codes, the request was wrong
    "authentication_error": {401},
    "permission_error": {403},
    "rate_limit_error": {429},
    "server_error": {500, 501, 502, 503, 504},
}


def validate_response(response: httpx.Response) -> None:
    """An httpx response hook: what the protocol says of every answer, checked on each one.

    Every answer carries `UHP-Version`; a JSON body is `application/json; charset=utf-8`
    (Architecture §4); an error is the envelope with a `type` that fits its status; a 2xx JSON body
    matches the schema of its operation (OPERATIONS). Event streams are left to `stream_task`.
    """
    assert response.headers.get("uhp-version") == "2026-08-11", response.request.url
    kind = response.headers.get("content-type", "")
    if not kind.startswith("application/json"):
        assert response.status_code < 400, f"an error without the JSON envelope: {kind}"
        return
    assert kind == "application/json; charset=utf-8", kind
    if response.request.method == "HEAD":
        return
    response.read()
    body = response.json()
    if response.status_code >= 400:
        validate(body, "ErrorEnvelope")
        assert response.status_code in ERROR_STATUSES[body["error"]["type"]], body
        return
    path, method = response.request.url.path.rstrip("/"), response.request.method  # `/x/` is `/x`
    for methods, pattern, schema in OPERATIONS:
        if method in methods.split("|") and re.fullmatch(pattern, path):
            validate_schema(body, schema)
            return
    raise AssertionError(f"no schema to check {method} {path} against")


def validate_schema(instance: Any, schema: str | dict[str, Any]) -> None:
    """`instance` against a `$defs` name, or an inline schema that may `$ref` the definitions."""
    if isinstance(schema, str):
        validate(instance, schema)
        return
    whole = uhp_schema()
    if whole is not None:
        jsonschema.Draft202012Validator({**whole, **schema}).validate(instance)


def sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The `data:` objects of an event stream, as they arrive."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []


def stream_task(
    client: httpx.Client, body: dict[str, Any], **headers: str
) -> tuple[httpx.Response, list[dict]]:
    """POST a streaming task and read every event (each validated against the schema)."""
    with client.stream("POST", "/v1/responses", json={**body, "stream": True}, headers=headers) as response:
        if response.status_code != 200:
            response.read()
            return response, []
        events = []
        for event in sse_events(response):
            validate(event, "Event")
            events.append(event)
    return response, events


def answer(text: str, **turn: Any) -> dict[str, Any]:
    """A scripted turn answering with text."""
    return {"reply": [{"text": text}], "usage": {"input": 10, "output": 5}, **turn}


def writes(path: str, content: str, then: str = "Done.") -> list[dict[str, Any]]:
    """Two scripted turns: write a file, then say `then`."""
    call = {"tool_call": {"id": "call_w", "name": "write", "arguments": {"path": path, "content": content}}}
    return [{"reply": [{"text": "Writing it."}, call]}, answer(then)]


def wait_for_requests(model: ScriptedModel, count: int) -> None:
    """Wait until the scripted model has received `count` requests in all (a bound on waiting, not a
    timing check). Cancel a held task only after this: cancelled before its request arrives, the task
    leaves its held turn queued, and the next task of the module gets it."""
    deadline = time.monotonic() + 20
    while len(model.requests) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"the scripted model received {len(model.requests)} requests, never {count}")
        time.sleep(0.01)
