"""`harnez serve` as a command: a fixed workspace, serving without a token on loopback, a taken port."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
from pathlib import Path

import httpx
import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.http.conftest import HARNEZ, start_serve, uhp_client
from tests.http.helpers import TOKEN, answer, sse_events, wait_for_requests, writes


def test_a_fixed_workspace_is_shared_by_sessions_and_never_deleted(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# The team's repository\n")
    served = start_serve(tmp_path / "serve", scripted_model, "--workspace", str(repo))
    try:
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        ) as client:
            scripted_model.add(*writes("notes/plan.md", "the plan\n"), answer("second"))
            first = client.post("/v1/responses", json={"input": "write the plan"}).json()
            second = client.post("/v1/responses", json={"input": "another session"}).json()
            assert first["metadata"]["session_id"] != second["metadata"]["session_id"]
            assert (repo / "notes" / "plan.md").read_text() == "the plan\n"
            files = client.get(f"/v1/sessions/{first['metadata']['session_id']}/files").json()["files"]
            assert [f["filename"] for f in files] == [
                "notes/plan.md"
            ]  # what it wrote, not the whole repository
            assert client.get(f"/v1/sessions/{second['metadata']['session_id']}/files").json()["files"] == []
            assert client.delete(f"/v1/traces/{first['metadata']['session_id']}").status_code == 200
        assert (repo / "README.md").exists() and (repo / "notes" / "plan.md").exists()
    finally:
        served.stop()


def test_without_a_token_loopback_is_served_open_and_says_so(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    served = start_serve(tmp_path, scripted_model, token=None)
    try:
        scripted_model.add(answer("open"))
        # As the README's curl sends it: no Content-Type header saying JSON.
        done = httpx.post(
            f"{served.url}/v1/responses",
            content=b'{"input": "hello"}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            timeout=30,
        )
        assert done.status_code == 200 and done.json()["status"] == "completed"
    finally:
        stderr = served.stop()
    assert "no token is set" in stderr and "Traceback" not in stderr


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        refused = subprocess.run(
            [str(HARNEZ), "serve", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={"HARNEZ_HOME": str(tmp_path), "PATH": "/usr/bin"},
            timeout=30,
        )
    assert refused.returncode == 2 and f"Cannot listen on 127.0.0.1:{port}" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "hang-up"])
def test_sigterm_or_a_hang_up_cancels_running_tasks_and_closes_cleanly(
    tmp_path: Path, scripted_model: ScriptedModel, sig: signal.Signals
) -> None:
    served = start_serve(tmp_path, scripted_model)
    scripted_model.add({"reply": [{"text": ["kept ", "never"]}], "hold": "sigterm", "hold_after_chunks": 2})
    try:
        with (
            httpx.Client(
                base_url=served.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
            ) as client,
            client.stream("POST", "/v1/responses", json={"input": "long", "stream": True}) as response,
        ):
            events = sse_events(response)
            for event in events:
                if event["type"] == "response.output_text.delta":
                    break
            served.process.send_signal(sig)
            rest = list(events)  # the stream ends with its terminal event, not a cut connection
            stderr = served.stop()
    finally:
        scripted_model.release("sigterm")
        served.stop()
    assert rest[-1]["type"] == "response.failed" and rest[-1]["response"]["status"] == "cancelled"
    assert "kept" in json.dumps(rest[-1]["response"]["output"])
    assert served.process.returncode == 0, stderr
    assert "Traceback" not in stderr
    with sqlite3.connect(served.database) as db:
        states = [row[0] for row in db.execute("SELECT state FROM tasks")]
    assert states == ["cancelled"]


def test_session_folders_are_made_in_the_workspaces_folder_given(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """`--workspaces DIR`: each HTTP session's folder is made in DIR, not beside the database; its
    files are the session's artifacts, and deleting the session deletes its folder there."""
    elsewhere = tmp_path / "elsewhere"
    served = start_serve(tmp_path / "serve", scripted_model, "--workspaces", str(elsewhere))
    try:
        with uhp_client(served) as client:
            scripted_model.add(*writes("plan.md", "the plan\n"))
            done = client.post("/v1/responses", json={"input": "write the plan"}).json()
            session = done["metadata"]["session_id"]
            (folder,) = elsewhere.iterdir()
            assert (folder / "plan.md").read_text() == "the plan\n"
            assert not (served.project / ".harnez" / "uhp-workspaces").exists(), "nothing in the default"
            files = client.get(f"/v1/sessions/{session}/files").json()["files"]
            assert [f["filename"] for f in files] == ["plan.md"]
            assert client.delete(f"/v1/traces/{session}").status_code == 200
            assert not folder.exists() and elsewhere.exists()
    finally:
        served.stop()


def test_a_task_past_the_running_limit_is_rate_limited_with_retry_after(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """Security §5 asks a server to limit task creation: past `--max-tasks` running tasks a new one is
    429 `rate_limited` with `Retry-After` (Errors §3.2), and starts nothing; a repeated Idempotency-Key
    still gets its first response, and once the running task ends a new one runs."""
    served = start_serve(tmp_path, scripted_model, "--max-tasks", "1")
    try:
        with uhp_client(served) as client:
            scripted_model.add(answer("held", hold="limit"))
            first = client.post(
                "/v1/responses", json={"input": "one", "background": True}, headers={"Idempotency-Key": "k1"}
            ).json()
            wait_for_requests(scripted_model, 1)
            refused = client.post("/v1/responses", json={"input": "two"})
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "rate_limited"
            assert refused.json()["error"]["detail"] == {"max_running_tasks": 1}
            assert refused.headers["retry-after"].isdigit()
            again = client.post(
                "/v1/responses", json={"input": "one", "background": True}, headers={"Idempotency-Key": "k1"}
            )
            assert again.status_code == 200 and again.json()["id"] == first["id"]
            assert len(scripted_model.requests) == 1  # the refused task never reached the model
            scripted_model.release("limit")
            scripted_model.add(answer("now"))
            followed = client.get(f"/v1/responses/{first['id']}", params={"stream": "true"})  # to its end
            assert '"type":"response.completed"' in followed.text
            done = client.post("/v1/responses", json={"input": "two"})
            assert done.status_code == 200 and done.json()["output"][-1]["content"][0]["text"] == "now"
    finally:
        served.stop()


def test_a_task_read_as_finished_leaves_its_place_at_once(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """With `--max-tasks 1`, a client that polls a background task until it reads it finished may start
    the next one at once, every time: the task recording its end no longer counts as running."""
    served = start_serve(tmp_path, scripted_model, "--max-tasks", "1")
    try:
        with uhp_client(served) as client:
            for turn in range(15):
                scripted_model.add(answer(f"answer {turn}"))
                started = client.post("/v1/responses", json={"input": f"task {turn}", "background": True})
                assert started.status_code == 200, (turn, started.text)
                while client.get(f"/v1/responses/{started.json()['id']}").json()["status"] == "in_progress":
                    pass
    finally:
        served.stop()


def test_tasks_past_the_per_minute_limit_of_a_token_are_rate_limited_until_a_place_frees(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """Security §5: task creation is rate-limited per principal, and the limit is told through
    `rate_limit_error`. With `--tasks-per-minute 2` the token's third task of the minute is 429
    `rate_limited` with `Retry-After` and the budget in `detail`, and starts nothing; requests that
    started nothing (refused, or a repeated Idempotency-Key) used no place."""
    served = start_serve(tmp_path, scripted_model, "--tasks-per-minute", "2")
    try:
        with uhp_client(served) as client:
            for _ in range(3):  # refused before any task starts: they cost nothing
                missing = client.post("/v1/responses", json={"input": "x", "previous_response_id": "resp_0"})
                assert missing.status_code == 404
            scripted_model.add(answer("one"), answer("two"))
            first = client.post("/v1/responses", json={"input": "one"}, headers={"Idempotency-Key": "k1"})
            assert first.status_code == 200, first.text
            for _ in range(3):
                again = client.post("/v1/responses", json={"input": "one"}, headers={"Idempotency-Key": "k1"})
                assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
            assert client.post("/v1/responses", json={"input": "two"}).status_code == 200
            refused = client.post("/v1/responses", json={"input": "three", "stream": True})
            assert refused.status_code == 429, refused.text
            error = refused.json()["error"]
            assert error["type"] == "rate_limit_error" and error["code"] == "rate_limited"
            wait = int(refused.headers["retry-after"])
            assert 1 <= wait <= 60
            assert error["detail"] == {"tasks_per_minute": 2, "remaining": 0, "retry_after_seconds": wait}
            assert "2 tasks in the last minute" in error["message"]
            assert len(scripted_model.requests) == 2  # the refused task never reached the model
    finally:
        served.stop()
