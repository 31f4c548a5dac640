"""UHP clients drive `harnez serve`: the public `uhp` client (PyPI), and a small client written from the
specification alone (`SpecClient`) that walks every operation and checks every answer against the
protocol: headers, the error envelope, the schema of each body, and the order of each stream."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uhp

from tests.http.helpers import TOKEN, Served, answer, validate, validate_response, wait_for_requests, writes


@pytest.fixture
def uhp_client(served: Served) -> uhp.UhpClient:
    return uhp.connect(served.url, TOKEN, timeout=30)


def test_the_uhp_client_discovers_and_runs_a_task(served: Served, uhp_client: uhp.UhpClient) -> None:
    found = uhp.probe(served.url)
    assert uhp.check_discovery(found) == (True, [])
    harness = uhp_client.harnesses()[0]
    served.model.add(answer("ok"))
    response = uhp_client.run("Reply with exactly: ok", harness_id=harness["id"])
    assert response["status"] == "completed" and uhp.output_text(response) == "ok"
    assert uhp_client.get_response(response["id"]) == response
    assert uhp_client.input_items(response["id"])["data"][0]["content"][0]["text"] == "Reply with exactly: ok"


def test_the_uhp_client_streams_and_continues(served: Served, uhp_client: uhp.UhpClient) -> None:
    served.model.add(answer("Streamed pelican."), answer("Continued."))
    task = uhp_client.collect("say pelican")
    assert task.sequence == (True, []) and task.status == "completed" and task.text == "Streamed pelican."
    first = task.response
    second = uhp_client.continue_(first["id"], "and then?")
    assert second["metadata"]["session_id"] == first["metadata"]["session_id"]
    assert second["previous_response_id"] == first["id"] and uhp.output_text(second) == "Continued."


def test_the_uhp_client_pages_sessions_to_the_end(served: Served, uhp_client: uhp.UhpClient) -> None:
    served.model.add(answer("a"), answer("b"), answer("c"))
    made = {uhp_client.run(f"session {n}")["metadata"]["session_id"] for n in range(3)}
    seen, cursor = [], None
    while True:
        page = uhp_client.sessions(limit=2, cursor=cursor)
        seen += [s["id"] for s in page["sessions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert made <= set(seen) and len(seen) == len(set(seen))
    one = next(iter(made))
    assert uhp_client.session(one)["id"] == one and uhp_client.turns(one)["turns"]


def test_the_uhp_client_cancels_and_a_retried_cancel_is_no_error(
    served: Served, uhp_client: uhp.UhpClient
) -> None:
    served.model.add(answer("never", hold="uhp-cancel"))
    calls = len(served.model.requests)
    started = uhp_client.run("long work", background=True)
    wait_for_requests(served.model, calls + 1)
    uhp_client.cancel(started["id"])
    done = uhp_client.wait(started["id"], interval=0.05, timeout=20)
    assert done["status"] == "cancelled"
    assert uhp_client.cancel(started["id"])["status"] == "cancelled"
    served.model.release("uhp-cancel")
    served.model.add(answer("never either", hold="uhp-cancel-session"))
    other = uhp_client.run("more work", background=True)
    wait_for_requests(served.model, calls + 2)
    uhp_client.cancel_session(other["metadata"]["session_id"])
    assert uhp_client.wait(other["id"], interval=0.05, timeout=20)["status"] == "cancelled"
    served.model.release("uhp-cancel-session")


def test_the_uhp_client_collects_artifacts_and_deletes_the_session(
    served: Served, uhp_client: uhp.UhpClient
) -> None:
    served.model.add(*writes("report.md", "# Report\n"))
    response = uhp_client.run("Create report.md")
    cited = uhp.artifacts(response)
    assert [a["filename"] for a in cited] == ["report.md"]
    files = uhp_client.session_files(response["metadata"]["session_id"])
    assert uhp_client.download_file(files[0]["container_id"], files[0]["id"]) == b"# Report\n"
    uhp_client.delete_session(response["metadata"]["session_id"])
    with pytest.raises(uhp.UhpError) as gone:
        uhp_client.session(response["metadata"]["session_id"])
    assert gone.value.status == 404 and gone.value.code == "session_not_found"
    with pytest.raises(uhp.UhpError) as expired:
        uhp_client.continue_(response["id"], "again")
    assert expired.value.code == "session_expired" and not expired.value.retryable


def test_harnessrouter_cli_runs_a_task(served: Served) -> None:
    served.model.add(answer("from the command line"))
    cli = [sys.executable, "-m", "harnessrouter.cli", "--url", served.url, "--key", TOKEN]
    done = subprocess.run([*cli, "run", "say", "hi"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "from the command line" in done.stdout and "[completed]" in done.stderr
    listed = subprocess.run([*cli, "harnesses"], capture_output=True, text=True, timeout=60)
    assert "[harnez]" in listed.stdout


def test_two_uhp_clients_at_once_both_finish(served: Served) -> None:
    served.model.add(answer("one"), answer("two"))
    results: list[dict] = []

    def work(prompt: str) -> None:
        results.append(uhp.connect(served.url, TOKEN).run(prompt))

    threads = [threading.Thread(target=work, args=(p,)) for p in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(uhp.output_text(r) for r in results) == ["one", "two"]


# a client from the specification alone -----------------------------------------------------------

TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class SpecClient:
    """What the protocol text asks of a client, and what it promises one: a bearer token and
    `UHP-Version` on each request; every answer checked by `validate_response`; every stream read
    frame by frame, each event checked against the schema and its `id:` against its number."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {TOKEN}", "UHP-Version": "2026-08-11"},
            timeout=30,
            event_hooks={"response": [validate_response]},
        )

    def ok(self, method: str, path: str, **options: Any) -> Any:
        """A request that must succeed; its JSON body."""
        answered = self.http.request(method, path, **options)
        assert answered.status_code == 200, answered.text
        return answered.json()

    def refused(self, method: str, path: str, status: int, code: str, **options: Any) -> dict[str, Any]:
        """A request that must fail with `status` and `code`; the envelope's `error`."""
        answered = self.http.request(method, path, **options)
        assert (answered.status_code, answered.json()["error"]["code"]) == (status, code), answered.text
        return answered.json()["error"]

    def events(self, method: str, path: str, **options: Any) -> list[dict[str, Any]]:
        """The events of a stream (Streaming §1): `text/event-stream`, `Cache-Control: no-cache`."""
        with self.http.stream(method, path, **options) as answered:
            assert answered.status_code == 200, answered.read()
            assert answered.headers["content-type"].startswith("text/event-stream")
            assert answered.headers["cache-control"] == "no-cache"
            return list(_frames(answered.iter_lines()))


def _frames(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """SSE frames: comments skipped; `data:` lines joined; `id:` and `event:` must agree with the data."""
    fields: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith(":"):
            continue
        if line:
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
            continue
        if "data" in fields:
            event = json.loads("\n".join(fields["data"]))
            validate(event, "Event")
            assert fields.get("id", [str(event["sequence_number"])]) == [str(event["sequence_number"])]
            assert fields.get("event", [event["type"]]) == [event["type"]]
            yield event
        fields = {}


def check_order(events: list[dict[str, Any]], first: int = 0) -> None:
    """Streaming §3: numbered from `first` by one; `response.created` opens a whole stream; exactly one
    terminal event, the last; an item's `added` precedes every event about it, its `done` follows them."""
    assert [e["sequence_number"] for e in events] == list(range(first, first + len(events)))
    if first == 0:
        assert events[0]["type"] == "response.created"
    assert [e["type"] in TERMINAL for e in events].count(True) == 1 and events[-1]["type"] in TERMINAL
    opened: set[int] = set()
    closed: set[int] = set()
    for event in events:
        index = event.get("output_index")
        if index is None:
            continue
        assert index not in closed, event
        if event["type"] == "response.output_item.added":
            opened.add(index)
        assert index in opened or first > 0, event
        if event["type"] == "response.output_item.done":
            closed.add(index)


@pytest.fixture
def spec(served: Served) -> Iterator[SpecClient]:
    client = SpecClient(served.url)
    yield client
    client.http.close()


def test_a_client_from_the_specification_walks_every_operation(served: Served, spec: SpecClient) -> None:
    public = spec.http.get("/v1/uhp", headers={"Authorization": ""})  # served without a token
    discovery = public.json()
    assert uhp.check_discovery(discovery) == (True, [])
    spec.refused("GET", "/v1/harnesses", 401, "missing_credential", headers={"Authorization": ""})
    spec.refused("GET", "/v1/uhp", 400, "unsupported_protocol_version", headers={"UHP-Version": "2000-01-01"})
    spec.ok("GET", "/v1/models")
    skill = {
        "name": "notes",
        "files": [{"path": "SKILL.md", "content": "---\nname: notes\n---\nTake notes."}],
    }
    made = spec.ok("POST", "/v1/harnesses", json={"name": "Walker", "base": "harnez", "skills": [skill]})
    renamed = spec.ok("PUT", f"/v1/harnesses/{made['id']}", json={**made, "name": "Walker 2"})
    assert renamed["name"] == "Walker 2" and renamed["skills"] == made["skills"]
    assert made["id"] in [h["id"] for h in spec.ok("GET", "/v1/harnesses")["harnesses"]]
    assert spec.ok("GET", f"/v1/harnesses/{made['id']}") == renamed
    spec.ok("GET", f"/v1/harnesses/{made['id']}/models")
    spec.ok("GET", f"/v1/harnesses/{made['id']}/skills/notes/files")

    upload = spec.ok("POST", "/v1/files", files={"file": ("brief.txt", b"the brief", "text/plain")})
    served.model.add(*writes("out.md", "# Out\n", "Wrote out.md."))
    first = spec.ok(
        "POST",
        "/v1/responses",
        json={
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "write out.md"},
                        {"type": "input_file", "file_id": upload["id"]},
                    ],
                }
            ],
            "metadata": {"harness_id": made["id"]},
        },
        headers={"Idempotency-Key": "walk-1"},
    )
    assert first["status"] == "completed" and first["metadata"]["harness_id"] == made["id"]
    session = first["metadata"]["session_id"]
    assert spec.ok("GET", f"/v1/responses/{first['id']}") == first
    assert spec.ok("GET", f"/v1/responses/{first['id']}/input_items")["data"]
    served.model.add(answer("Streamed on."))
    events = spec.events(
        "POST", "/v1/responses", json={"input": "go on", "previous_response_id": first["id"], "stream": True}
    )
    check_order(events)
    second = events[-1]["response"]
    assert second["metadata"]["session_id"] == session and second["previous_response_id"] == first["id"]
    assert spec.ok("GET", f"/v1/responses/{second['id']}")["output"] == second["output"]

    assert session in [
        s["id"] for s in spec.ok("GET", "/v1/sessions", params={"harness": made["id"]})["sessions"]
    ]
    assert spec.ok("GET", f"/v1/sessions/{session}")["harness_id"] == made["id"]
    assert [t["response_id"] for t in spec.ok("GET", f"/v1/sessions/{session}/turns")["turns"]] == [
        first["id"],
        second["id"],
    ]
    files = spec.ok("GET", f"/v1/sessions/{session}/files")["files"]
    out = next(f for f in files if f["filename"] == "out.md")
    downloaded = spec.http.get(f"/v1/containers/{out['container_id']}/files/{out['id']}/content")
    assert downloaded.content == b"# Out\n" and downloaded.headers["x-content-type-options"] == "nosniff"
    spec.refused(
        "GET", f"/v1/containers/{out['container_id']}/files/{out['id']}/pdf", 501, "preview_unavailable"
    )
    archive = spec.http.get(f"/v1/sessions/{session}/files/archive")
    assert "out.md" in zipfile.ZipFile(io.BytesIO(archive.content)).namelist()

    # Architecture §3: every id says what it points at, and every object says its type
    for kind, found in {
        "harness": made,
        "response": first,
        "session": spec.ok("GET", f"/v1/sessions/{session}"),
        "file": out,
    }.items():
        assert uhp.object_type_for_id(found["id"]) == kind and found["object"] == kind, found
    assert uhp.object_type_for_id(upload["id"]) == "file"
    assert uhp.object_type_for_id(out["container_id"]) == "container"

    shared = spec.ok("POST", f"/v1/sessions/{session}/share")
    assert spec.ok("GET", f"/v1/sessions/{session}/share")["id"] == shared["id"]
    spec.ok("GET", f"/v1/shares/{shared['id']}")
    spec.ok("DELETE", f"/v1/sessions/{session}/share")
    assert spec.ok("POST", f"/v1/responses/{second['id']}/cancel")["status"] == "completed"
    spec.ok("POST", f"/v1/sessions/{session}/cancel")
    spec.ok("DELETE", f"/v1/responses/{second['id']}")
    spec.refused("GET", f"/v1/responses/{second['id']}", 404, "response_not_found")
    spec.ok("DELETE", f"/v1/traces/{session}")
    spec.refused("GET", f"/v1/sessions/{session}", 404, "session_not_found")
    spec.ok("DELETE", f"/v1/harnesses/{made['id']}")
    spec.refused("GET", f"/v1/harnesses/{made['id']}", 404, "harness_not_found")


def test_json_answers_say_their_charset(spec: SpecClient) -> None:
    """Architecture §4: bodies are `application/json; charset=utf-8` (errors too)."""
    for path in ("/v1/uhp", "/v1/harnesses", "/v1/sessions/hsessnosuch"):
        assert spec.http.get(path).headers["content-type"] == "application/json; charset=utf-8"


def test_a_405_names_the_methods_its_path_allows(spec: SpecClient) -> None:
    """HTTP: a 405 carries `Allow`; the paths served by one handler per method name all of them."""
    cases = {
        ("PUT", "/v1/responses/resp_nosuch"): "DELETE, GET, HEAD",
        ("DELETE", "/v1/harnesses"): "GET, HEAD, POST",
        ("POST", "/v1/uhp"): "GET, HEAD",
    }
    for (method, path), allowed in cases.items():
        error = spec.refused(method, path, 405, "harnez_method_not_allowed")
        assert spec.http.request(method, path).headers["allow"] == allowed
        assert error["detail"] == {"allowed": allowed.split(", ")}


def test_a_malformed_upload_is_invalid_input(spec: SpecClient) -> None:
    """A multipart body that cannot be read is the request's fault, said with `invalid_input`."""
    for content_type in ("multipart/form-data; boundary=xyz", "multipart/form-data"):
        spec.refused(
            "POST",
            "/v1/files",
            400,
            "invalid_input",
            content=b"garbage",
            headers={"content-type": content_type},
        )
    two = [("file", ("a.txt", b"a")), ("file", ("b.txt", b"b"))]
    spec.refused("POST", "/v1/files", 400, "invalid_input", files=two)


def test_an_html_artifact_is_served_so_that_it_cannot_be_framed(served: Served, spec: SpecClient) -> None:
    """Security §7: a server serving any HTML sends `X-Frame-Options: DENY` or `frame-ancestors 'none'`."""
    served.model.add(*writes("page.html", "<html><body>hi</body></html>"))
    done = spec.ok("POST", "/v1/responses", json={"input": "write page.html"})
    cited = uhp.artifacts(done)[0]
    page = spec.http.get(cited["download_url"])
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_a_retried_stream_resumes_after_the_last_event_seen(served: Served, spec: SpecClient) -> None:
    """Streaming §5: with `Last-Event-ID` (or the `starting_after` cursor) a stream resumes after that
    event and replays none the client saw: retried with its Idempotency-Key, or read back by GET."""
    served.model.add(answer("Resumable words."))
    body = {"input": "say words", "stream": True}
    whole = spec.events("POST", "/v1/responses", json=body, headers={"Idempotency-Key": "resume-1"})
    check_order(whole)
    retried = spec.events(
        "POST", "/v1/responses", json=body, headers={"Idempotency-Key": "resume-1", "Last-Event-ID": "3"}
    )
    assert retried == whole[4:]
    check_order(retried, first=4)
    response_id = whole[0]["response"]["id"]
    read_back = f"/v1/responses/{response_id}?stream=true"
    assert spec.events("GET", read_back, headers={"Last-Event-ID": "5"}) == whole[6:]
    assert spec.events("GET", f"{read_back}&starting_after=2") == whole[3:]
    assert spec.events("GET", read_back) == whole


def test_error_params_name_only_fields_of_the_request(spec: SpecClient) -> None:
    """`param` is the dotted path to the offending field of the request, when there is one."""
    assert spec.refused("GET", "/v1/harnesses/chrn_nosuch", 404, "harness_not_found")["param"] is None
    named = spec.refused(
        "POST",
        "/v1/responses",
        404,
        "harness_not_found",
        json={"input": "x", "metadata": {"harness_id": "chrn_no"}},
    )
    assert named["param"] == "metadata.harness_id"
    baseless = spec.refused("POST", "/v1/harnesses", 422, "unsupported_base", json={"name": "no base"})
    assert baseless["param"] == "base" and "None" not in baseless["message"]


def test_streams_with_reasoning_tools_failure_and_cancel_keep_the_order(
    served: Served, spec: SpecClient
) -> None:
    """Streaming §2–§4 on every kind of stream: reasoning, a tool call and its output, a provider
    failure (`response.failed`, `error` non-null), a cancel (`response.failed`, status `cancelled`)."""
    call = {"tool_call": {"id": "call_r", "name": "read", "arguments": {"path": "missing.txt"}}}
    served.model.add(
        {"reply": [{"reasoning": "Look first."}, {"text": "Reading."}, call]}, answer("Read it.")
    )
    tools = spec.events("POST", "/v1/responses", json={"input": "read missing.txt", "stream": True})
    check_order(tools)
    kinds = [item["type"] for item in tools[-1]["response"]["output"]]
    assert kinds == ["reasoning", "message", "function_call", "function_call_output", "message"]
    calls = tools[-1]["response"]["output"]
    assert calls[2]["call_id"] == calls[3]["call_id"] == "call_r" and json.loads(calls[2]["arguments"])

    served.model.add({"status": 400, "body": {"error": {"message": "no such model"}}})
    failed = spec.events("POST", "/v1/responses", json={"input": "fail", "stream": True})
    check_order(failed)
    assert failed[-1]["type"] == "response.failed" and failed[-1]["response"]["status"] == "failed"
    assert failed[-1]["response"]["error"]["type"] == "harness_error"

    served.model.add(answer("never", hold="spec-cancel"))
    calls_before = len(served.model.requests)
    started = spec.ok("POST", "/v1/responses", json={"input": "wait", "background": True})
    wait_for_requests(served.model, calls_before + 1)
    spec.ok("POST", f"/v1/responses/{started['id']}/cancel")
    cancelled = spec.events("GET", f"/v1/responses/{started['id']}?stream=true")
    served.model.release("spec-cancel")
    check_order(cancelled)
    final = cancelled[-1]
    assert final["type"] == "response.failed" and final["response"]["status"] == "cancelled"
    assert final["response"]["error"] is None


def test_a_harness_event_feed_follows_its_running_and_new_responses(served: Served, spec: SpecClient) -> None:
    """Streaming §5: `GET /v1/harnesses/{id}/events` is a live feed of the harness's work — what a
    client follows after `background: true`. Each response's events run from `response.created` to
    its terminal event and name the response; the first connection to the feed is numbered from 0."""
    harness = spec.ok("POST", "/v1/harnesses", json={"name": "Fed", "base": "harnez"})["id"]
    spec.refused("GET", "/v1/harnesses/chrn_nosuch/events", 404, "harness_not_found")
    served.model.add(answer("First, held.", hold="feed"))
    calls = len(served.model.requests)
    body = {"input": "work", "background": True, "metadata": {"harness_id": harness}}
    first = spec.ok("POST", "/v1/responses", json=body)
    wait_for_requests(served.model, calls + 1)
    events: list[dict[str, Any]] = []
    with spec.http.stream("GET", f"/v1/harnesses/{harness}/events") as feed:
        assert feed.status_code == 200 and feed.headers["content-type"].startswith("text/event-stream")
        served.model.release("feed")
        second = None
        for event in _frames(feed.iter_lines()):
            events.append(event)
            if event["type"] in TERMINAL and second is None:
                served.model.add(answer("Second."))
                second = spec.ok("POST", "/v1/responses", json={**body, "background": False})
            elif event["type"] in TERMINAL:
                break
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert second is not None
    for response in (first, second):
        own = [
            {**e, "sequence_number": n}
            for n, e in enumerate(e for e in events if e["response_id"] == response["id"])
        ]
        check_order(own)
        assert own[-1]["response"]["status"] == "completed"
        assert uhp.output_text(own[-1]["response"]) == uhp.output_text(
            spec.ok("GET", f"/v1/responses/{response['id']}")
        )
    assert uhp.output_text(second) == "Second."


def _feed_until(spec: SpecClient, path: str, then: dict[str, Any] | None, **headers: str) -> list[dict]:
    """Open a harness's event feed, start the task `then` (blocking) once it is open, and read the feed
    up to and including the first terminal event of `then`'s response (of any response without one)."""
    events: list[dict[str, Any]] = []
    with spec.http.stream("GET", path, headers=headers) as feed:
        assert feed.status_code == 200
        ran = spec.ok("POST", "/v1/responses", json=then) if then is not None else None
        for event in _frames(feed.iter_lines()):
            events.append(event)
            if event["type"] in TERMINAL and (ran is None or event["response_id"] == ran["id"]):
                break
    return events


def test_a_harness_event_feed_resumes_after_the_last_event_seen(served: Served, spec: SpecClient) -> None:
    """Streaming §5 on the event feed as on a task's stream: `Last-Event-ID` (or `starting_after`)
    resumes after that event, with what ran while the client was away and nothing it saw. The feed's
    numbers are the harness's, the same on every connection."""
    harness = spec.ok("POST", "/v1/harnesses", json={"name": "Resumed feed", "base": "harnez"})["id"]
    body = {"input": "work", "metadata": {"harness_id": harness}}
    path = f"/v1/harnesses/{harness}/events"
    served.model.add(answer("One."))
    seen = _feed_until(spec, path, body)
    assert [e["sequence_number"] for e in seen] == list(range(len(seen)))
    served.model.add(answer("Two, while away."))
    away = spec.ok("POST", "/v1/responses", json=body)
    served.model.add(answer("Three."))
    last = seen[-1]["sequence_number"]
    resumed = _feed_until(spec, path, body, **{"Last-Event-ID": str(last)})
    assert [e["sequence_number"] for e in resumed] == list(range(last + 1, last + 1 + len(resumed)))
    missed = [e for e in resumed if e["response_id"] == away["id"]]
    assert missed[0]["type"] == "response.created" and missed[-1]["type"] == "response.completed"
    assert uhp.output_text(missed[-1]["response"]) == "Two, while away."
    assert resumed[-1]["type"] == "response.completed"
    assert uhp.output_text(resumed[-1]["response"]) == "Three."
    served.model.add(answer("Four."))
    again = _feed_until(spec, f"{path}?starting_after=2", body)
    assert again[: len(seen) - 3] == seen[3:]
    assert again[len(seen) - 3 : len(seen) - 3 + len(resumed)] == resumed


def test_a_trailing_slash_is_the_same_endpoint(served: Served, spec: SpecClient) -> None:
    """Every non-2xx carries the envelope (Errors §1): no empty 307 redirect for `/v1/harnesses/`, and
    `/v1/uhp/` stays public."""
    assert spec.ok("GET", "/v1/harnesses/") == spec.ok("GET", "/v1/harnesses")
    assert spec.http.get("/v1/uhp/", headers={"Authorization": ""}).json()["object"] == "uhp.discovery"
    served.model.add(answer("slashed"))
    assert uhp.output_text(spec.ok("POST", "/v1/responses/", json={"input": "x"})) == "slashed"


def test_an_idempotency_key_past_its_length_is_refused_not_cut(served: Served, spec: SpecClient) -> None:
    """The OpenAPI document bounds `Idempotency-Key` at 255 characters. Cutting longer keys made two
    keys that share their first 255 characters one task: the second got the first one's answer."""
    served.model.add(answer("one"))
    spec.ok("POST", "/v1/responses", json={"input": "one"}, headers={"Idempotency-Key": "k" * 255})
    error = spec.refused(
        "POST",
        "/v1/responses",
        400,
        "invalid_input",
        json={"input": "two"},
        headers={"Idempotency-Key": "k" * 256},
    )
    assert error["param"] == "Idempotency-Key"


def test_a_download_names_its_file_for_every_client(served: Served, spec: SpecClient) -> None:
    """Files §3: `Content-Disposition` with the original filename — RFC 6266's plain `filename` (the
    one most clients read) and `filename*` (the exact name, any characters)."""
    served.model.add(*writes("résumé notes.md", "# CV\n"))
    cited = uhp.artifacts(spec.ok("POST", "/v1/responses", json={"input": "write it"}))[0]
    disposition = spec.http.get(cited["download_url"]).headers["content-disposition"]
    assert (
        disposition
        == "attachment; filename=\"r_sum_ notes.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20notes.md"
    )


def test_a_request_field_of_the_wrong_type_is_refused_before_any_task(
    served: Served, spec: SpecClient
) -> None:
    """`stream: "true"` was read as false (the client waited for JSON and got it, not a stream), a
    `max_output_tokens` of text was taken: each is now 400 `invalid_input` naming the field, and no
    task starts."""
    calls = len(served.model.requests)
    for field, value in (
        ("stream", "true"),
        ("background", 1),
        ("store", "no"),
        ("max_output_tokens", "100"),
        ("max_output_tokens", True),
        ("tools", {"type": "function"}),
        ("include", [1]),
    ):
        refused = spec.refused(
            "POST", "/v1/responses", 400, "invalid_input", json={"input": "x", field: value}
        )
        assert refused["param"] == field, (field, value)
    assert len(served.model.requests) == calls
