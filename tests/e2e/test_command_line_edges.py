"""Edges of the command line a script meets: numbers out of range, files that are not what was named."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest

from tests.e2e.helpers import HARNEZ, SECRET, HeadlessWorkspace, json_lines


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_a_port_out_of_range_is_a_usage_error_not_another_port(
    headless: HeadlessWorkspace, port: str
) -> None:
    """`serve --port 99999` listened on 34463 (the system takes the number modulo 65536) and said so
    only in its listening line; -1 was a resolver's error naming `ai_socktype`."""
    done = headless.harnez("serve", "--port", port, timeout=20)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"harnez serve: error: argument --port: expected a port from 0 to 65535 (0 picks a free one), "
        f"got {port!r}"
    )
    assert not headless.database.exists()


def test_a_dash_for_the_prompt_reads_it_from_stdin(headless: HeadlessWorkspace) -> None:
    """`harnez run -` sent the prompt "-" to the model, a paid request for nothing, and left stdin unread."""
    headless.model.add({"reply": [{"text": "Read from the pipe."}]})
    done = headless.harnez("run", "--json", "-", input="explain the build\n")
    assert done.returncode == 0, done.stderr
    (prompt,) = [event for event in json_lines(done.stdout) if event["kind"] == "user-message"]
    assert prompt["text"] == "explain the build\n"
    assert headless.model.requests[-1].body["messages"][-1] == {
        "role": "user",
        "content": "explain the build\n",
    }
    empty = headless.harnez("run", "-", input="")
    assert empty.returncode == 2 and empty.stderr.startswith("harnez: Nothing to run"), empty.stderr
    assert len(headless.model.requests) == 1


def test_a_reader_that_stops_at_finished_leaves_the_exit_code_the_tasks(headless: HeadlessWorkspace) -> None:
    """docs/headless.md: a consumer after the task's result reads until `finished`. One that then left
    (`sed '/"finished"/q'`) made the title printed after it a broken pipe, and a completed task exit 1:
    a failed CI step under `set -o pipefail`."""
    headless.model.add({"reply": [{"text": "Done quickly."}]})
    process = headless.popen("run", "--json", "summarise the build log")
    assert process.stdout is not None and process.stdin is not None
    process.stdin.close()
    read: list[dict] = []
    for line in iter(process.stdout.readline, ""):
        read.append(json.loads(line))
        if read[-1]["kind"] == "finished":
            break
    process.stdout.close()
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    stored = json_lines(headless.harnez("events", "--session", read[-1]["session"]).stdout)
    assert [e["kind"] for e in stored[-2:]] == ["finished", "title-changed"], "the title came after the end"
    assert stored[-2]["stop"] == "completed"


def test_a_retry_notice_says_how_long_the_run_waits(headless: HeadlessWorkspace) -> None:
    """A 429's Retry-After holds the run up to `retry.max_delay` (30 s) a time; the notice said only
    `retrying (attempt 2): …`, then nothing for that long (the app says `in 30.0 s`)."""
    headless.model.add(
        {"status": 429, "headers": {"retry-after": "1"}}, {"reply": [{"text": "Served after the wait."}]}
    )
    done = headless.harnez("run", "try again later")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Served after the wait.\n"
    (notice,) = [line for line in done.stderr.splitlines() if "retrying" in line]
    # The workspace's settings cap the wait (`retry.max_delay`) far below the second asked for.
    assert re.fullmatch(r"harnez: retrying \(attempt 2, in 0\.\d s\): chat answered 429 .*", notice), notice


def test_a_current_folder_deleted_under_the_shell_is_a_clear_error(headless: HeadlessWorkspace) -> None:
    """A shell left in a removed folder (a cleaned CI checkout, `git worktree remove`) got a traceback
    ending in `os.getcwd()`'s FileNotFoundError, exit 1; `--workspace` names a folder that exists."""
    gone = headless.path / "removed"

    def in_the_removed_folder(*args: str) -> subprocess.CompletedProcess[str]:
        script = 'mkdir "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"'
        return subprocess.run(
            ["sh", "-c", script, "sh", str(gone), str(HARNEZ), *args],
            env=headless.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    for args in (("run", "go"), ("sessions",), ("events", "--session", "0a1b")):
        done = in_the_removed_folder(*args)
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        assert done.stderr.startswith("harnez: The current folder no longer exists"), (args, done.stderr)
        assert len(done.stderr.splitlines()) == 1, (args, done.stderr)
    headless.model.add({"reply": [{"text": "Worked elsewhere."}]})
    elsewhere = in_the_removed_folder("run", "--workspace", str(headless.path), "go")
    assert elsewhere.returncode == 0 and elsewhere.stdout == "Worked elsewhere.\n", elsewhere.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_the_run_waits_for_the_title_keeps_the_tasks_exit_code(
    headless: HeadlessWorkspace, sig: signal.Signals
) -> None:
    """After `finished` the run waits up to 10 s for the session's title. Ctrl-C there raised
    KeyboardInterrupt (exit 130, as if the completed task had been cancelled), and SIGTERM, whose
    handler was gone, killed the process outright (-15); both stop the wait and exit with the task's code."""
    settings_file = headless.path / ".harnez" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["session"] = {"title": {"source": "model/claude/namer"}}
    settings_file.write_text(json.dumps(settings))
    headless.model.add(
        {"path": "/messages", "reply": [{"text": "A late title"}], "hold": "title"},
        {"path": "/chat/completions", "reply": [{"text": "Done."}]},
    )
    process = headless.popen("run", "--json", "name me later")
    assert process.stdout is not None and process.stdin is not None
    process.stdin.close()
    try:
        for line in iter(process.stdout.readline, ""):
            if json.loads(line)["kind"] == "finished":
                break
        time.sleep(0.3)  # in the wait for the title, its request held
        process.send_signal(sig)
        code = process.wait(timeout=5)
    finally:
        headless.model.release("title")
        process.kill()
        process.wait()
    stderr = process.stderr.read() if process.stderr else ""
    assert code == 0 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_at_the_chats_prompt_ends_it_at_once(
    headless: HeadlessWorkspace, sig: signal.Signals
) -> None:
    """`harnez chat` read its lines in the loop's executor: Ctrl-C at the prompt waited for a line or the
    end of input (Enter after Ctrl-C in a terminal), and SIGTERM killed it; both end it at once, 130."""
    headless.model.add({"reply": [{"text": "First answer."}]})
    process = headless.popen("chat", "--json")
    assert process.stdout is not None and process.stdin is not None
    process.stdin.write("first question\n")
    process.stdin.flush()
    try:
        for line in iter(process.stdout.readline, ""):
            if json.loads(line)["kind"] == "title-changed":  # after `finished`: the chat waits for a line
                break
        time.sleep(0.3)
        process.send_signal(sig)
        code = process.wait(timeout=10)
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
    stderr = process.stderr.read() if process.stderr else ""
    assert code == 130 and "Traceback" not in stderr, stderr
    (saved,) = json_lines(headless.harnez("sessions", "--json").stdout)
    assert saved["status"] == "completed"


def test_a_workspace_whose_path_is_not_utf8_is_refused_before_anything_is_made(
    headless: HeadlessWorkspace,
) -> None:
    """A folder named in Latin-1 (`café` from an old archive) failed with a traceback at the session's
    first write (`surrogates not allowed`), exit 1, after its database was made."""
    latin1 = os.path.join(os.fsencode(headless.path), b"caf\xe9")
    os.makedirs(os.path.join(latin1, b".harnez"))
    settings = headless.path / ".harnez" / "settings.json"
    os.link(settings, os.path.join(latin1, b".harnez", b"settings.json"))
    for args, cwd in (
        (("run", "go"), latin1),
        (("sessions",), latin1),
        (("run", "--workspace", os.fsdecode(latin1), "go"), os.fsencode(headless.path)),
    ):
        done = subprocess.run(
            [str(HARNEZ), *args], cwd=cwd, env=headless.env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        assert done.stderr == (
            f"harnez: The path of the folder {headless.path}/caf\\udce9 is not UTF-8 text, and a session "
            "stores its workspace as text: rename the folder (convmv -f latin1 -t utf8 converts such "
            "names), or work in another.\n"
        ), args
    assert os.listdir(os.path.join(latin1, b".harnez")) == [b"settings.json"]
    assert headless.model.requests == []


def test_a_database_folder_whose_path_is_not_utf8_is_listed_like_any(headless: HeadlessWorkspace) -> None:
    """A database opened for reading is opened by URI, and the URI was quoted from the path as text:
    under `--session-dir` named in Latin-1 the run worked, then `sessions` there failed with a traceback
    (`surrogates not allowed`), and so did `sessions --all`, for every project, once it was indexed."""
    folder = os.fsdecode(os.path.join(os.fsencode(headless.path), b"sessions-caf\xe9"))
    headless.model.add({"reply": [{"text": "Kept in the Latin-1 folder."}]})
    assert headless.harnez("run", "--session-dir", folder, "keep it there").returncode == 0
    for args in (("sessions", "--json", "--session-dir", folder), ("sessions", "--all", "--json")):
        done = headless.harnez(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        (listed,) = json_lines(done.stdout)
        assert listed["title"] == "keep it there" and listed["status"] == "completed", args


def test_a_byte_order_mark_before_settings_or_a_schema_is_skipped(headless: HeadlessWorkspace) -> None:
    """Notepad and PowerShell's `Set-Content -Encoding UTF8` start a UTF-8 file with a byte order mark,
    which JSON allows a reader to ignore; the settings file was refused (exit 2, 'not valid JSON …
    Fix the syntax there'), and so was an output schema."""
    settings = headless.path / ".harnez" / "settings.json"
    settings.write_bytes(b"\xef\xbb\xbf" + settings.read_bytes())
    schema = headless.path / "verdict.schema.json"
    schema.write_bytes(b'\xef\xbb\xbf{"type": "object", "properties": {"ok": {"type": "boolean"}}}')
    headless.model.add(
        {"reply": [{"tool_call": {"id": "a1", "name": "answer", "arguments": {"ok": True}}}]},
        {"reply": [{"text": "Answered."}]},
    )
    done = headless.harnez("run", "--output-schema", str(schema), "did it pass?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"ok":true}\n'


def test_white_space_around_an_api_key_is_dropped_and_a_bad_character_refused(
    headless: HeadlessWorkspace,
) -> None:
    """A key pasted into a CI secret with its line break, or read from an .env file written on Windows
    (`\\r`), was sent as it was: every attempt failed with 'the connection … broke: Illegal header
    value', retried four times, exit 1."""
    headless.model.add({"reply": [{"text": "Authorised."}]})
    headless.env["HARNEZ_TEST_KEY"] = f"{SECRET}\r\n"
    done = headless.harnez("run", "hello")
    assert done.returncode == 0 and done.stdout == "Authorised.\n", done.stderr
    assert headless.model.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    headless.env["HARNEZ_TEST_KEY"] = f"{SECRET[:8]}\u201d{SECRET[8:]}"  # a typographic quote pasted in
    refused = headless.harnez("run", "hello")
    assert refused.returncode == 2 and refused.stdout == "", refused.stderr
    assert refused.stderr.startswith(
        "harnez: the API key in HARNEZ_TEST_KEY (provider 'chat') holds a character no request header can carry"
    )
    assert SECRET[8:] not in refused.stderr and len(headless.model.requests) == 1


def test_a_listing_cut_at_its_limit_says_there_are_more(headless: HeadlessWorkspace) -> None:
    """`harnez sessions` stops at --limit (50 unless given), and said nothing when more were left:
    the older sessions looked absent, to a person and to a script counting lines."""
    for n in range(3):
        headless.model.add({"reply": [{"text": f"Answer {n}."}]})
        assert headless.harnez("run", f"question {n}").returncode == 0
    note = "harnez: note: there are more sessions than --limit 2 lists: raise it to see them.\n"
    for args in (
        ("sessions", "--limit", "2"),
        ("sessions", "--limit", "2", "--json"),
        ("sessions", "--all", "--limit", "2"),
    ):
        cut = headless.harnez(*args)
        assert cut.returncode == 0 and len(cut.stdout.splitlines()) == 2, args
        assert cut.stderr == note, (args, cut.stderr)
    whole = headless.harnez("sessions", "--limit", "3")
    assert len(whole.stdout.splitlines()) == 3 and whole.stderr == ""
