"""Drive `harnez serve` with a Python client generated from the UHP OpenAPI file, as outside clients do.

A client generated from `uhp-2026-08-11.openapi.yaml` parses every answer into typed models: a
missing required field, a wrong enum or const, a wrong content type or an undeclared status fails
it where Harnez's own tests (JSON Schema, formats unchecked) might not. This walks every operation
such a client has that Harnez serves — discovery, harnesses, models, tasks (blocking, streamed,
background, continued, cancelled, failed, over budget), sessions, files, errors — and prints one line
per call, then the failures. It needs the network to install the generator, so it is no test.

    python3 -m venv /tmp/uhpgen/v && /tmp/uhpgen/v/bin/pip install openapi-python-client httpx attrs python-dateutil
    # the schema `Response` collides with the generator's own `Response` type: rename it
    printf 'class_overrides:\\n  Response:\\n    class_name: UhpResponse\\n    module_name: uhp_response\\n' > /tmp/uhpgen/gen.yaml
    /tmp/uhpgen/v/bin/openapi-python-client generate --config /tmp/uhpgen/gen.yaml \\
        --path ../shared/reference/uhp-2026-08-11/uhp-2026-08-11.openapi.yaml --output-path /tmp/uhpgen/pyclient
    .venv/bin/python scripts/conformance_model.py 8791 &     # settings as in its docstring, plus a
    #   provider "dead" with "base_url": "http://127.0.0.1:9/v1" (a failed task) and "retry": {"max_attempts": 1}
    HARNEZ_SERVE_TOKEN=tok harnez serve --port 8792 --approve allow &
    PYTHONPATH=/tmp/uhpgen/pyclient /tmp/uhpgen/v/bin/python scripts/generated_clients.py http://127.0.0.1:8792 tok

scripts/generated_client.ts does the same with a TypeScript client (openapi-typescript + openapi-fetch).
What the generated client cannot do is not Harnez's to fix and is reported as such: it omits the
binary answers (`*/*`, `application/zip`), cannot read an event stream (the streams are read here
with its httpx client and each event parsed by its `Event` model), and the 400 of an unsupported
`UHP-Version` is no status the OpenAPI file declares for the operation.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx
from unified_harness_protocol_client import AuthenticatedClient  # the generated package
from unified_harness_protocol_client.api.discovery import get_discovery
from unified_harness_protocol_client.api.files import list_session_files, preview_file, upload_file
from unified_harness_protocol_client.api.harnesses import (
    create_harness,
    delete_harness,
    get_harness,
    list_harness_models,
    list_harnesses,
    list_models,
    update_harness,
)
from unified_harness_protocol_client.api.sessions import (
    cancel_response,
    cancel_session,
    get_session,
    get_session_turns,
    list_sessions,
)
from unified_harness_protocol_client.api.tasks import (
    create_response,
    delete_response,
    get_response,
    get_response_input_items,
)
from unified_harness_protocol_client.models import (
    CreateResponseRequest,
    CreateResponseRequestInputType1Item,
    Event,
    HarnessCreate,
    McpServer,
    Skill,
    SkillFile,
    UhpResponse,
    UploadFileBody,
)
from unified_harness_protocol_client.types import File

FAILURES: list[str] = []


def call(name: str, run: Callable[[], Any]) -> Any:
    """Run one operation; the parsed answer, or None after printing why the client failed on it."""
    try:
        answer = run()
    except Exception as exc:
        FAILURES.append(f"{name}: {exc!r}"[:400])
        print(f"FAIL {name}: {exc!r}"[:400])
        return None
    parsed = getattr(answer, "parsed", answer)
    print(f"ok   {name}: {getattr(answer, 'status_code', '')} {type(parsed).__name__}")
    return parsed


def stream(client: AuthenticatedClient, body: dict[str, Any]) -> list[Event]:
    """A streamed task's events, each parsed by the generated `Event` model."""
    events = []
    with client.get_httpx_client().stream("POST", "/v1/responses", json={**body, "stream": True}) as answer:
        kind = answer.headers["content-type"]
        assert kind.startswith("text/event-stream"), kind
        for line in answer.iter_lines():
            if line.startswith("data:"):
                events.append(Event.from_dict(json.loads(line[5:])))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    return events


def task(client: AuthenticatedClient, text: Any, **fields: Any) -> UhpResponse | None:
    """A blocking task (`text` a string, or input items)."""
    items = (
        text if isinstance(text, str) else [CreateResponseRequestInputType1Item.from_dict(i) for i in text]
    )
    body = CreateResponseRequest(input_=items, **fields)
    return call(
        f"responses.create {fields or ''}", lambda: create_response.sync_detailed(client=client, body=body)
    )


def main(url: str, token: str) -> int:
    client = AuthenticatedClient(
        base_url=url, token=token, raise_on_unexpected_status=True, timeout=httpx.Timeout(60)
    )
    stranger = AuthenticatedClient(base_url=url, token="not-the-token", raise_on_unexpected_status=True)
    call("discovery", lambda: get_discovery.sync_detailed(client=client))
    call("harnesses.list", lambda: list_harnesses.sync_detailed(client=client))
    config = HarnessCreate(
        base="harnez",
        name="generated",
        system_prompt="Be brief.",
        disabled_tools=["shell"],
        skills=[Skill(name="tidy", files=[SkillFile(path="SKILL.md", content="# tidy\n")])],
        mcp_servers=[McpServer(name="vault", url="http://127.0.0.1:9/mcp", enabled=False)],
        max_step=5,
    )
    harness = call("harnesses.create", lambda: create_harness.sync_detailed(client=client, body=config))
    hid = harness.id
    call("harnesses.get", lambda: get_harness.sync_detailed(hid, client=client))
    renamed = HarnessCreate(base="harnez", name="generated 2")
    call("harnesses.update", lambda: update_harness.sync_detailed(hid, client=client, body=renamed))
    call("harnesses.models", lambda: list_harness_models.sync_detailed(hid, client=client))
    call("models", lambda: list_models.sync_detailed(client=client))

    first = task(client, "Reply with exactly: ok")
    rid, sid = first.id, first.metadata.session_id
    call("responses.get", lambda: get_response.sync_detailed(rid, client=client))
    call("responses.input_items", lambda: get_response_input_items.sync_detailed(rid, client=client))
    call("responses.cancel (ended)", lambda: cancel_response.sync_detailed(rid, client=client))
    task(client, "Reply with exactly: two", previous_response_id=rid)
    call("sessions.list", lambda: list_sessions.sync_detailed(client=client, limit=1))
    call("sessions.get", lambda: get_session.sync_detailed(sid, client=client))
    call("sessions.turns", lambda: get_session_turns.sync_detailed(sid, client=client))
    call("sessions.cancel", lambda: cancel_session.sync_detailed(sid, client=client))
    events = call("responses.stream", lambda: stream(client, {"input": "Reply with exactly: ok"}))
    print("    last event:", events and events[-1].type_)
    call(
        "responses.stream (tools)",
        lambda: stream(client, {"input": "Create a file named uhp-conformance.txt"}),
    )
    call(
        "responses.stream (failed)",
        lambda: stream(client, {"input": "Reply with exactly: ok", "model": "dead/x"}),
    )
    background = task(client, "Count slowly", background=True)
    time.sleep(0.5)
    call("responses.cancel (running)", lambda: cancel_response.sync_detailed(background.id, client=client))
    time.sleep(1)
    cancelled = call(
        "responses.get (cancelled)", lambda: get_response.sync_detailed(background.id, client=client)
    )
    print("    status:", cancelled and cancelled.status)
    task(client, "Reply with exactly: ok", model="dead/x")
    task(client, "Reply with exactly: ok", model="nope/nope")
    task(client, "Create a file named uhp-conformance.txt", max_step=1)
    task(client, "Count slowly", timeout_seconds=1)

    upload = UploadFileBody(file=File(payload=b"hello file\n", file_name="in.txt", mime_type="text/plain"))
    uploaded = call("files.upload", lambda: upload_file.sync_detailed(client=client, body=upload))
    parts = [
        {"type": "input_text", "text": "Create a file named uhp-conformance.txt"},
        {"type": "input_file", "file_id": uploaded.id},
    ]
    wrote = task(client, [{"role": "user", "content": parts}])
    files = call(
        "files.list", lambda: list_session_files.sync_detailed(wrote.metadata.session_id, client=client)
    )
    artifact = files.files[0]
    call(
        "files.pdf (501)",
        lambda: preview_file.sync_detailed(artifact.container_id, artifact.id, client=client),
    )

    call("error 401", lambda: list_harnesses.sync_detailed(client=stranger))
    call("error 404 response", lambda: get_response.sync_detailed("resp_none", client=client))
    call("error 404 session", lambda: get_session.sync_detailed("hsess_none", client=client))
    call("error 404 harness", lambda: get_harness.sync_detailed("chrn_none", client=client))
    codex = HarnessCreate(base="codex")
    call("error 422 base", lambda: create_harness.sync_detailed(client=client, body=codex))
    call("responses.delete", lambda: delete_response.sync_detailed(rid, client=client))
    call("harnesses.delete", lambda: delete_harness.sync_detailed(hid, client=client))
    print(f"{len(FAILURES)} failure(s)")
    for failure in FAILURES:
        print(" -", failure)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
