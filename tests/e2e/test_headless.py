"""`harnez run`, `harnez chat`, `harnez sessions` and `harnez events` as real processes over loopback."""

from __future__ import annotations

import json
import re
import signal
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from harnez.events import KINDS
from tests.e2e.helpers import SECRET, HeadlessWorkspace, finished, json_lines

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()


def _read_then_answer(path: str, answer: str) -> list[dict]:
    return [
        {
            "reply": [
                {"text": "Let me look."},
                {"tool_call": {"id": "call_1", "name": "read", "arguments": {"path": path}, "chunks": 3}},
            ],
            "usage": {"input": 50, "output": 10},
        },
        {"reply": [{"text": answer}], "usage": {"input": 80, "output": 12}},
    ]


def test_run_json_streams_documented_events_in_order_without_gaps(headless: HeadlessWorkspace) -> None:
    (headless.path / "notes.txt").write_text("the answer is 42\n")
    headless.model.add(*_read_then_answer("notes.txt", "The file says 42."))
    done = headless.harnez("run", "--json", "--input", "what does notes.txt say?")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "user-message" and events[0]["text"] == "what does notes.txt say?"
    (finished,) = [e for e in events if e["kind"] == "finished"]
    after_end = kinds[kinds.index("finished") + 1 :]
    assert set(after_end) <= {"title-changed", "warning"} and kinds.index("started") < kinds.index("finished")
    assert finished["stop"] == "completed" and finished["turns"] == 2
    started = events[kinds.index("started")]
    assert started["tools"] and isinstance(started["withheld"], list)
    for kind in set(kinds):
        assert kind in KINDS and f"`{kind}`" in DOCS, kind
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", k) for k in kinds)
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert len({e["session"] for e in events}) == 1
    completed = [e for e in events if e["kind"] == "tool-completed"]
    assert completed and "42" in completed[0]["content"]
    assert "".join(e["text"] for e in events if e["kind"] == "text-delta").endswith("The file says 42.")
    assert any(e["kind"] == "tool-arguments-delta" for e in events)


def test_run_prints_the_answer_and_keeps_no_key_anywhere(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "Hello from the model."}]})
    done = headless.harnez("run", "--input", "say hello")
    assert done.returncode == 0, done.stderr
    assert "Hello from the model." in done.stdout
    request = headless.model.requests[-1]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    for file in headless.database.parent.glob("harnez.sqlite*"):
        assert SECRET.encode() not in file.read_bytes(), file


def test_a_call_refused_by_approve_deny_says_it_did_not_run_and_how_to_allow_it(
    headless: HeadlessWorkspace,
) -> None:
    (headless.path / "a.txt").write_text("old\n")
    edit = {"path": "a.txt", "old_string": "old", "new_string": "new"}
    for approve in ("deny", "allow"):
        headless.model.add(
            {"reply": [{"tool_call": {"id": "c1", "name": "edit", "arguments": edit}}]},
            {"reply": [{"text": "Done."}]},
        )
        done = headless.harnez("run", "--approve", approve, "fix a.txt")
        assert done.returncode == 0, done.stderr
        if approve == "deny":
            assert (headless.path / "a.txt").read_text() == "old\n"
            assert "harnez: edit did not run: it needs approval and this run cannot ask" in done.stderr
            assert "run with --approve allow" in done.stderr
        else:
            assert (headless.path / "a.txt").read_text() == "new\n"
            assert "harnez: edit needs approval: allowed without asking (--approve allow)" in done.stderr


def test_a_key_written_into_the_base_url_is_sent_but_never_kept_or_printed(
    headless: HeadlessWorkspace,
) -> None:
    password, query_key = "pw-PLANTED-in-url-0123", "qk-PLANTED-in-query-4567"
    settings_file = headless.path / ".harnez" / "settings.json"
    settings = json.loads(settings_file.read_text())

    def provider_at(url: str) -> None:
        with_key = url.replace("http://", f"http://user:{password}@")
        settings["providers"]["chat"]["base_url"] = f"{with_key}?api-version=2024-10-21&key={query_key}"
        settings_file.write_text(json.dumps(settings))

    provider_at(headless.model.base_url("openai-chat"))
    headless.model.add({"reply": [{"text": "Hello through a keyed URL."}]})
    answered = headless.harnez("run", "--json", "say hello")
    assert answered.returncode == 0, answered.stderr
    assert headless.model.requests[-1].path == (
        f"/v1/chat/completions?api-version=2024-10-21&key={query_key}"
    ), "the wire's path goes before the base URL's query"
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    provider_at(f"http://127.0.0.1:{dead}/v1")
    failed = headless.harnez("run", "--json", "say hello again")
    assert failed.returncode == 1
    assert f"cannot connect to http://127.0.0.1:{dead}/v1/chat/completions" in failed.stderr
    for secret in (password, query_key):
        for done in (answered, failed):
            assert secret not in done.stdout + done.stderr
        for file in headless.database.parent.glob("harnez.sqlite*"):
            assert secret.encode() not in file.read_bytes(), file


def test_a_broken_stream_is_retried_without_duplicated_text(headless: HeadlessWorkspace) -> None:
    headless.model.add(
        {"reply": [{"text": ["one ", "two ", "three ", "four"]}], "cut_after_chunks": 3},
        {"reply": [{"text": ["one ", "two ", "three ", "four"]}]},
    )
    done = headless.harnez("run", "--json", "--input", "count")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    retried = [i for i, e in enumerate(events) if e["kind"] == "turn-retried"]
    assert len(retried) == 1
    after_retry = "".join(e["text"] for e in events[retried[0] :] if e["kind"] == "text-delta")
    assert after_retry == "one two three four"
    shown = headless.harnez("sessions", "show", events[0]["session"])
    assert shown.stdout.count("one two three four") == 1


def test_a_retried_answer_piped_as_text_holds_no_partial_text(headless: HeadlessWorkspace) -> None:
    """Text mode streamed every delta to stdout, so a script reading a pipe got the cut attempt's words
    and then the whole answer on the same line ("one two three one two three four"); to a pipe each
    turn's text is written once it completes, and a retried one's partial text never reaches it."""
    headless.model.add(
        {"reply": [{"text": ["one ", "two ", "three ", "four"]}], "cut_after_chunks": 3},
        {"reply": [{"text": ["one ", "two ", "three ", "four"]}]},
    )
    done = headless.harnez("run", "--input", "count")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "one two three four\n"
    assert "retrying (attempt 2" in done.stderr and "void" not in done.stderr


def test_resume_latest_sends_the_earlier_conversation(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "First answer."}]}, {"reply": [{"text": "Second answer."}]})
    first = headless.harnez("run", "--input", "remember the word pelican")
    assert first.returncode == 0, first.stderr
    second = headless.harnez("run", "--resume", "latest", "--input", "which word?")
    assert second.returncode == 0, second.stderr
    body = str(headless.model.requests[-1].body)
    assert "remember the word pelican" in body and "First answer." in body and "which word?" in body
    listed = json_lines(headless.harnez("sessions", "--json").stdout)
    assert len(listed) == 1


def test_no_session_leaves_the_database_untouched(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "kept"}]}, {"reply": [{"text": "not kept"}]})
    assert headless.harnez("run", "--input", "first").returncode == 0
    connection = sqlite3.connect(headless.database)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    before = {p.name: p.read_bytes() for p in headless.database.parent.glob("harnez.sqlite*")}
    done = headless.harnez("run", "--no-session", "--input", "second")
    assert done.returncode == 0, done.stderr
    assert "not kept" in done.stdout
    after = {p.name: p.read_bytes() for p in headless.database.parent.glob("harnez.sqlite*")}
    assert after == before


def test_no_session_with_resume_is_a_usage_error_not_a_fresh_conversation(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add({"reply": [{"text": "kept"}]})
    assert headless.harnez("run", "first").returncode == 0
    asked = len(headless.model.requests)
    for command in (("run", "second"), ("chat",)):
        done = headless.harnez(*command, "--no-session", "--resume", "latest", input="second\n")
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.startswith("harnez: --no-session starts from nothing") and done.stdout == ""
    assert len(headless.model.requests) == asked, (
        "no request: the model never saw a prompt without its history"
    )


def test_no_session_in_a_fresh_workspace_creates_no_database(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "ephemeral"}]})
    done = headless.harnez("run", "--no-session", "--input", "hi")
    assert done.returncode == 0, done.stderr
    assert "ephemeral" in done.stdout and not headless.database.exists()


def test_chat_over_a_pipe_gives_three_answers_in_one_session(headless: HeadlessWorkspace) -> None:
    headless.model.add(*({"reply": [{"text": f"Answer {i}."}]} for i in (1, 2, 3)))
    done = headless.harnez("chat", input="one\ntwo\nthree\n")
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("Answer")] == [
        "Answer 1.",
        "Answer 2.",
        "Answer 3.",
    ]
    listed = json_lines(headless.harnez("sessions", "--json").stdout)
    assert len(listed) == 1
    assert len(headless.model.requests) == 3
    assert "Answer 2." in str(headless.model.requests[2].body)


def test_a_failing_provider_mid_run_keeps_the_completed_turns(headless: HeadlessWorkspace) -> None:
    (headless.path / "a.txt").write_text("alpha\n")
    headless.model.add(
        {"reply": [{"tool_call": {"id": "c1", "name": "read", "arguments": {"path": "a.txt"}}}]},
        {"status": 401},
    )
    done = headless.harnez("run", "--json", "--input", "read a.txt")
    assert done.returncode == 1
    events = json_lines(done.stdout)
    assert finished(events)["stop"] == "failed"
    assert "HARNEZ_TEST_KEY" in finished(events)["error"]
    stored = json_lines(headless.harnez("sessions", "show", events[0]["session"], "--json").stdout)
    assert [e["kind"] for e in stored if e["kind"] == "tool-completed"] == ["tool-completed"]
    assert any(e["kind"] == "turn-completed" for e in stored)


def test_events_after_a_cursor_returns_exactly_the_later_events(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "some words here"}]})
    run = json_lines(headless.harnez("run", "--json", "--input", "hi").stdout)
    session = run[0]["session"]
    everything = json_lines(headless.harnez("events", "--session", session).stdout)
    assert [e["seq"] for e in everything] == list(range(1, len(everything) + 1))
    later = json_lines(headless.harnez("events", "--session", session[:10], "--after", "3").stdout)
    assert later == everything[3:]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["ctrl-c", "hang-up"])
def test_ctrl_c_or_a_hang_up_cancels_cleanly_with_exit_130_and_keeps_output(
    headless: HeadlessWorkspace, sig: signal.Signals
) -> None:
    headless.model.add(
        {"reply": [{"text": "partial answer that never ends"}], "hold_after_chunks": 2, "hold": "never"}
    )
    proc = headless.popen("run", "--json", "--input", "long job")
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if '"text-delta"' in line:
            break
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 130
    events = json_lines("".join(lines) + out)
    assert finished(events)["stop"] == "cancelled"
    stored = json_lines(headless.harnez("sessions", "show", events[0]["session"], "--json").stdout)
    assert any(e["kind"] == "text-delta" for e in stored)
    headless.model.release("never")


def test_unknown_session_and_bad_settings_are_usage_errors(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "x"}]})
    assert headless.harnez("run", "--input", "x").returncode == 0
    missing = headless.harnez("run", "--resume", "0123456789", "--input", "x")
    assert missing.returncode == 2 and "No session id starts with" in missing.stderr
    assert "Traceback" not in missing.stderr
    (headless.path / ".harnez" / "settings.json").write_text("{not json")
    broken = headless.harnez("sessions")
    assert broken.returncode == 2 and "settings.json" in broken.stderr and "Traceback" not in broken.stderr


def test_events_follow_prints_appends_made_by_another_process(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "first"}]}, {"reply": [{"text": "second answer"}]})
    first = json_lines(headless.harnez("run", "--json", "--input", "one").stdout)
    session = first[0]["session"]
    follower = headless.popen("events", "--session", session, "--follow")
    assert follower.stdout is not None
    try:
        seen = []
        while len(seen) < first[-1]["seq"]:
            seen.append(json_lines(follower.stdout.readline())[0])
        assert headless.harnez("run", "--resume", session, "--input", "two").returncode == 0
        while not (seen[-1]["kind"] == "finished" and seen[-1]["seq"] > first[-1]["seq"]):
            seen.extend(json_lines(follower.stdout.readline()))
    finally:
        follower.terminate()
        follower.wait(10)
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert "second answer" in "".join(e.get("text", "") for e in seen if e["kind"] == "text-delta")


def test_input_on_stdin_and_a_session_dir(headless: HeadlessWorkspace, tmp_path: Path) -> None:
    headless.model.add({"reply": [{"text": "from stdin"}]})
    elsewhere = tmp_path / "sessions"
    done = headless.harnez("run", "--session-dir", str(elsewhere), input="prompt on stdin\n")
    assert done.returncode == 0, done.stderr
    assert "from stdin" in done.stdout
    assert (elsewhere / "harnez.sqlite").exists() and not headless.database.exists()
    assert "prompt on stdin" in str(headless.model.requests[-1].body)


def test_a_quoted_tilde_in_session_dir_is_the_home_folder_for_run_and_sessions_alike(
    headless: HeadlessWorkspace, tmp_path: Path
) -> None:
    home = tmp_path / "home-folder"
    home.mkdir()
    headless.env["HOME"] = str(home)
    headless.model.add({"reply": [{"text": "stored at home"}]})
    done = headless.harnez("run", "--json", "--session-dir", "~/store", "remember this")
    assert done.returncode == 0, done.stderr
    assert (home / "store" / "harnez.sqlite").exists()
    assert not (headless.path / "~").exists(), "no folder named ~ in the workspace"
    listed = headless.harnez("sessions", "--session-dir", "~/store", "--json")
    assert [s["id"] for s in json_lines(listed.stdout)] == [json_lines(done.stdout)[0]["session"]]


def test_a_step_budget_ends_incomplete_with_exit_3(headless: HeadlessWorkspace) -> None:
    (headless.path / "a.txt").write_text("a\n")
    headless.model.add(
        *(
            {"reply": [{"tool_call": {"id": f"c{i}", "name": "read", "arguments": {"path": "a.txt"}}}]}
            for i in range(3)
        )
    )
    done = headless.harnez("run", "--json", "--max-steps", "2", "--input", "loop")
    assert done.returncode == 3, done.stderr
    assert finished(json_lines(done.stdout))["stop"] == "incomplete"


def test_the_json_stream_is_gapless_from_the_prompt_through_a_title_and_a_model_change(
    headless: HeadlessWorkspace,
) -> None:
    settings = json.loads((headless.path / ".harnez" / "settings.json").read_text())
    settings["session"] = {"title": {"source": "model/responses/namer"}}  # a title that arrives late
    (headless.path / ".harnez" / "settings.json").write_text(json.dumps(settings))
    headless.model.add(
        {"path": "/chat/completions", "reply": [{"text": "first answer"}]},
        {"path": "/responses", "reply": [{"text": "Named Late"}], "delay_per_chunk": 0.3},
    )
    first = json_lines(headless.harnez("run", "--json", "--input", "start something").stdout)
    headless.model.add({"reply": [{"text": "second answer"}]})
    second = json_lines(
        headless.harnez(
            "run", "--json", "--resume", first[0]["session"], "--model", "responses/other", "--input", "go on"
        ).stdout
    )
    for run in (first, second):
        seqs = [e["seq"] for e in run]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert first[0]["kind"] == "user-message" and first[-1]["kind"] == "title-changed"
    assert first[-1]["title"] == "Named Late" and finished(first)["seq"] < first[-1]["seq"]
    assert second[0]["seq"] == first[-1]["seq"] + 1
    assert [e["kind"] for e in second][:2] == ["model-changed", "user-message"]
