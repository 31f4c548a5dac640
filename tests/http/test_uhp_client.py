"""The public `uhp` client (PyPI) drives `harnez serve`: run, stream, continue, sessions, cancel, files, delete."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
import uhp

from tests.http.helpers import TOKEN, Served, answer, wait_for_requests, writes


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
