"""`harnez serve`: sessions (paging, inspection, turns, sharing, deletion) and files (input, artifacts)."""

from __future__ import annotations

import base64
import io
import json
import shutil
import sqlite3
import time
import zipfile
from pathlib import Path

import httpx

from tests.http.helpers import Served, answer, validate, wait_for_requests, writes


def _run(served: Served, client: httpx.Client, body: dict, *turns: dict) -> dict:
    served.model.add(*turns)
    done = client.post("/v1/responses", json=body)
    assert done.status_code == 200, done.text
    validate(done.json(), "Response")
    _named(client, done.json()["metadata"]["session_id"])
    return done.json()


def _named(client: httpx.Client, session_id: str) -> None:
    """Wait (up to 10 s) for the session's title, which lands after its first answer and moves its
    activity: listings compared before and after must not see it land in between."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if client.get(f"/v1/sessions/{session_id}").json().get("title"):
            return
        time.sleep(0.02)


# sessions ----------------------------------------------------------------------------------------


def test_sessions_page_newest_first_to_a_null_cursor(served: Served, client: httpx.Client) -> None:
    made = [
        _run(served, client, {"input": f"session {n}"}, answer(f"s{n}"))["metadata"]["session_id"]
        for n in range(5)
    ]
    seen, cursor = [], None
    while True:
        page = client.get(
            "/v1/sessions", params={"limit": 2, **({"cursor": cursor} if cursor else {})}
        ).json()
        validate(page, "SessionList")
        assert "next_cursor" in page and len(page["sessions"]) <= 2
        seen += page["sessions"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    ids = [s["id"] for s in seen]
    assert set(made) <= set(ids) and len(ids) == len(set(ids))
    activity = [s["updated_at"] for s in seen]
    assert activity == sorted(activity, reverse=True)  # newest activity first
    exact = client.get("/v1/sessions", params={"limit": len(ids)}).json()
    assert exact["next_cursor"] is None and len(exact["sessions"]) == len(ids)
    assert client.get("/v1/sessions", params={"limit": 0}).json()["error"]["code"] == "invalid_input"
    assert (
        client.get("/v1/sessions", params={"cursor": "garbage!"}).json()["error"]["code"] == "invalid_input"
    )


def test_a_session_can_be_inspected_with_its_turns(served: Served, client: httpx.Client) -> None:
    first = _run(served, client, {"input": "name a bird"}, answer("Pelican."))
    second = _run(served, client, {"input": "another", "previous_response_id": first["id"]}, answer("Heron."))
    session = first["metadata"]["session_id"]
    found = client.get(f"/v1/sessions/{session}").json()
    validate(found, "Session")
    assert found["id"] == session and found["harness_id"] == first["metadata"]["harness_id"]
    assert found["status"] == "completed" and found["harnez_response_ids"] == [first["id"], second["id"]]
    turns = client.get(f"/v1/sessions/{session}/turns").json()["turns"]
    assert [(t["response_id"], t["input"], t["output_text"]) for t in turns] == [
        (first["id"], "name a bird", "Pelican."),
        (second["id"], "another", "Heron."),
    ]


def test_sessions_made_elsewhere_are_out_of_scope(served: Served, client: httpx.Client) -> None:
    assert client.get("/v1/sessions/hsess" + "0" * 32).json()["error"]["code"] == "session_not_found"
    assert client.get("/v1/sessions/nothsess").status_code == 404


def test_a_share_is_read_only_revocable_and_carries_no_credentials(
    served: Served, client: httpx.Client
) -> None:
    body = _run(served, client, {"input": "share me"}, answer("Shared answer."))
    session = body["metadata"]["session_id"]
    assert client.get(f"/v1/sessions/{session}/share").status_code == 404
    made = client.post(f"/v1/sessions/{session}/share").json()
    assert (
        made["read_only"] is True and client.post(f"/v1/sessions/{session}/share").json()["id"] == made["id"]
    )
    view = client.get(f"/v1/shares/{made['id']}")
    assert view.status_code == 200 and "Shared answer." in view.text
    assert "workspace" not in view.text and "sk-test" not in view.text and "Bearer" not in view.text
    assert client.post(f"/v1/shares/{made['id']}").status_code == 405
    assert client.delete(f"/v1/sessions/{session}/share").json()["revoked"] is True
    assert client.get(f"/v1/shares/{made['id']}").status_code == 404


def test_deleting_a_trace_cancels_first_then_leaves_nothing(served: Served, client: httpx.Client) -> None:
    body = _run(served, client, {"input": "write it"}, *writes("notes.md", "kept?"))
    session = body["metadata"]["session_id"]
    served.model.add(answer("never", hold="delete-running"))
    calls = len(served.model.requests)
    running = client.post(
        "/v1/responses", json={"input": "more", "previous_response_id": body["id"], "background": True}
    ).json()
    wait_for_requests(served.model, calls + 1)
    files = client.get(f"/v1/sessions/{session}/files").json()["files"]
    gone = client.delete(f"/v1/traces/{session}")
    assert gone.status_code == 200 and gone.json()["deleted"] is True
    served.model.release("delete-running")
    assert client.get(f"/v1/sessions/{session}").json()["error"]["code"] == "session_not_found"
    assert client.get(f"/v1/responses/{running['id']}").status_code == 404
    download = client.get(f"/v1/containers/{files[0]['container_id']}/files/{files[0]['id']}/content")
    assert download.status_code == 404
    expired = client.post("/v1/responses", json={"input": "again", "previous_response_id": body["id"]})
    assert expired.status_code == 404 and expired.json()["error"]["code"] == "session_expired"
    assert client.delete(f"/v1/traces/{session}").status_code == 404


# files -------------------------------------------------------------------------------------------


def test_an_inline_text_file_reaches_the_model(served: Served, client: httpx.Client) -> None:
    data = base64.b64encode(b"The secret token is uhp-1234.").decode()
    body = _run(
        served,
        client,
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "Reply with only the secret token from the attached file.",
                        },
                        {
                            "type": "input_file",
                            "filename": "token.txt",
                            "file_data": f"data:text/plain;base64,{data}",
                        },
                    ],
                }
            ]
        },
        answer("uhp-1234"),
    )
    sent = json.dumps(served.model.requests[-1].body["messages"])
    assert "The secret token is uhp-1234." in sent and body["status"] == "completed"
    items = client.get(f"/v1/responses/{body['id']}/input_items").json()["data"]
    part = items[0]["content"][1]
    assert part["file_id"].startswith("file_") and "file_data" not in part
    listed = client.get(f"/v1/sessions/{body['metadata']['session_id']}/files").json()["files"]
    assert listed == []  # an input is not an artifact


def test_an_uploaded_file_and_an_image_are_accepted_by_id(served: Served, client: httpx.Client) -> None:
    uploaded = client.post(
        "/v1/files",
        files={"file": ("report.md", b"# Q3\nrevenue up 12%\n", "text/markdown")},
        data={"purpose": "user_data"},
    )
    assert uploaded.status_code == 200
    validate(uploaded.json(), "File")
    assert (
        uploaded.json()["bytes"] == len(b"# Q3\nrevenue up 12%\n")
        and uploaded.json()["filename"] == "report.md"
    )
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(16)).decode()
    body = _run(
        served,
        client,
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "Summarise."},
                        {"type": "input_file", "file_id": uploaded.json()["id"]},
                        {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
                    ],
                }
            ]
        },
        answer("Revenue rose."),
    )
    sent = json.dumps(served.model.requests[-1].body["messages"])
    assert "revenue up 12%" in sent and "binary file" in sent and body["status"] == "completed"
    before = client.get("/v1/sessions", params={"limit": 100}).json()["sessions"]
    unknown = client.post("/v1/responses", json={"input": [{"type": "input_file", "file_id": "file_nope"}]})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "file_not_found"
    assert (
        client.get("/v1/sessions", params={"limit": 100}).json()["sessions"] == before
    )  # nothing was started


def _uploads(served: Served) -> set[str]:
    with sqlite3.connect(served.database) as db:
        return {row[0] for row in db.execute("SELECT id FROM uhp_uploads")}


def _with_inline_file(body: dict, text: str = "Read the attached note.") -> dict:
    note = base64.b64encode(b"PLANTED-NOTE").decode()
    part = {"type": "input_file", "filename": "note.txt", "file_data": f"data:text/plain;base64,{note}"}
    return {**body, "input": [{"role": "user", "content": [{"type": "input_text", "text": text}, part]}]}


def test_a_refused_request_keeps_none_of_its_inline_files(served: Served, client: httpx.Client) -> None:
    # An inline file was stored before the harness, previous-response and busy checks: every refused
    # request left an upload row (the file's bytes) that nothing would ever use or collect.
    skill = {"name": "tidy", "content": "---\nname: tidy\ndescription: Tidy.\n---\n"}
    harness = client.post("/v1/harnesses", json={"base": "harnez", "skills": [skill]}).json()
    served.model.add(answer("first"), answer("held", hold="inline-busy"))
    first = client.post("/v1/responses", json={"input": "a", "metadata": {"harness_id": harness["id"]}})
    busy = client.post("/v1/responses", json={"input": "b", "background": True}).json()
    before = _uploads(served)
    refusals = [
        ({"metadata": {"harness_id": "chrn_nope"}}, 404, "harness_not_found"),
        ({"previous_response_id": "resp_nope"}, 404, "response_not_found"),
        ({"previous_response_id": busy["id"]}, 409, "session_busy"),
    ]
    try:
        for body, status, code in refusals:
            refused = client.post("/v1/responses", json=_with_inline_file(body))
            assert (refused.status_code, refused.json()["error"]["code"]) == (status, code), refused.text
    finally:
        served.model.release("inline-busy")
    assert _uploads(served) == before
    # refused once the file was placed in the session's folder: its folder there goes too
    with sqlite3.connect(served.database) as db:
        workspace = Path(
            db.execute(
                "SELECT workspace FROM sessions WHERE id = ?", (first.json()["metadata"]["session_id"][5:],)
            ).fetchone()[0]
        )
    skills = workspace / ".uhp-skills"
    placed = set((workspace / ".uhp-inputs").iterdir()) if (workspace / ".uhp-inputs").exists() else set()
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    shutil.rmtree(skills)
    skills.symlink_to(outside)
    unsafe = client.post(
        "/v1/responses", json=_with_inline_file({"previous_response_id": first.json()["id"]})
    )
    assert unsafe.status_code == 409 and unsafe.json()["error"]["code"] == "harnez_workspace_unsafe"
    assert _uploads(served) == before
    after = set((workspace / ".uhp-inputs").iterdir()) if (workspace / ".uhp-inputs").exists() else set()
    assert after == placed
    # an accepted request keeps its file, under the id its stored input names
    served.model.add(answer("kept"))
    kept = client.post("/v1/responses", json=_with_inline_file({})).json()
    items = client.get(f"/v1/responses/{kept['id']}/input_items").json()["data"]
    assert _uploads(served) == before | {items[0]["content"][1]["file_id"]}


def test_oversized_and_malformed_files_are_refused(served: Served, client: httpx.Client) -> None:
    limit = client.get("/v1/uhp").json()["implementation"]["max_upload_bytes"]
    for size in (limit + 1, limit + 1024 * 1024):  # refused while reading the part, and from its length
        big = client.post("/v1/files", files={"file": ("big.bin", b"x" * size, "application/octet-stream")})
        assert big.status_code == 413 and big.json()["error"]["detail"]["max_bytes"] == limit
    huge = client.post("/v1/responses", content=b'{"input": "' + b"x" * (limit * 2) + b'"}')
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "file_too_large"
    bad = client.post("/v1/responses", json={"input": [{"type": "input_file", "file_data": "data:nonsense"}]})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
    remote = client.post(
        "/v1/responses", json={"input": [{"type": "input_file", "file_data": "https://x/y"}]}
    )
    assert remote.status_code == 400


def test_artifacts_of_every_task_are_listed_cited_and_downloaded_raw(
    served: Served, client: httpx.Client
) -> None:
    first = _run(served, client, {"input": "write one"}, *writes("one.md", "first file\n", "Wrote one.md."))
    second = _run(
        served,
        client,
        {"input": "write two", "previous_response_id": first["id"]},
        *writes("docs/two.html", "<script>alert(1)</script>", "Wrote two."),
    )
    citation = second["output"][-1]["content"][0]["annotations"][0]
    assert citation["type"] == "container_file_citation" and citation["filename"] == "docs/two.html"
    files = client.get(f"/v1/sessions/{first['metadata']['session_id']}/files").json()["files"]
    for file in files:
        validate(file, "File")
    assert sorted(f["filename"] for f in files) == ["docs/two.html", "one.md"]
    assert citation["file_id"] in {f["id"] for f in files}
    page = client.get(citation["download_url"])
    assert page.status_code == 200 and page.content == b"<script>alert(1)</script>"
    assert (
        page.headers["x-content-type-options"] == "nosniff"
        and "attachment" in page.headers["content-disposition"]
    )
    one = next(f for f in files if f["filename"] == "one.md")
    assert (
        client.get(f"/v1/containers/{one['container_id']}/files/{one['id']}/content").content
        == b"first file\n"
    )
    assert client.get(f"/v1/containers/cntr_other/files/{one['id']}/content").status_code == 404
    preview = client.get(f"/v1/containers/{one['container_id']}/files/{one['id']}/pdf")
    assert preview.status_code == 501 and preview.json()["error"]["code"] == "preview_unavailable"
    archive = client.get(f"/v1/sessions/{first['metadata']['session_id']}/files/archive")
    assert sorted(zipfile.ZipFile(io.BytesIO(archive.content)).namelist()) == ["docs/two.html", "one.md"]


def test_artifact_ids_never_traverse_outside_their_container(served: Served, client: httpx.Client) -> None:
    body = _run(served, client, {"input": "write"}, *writes("a.txt", "a"))
    file = client.get(f"/v1/sessions/{body['metadata']['session_id']}/files").json()["files"][0]
    container = file["container_id"]
    for probe in ("../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e%2fsettings.json", "..", "a.txt"):
        found = client.get(f"/v1/containers/{container}/files/{probe}/content")
        assert found.status_code in (400, 403, 404), probe
        assert b"root:" not in found.content and b"providers" not in found.content
    raw = httpx.get(
        f"{served.url}/v1/containers/{container}/files/..%2f..%2f..%2fharnez.sqlite/content",
        headers=client.headers,
    )
    assert raw.status_code == 404 and b"SQLite" not in raw.content
