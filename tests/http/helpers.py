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

from harnez.testing.scripted_model import ScriptedModel
from tests.shared_files import validate_uhp

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


SCHEMA_OF = [  # (method, path pattern, definition of the body or of each item of `key`, key)
    ("GET", r"/v1/uhp", "Discovery", None),
    ("*", r"/v1/responses(/resp_\w+(/cancel)?)?", "Response", None),
    ("GET", r"/v1/harnesses", "Harness", "harnesses"),
    ("POST", r"/v1/harnesses", "Harness", None),
    ("GET|PUT", r"/v1/harnesses/chrn_\w+", "Harness", None),
    ("GET", r"/v1/harnesses/chrn_\w+/models", "HarnessModels", None),
    ("GET", r"/v1/models", "ModelCatalog", None),
    ("GET", r"/v1/sessions", "SessionList", None),
    ("GET", r"/v1/sessions/hsess\w+", "Session", None),
    ("POST", r"/v1/sessions/hsess\w+/cancel", "Session", None),
    ("GET", r"/v1/sessions/hsess\w+/files", "File", "files"),
    ("POST", r"/v1/files", "File", None),
]


def validate_response(response: httpx.Response) -> None:
    """An httpx response hook: every JSON body from the server matches the UHP JSON Schema.

    Errors match ErrorEnvelope; the objects of the endpoints above match their definition.
    Event streams are left to `stream_task` (every event is validated there).
    """
    if not response.headers.get("content-type", "").startswith("application/json"):
        return
    response.read()
    body = response.json()
    if response.status_code >= 400:
        validate(body, "ErrorEnvelope")
        return
    path, method = response.request.url.path, response.request.method
    for methods, pattern, definition, key in SCHEMA_OF:
        if (methods == "*" or method in methods.split("|")) and re.fullmatch(pattern, path):
            if path.endswith("/v1/responses/" + path.rsplit("/", 1)[-1]) and method == "DELETE":
                return
            for item in body[key] if key else [body]:
                validate(item, definition)
            return


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
