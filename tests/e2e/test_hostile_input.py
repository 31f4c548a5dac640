"""Hostile input through the real `harnez` executable: terminal control sequences, invalid UTF-8,
lone surrogates, and usage errors that must stop before anything is created."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from tests.e2e.helpers import HARNEZ, HeadlessWorkspace, finished, json_lines

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e"
"""Retitles the terminal, clears the screen, reverses the text that follows."""
RAW_CONTROLS = ("\x1b", "\x07", "\u202e", "\x9b")


def assert_no_raw_controls(text: str) -> None:
    found = [repr(c) for c in RAW_CONTROLS if c in text]
    assert not found, f"raw control characters {found} in {text!r}"


def test_control_sequences_in_a_prompt_and_an_answer_are_printed_escaped(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": f"cleared{HOSTILE}done\x9b31m"}]})
    done = headless.harnez("run", "--input", f"list{HOSTILE} the files")
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout)
    assert "cleared\\x1b]0;pwned\\x07\\x1b[2J\\u202edone\\x9b31m" in done.stdout
    session = json_lines(headless.harnez("sessions", "--json").stdout)[0]["id"]
    shown = headless.harnez("sessions", "show", session)
    assert shown.returncode == 0, shown.stderr
    assert_no_raw_controls(shown.stdout)
    assert "> list\\x1b]0;pwned\\x07\\x1b[2J\\u202e the files" in shown.stdout


def test_a_hostile_stored_title_and_workspace_are_printed_escaped(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "ok"}]})
    assert headless.harnez("run", "--input", "hello").returncode == 0
    # A database written before titles were cleaned, or by another program.
    with sqlite3.connect(headless.database) as db:
        db.execute("UPDATE sessions SET title = ?", (f"evil{HOSTILE}title\nsecond line",))
    listed = headless.harnez("sessions")
    assert listed.returncode == 0, listed.stderr
    assert_no_raw_controls(listed.stdout)
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202etitle\\nsecond line" in listed.stdout
    assert len(listed.stdout.splitlines()) == 1
    shown = headless.harnez(
        "sessions", "show", json_lines(headless.harnez("sessions", "--json").stdout)[0]["id"]
    )
    assert_no_raw_controls(shown.stdout)
    as_json = headless.harnez("sessions", "--json")
    assert_no_raw_controls(as_json.stdout)
    assert json_lines(as_json.stdout)[0]["title"] == f"evil{HOSTILE}title\nsecond line"


def test_json_lines_escape_what_json_leaves_raw(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "a\x9b2Jb\u202ec\x7f"}]})
    done = headless.harnez("run", "--json", "--input", "hi")
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout)
    text = "".join(e["text"] for e in json_lines(done.stdout) if e["kind"] == "text-delta")
    assert text == "a\x9b2Jb\u202ec\x7f"


def test_invalid_utf8_on_stdin_and_in_input_becomes_replacement_characters(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add(
        {"reply": [{"text": "one"}]}, {"reply": [{"text": "two"}]}, {"reply": [{"text": "three"}]}
    )
    env = {**headless.env, "PYTHONIOENCODING": "utf-8:strict"}  # a locale that refuses bad bytes
    piped = subprocess.run(
        [str(HARNEZ), "run"],
        cwd=headless.path,
        env=env,
        input=b"bad \xff\xfe byte\n",
        capture_output=True,
        timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert "bad \ufffd\ufffd byte" in str(headless.model.requests[-1].body)
    argument = headless.harnez("run", "--input", os.fsdecode(b"arg \xff here"))
    assert argument.returncode == 0, argument.stderr
    assert "arg \ufffd here" in str(headless.model.requests[-1].body)
    chat = subprocess.run(
        [str(HARNEZ), "chat"],
        cwd=headless.path,
        env=env,
        input=b"line \xc3\n",
        capture_output=True,
        timeout=60,
    )
    assert chat.returncode == 0, chat.stderr
    assert "line \ufffd" in str(headless.model.requests[-1].body)
    shown = headless.harnez(
        "sessions", "show", json_lines(headless.harnez("sessions", "--json").stdout)[0]["id"]
    )
    assert "Traceback" not in shown.stderr and shown.returncode == 0


def test_a_lone_surrogate_in_tool_arguments_keeps_the_tool_request(headless: HeadlessWorkspace) -> None:
    (headless.path / "a\ufffdb.txt").write_text("found it\n")
    headless.model.add(
        {"reply": [{"tool_call": {"id": "c1", "name": "read", "arguments": '{"path": "a\\udcffb.txt"}'}}]},
        {"reply": [{"text": "done"}]},
    )
    done = headless.harnez("run", "--json", "--input", "read it")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    (requested,) = [e for e in events if e["kind"] == "tool-requested"]
    assert requested["arguments"] == {"path": "a\ufffdb.txt"}
    (completed,) = [e for e in events if e["kind"] == "tool-completed"]
    assert "found it" in completed["content"]


def test_a_lone_surrogate_in_streamed_text_is_kept_as_a_replacement_character(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add({"reply": [{"text": "broken \udcff byte"}]})
    done = headless.harnez("run", "--json", "--input", "hi")
    assert done.returncode == 0, done.stderr
    text = "".join(e["text"] for e in json_lines(done.stdout) if e["kind"] == "text-delta")
    assert text == "broken \ufffd byte"


USAGE_ERRORS = {
    "unknown provider": (["run", "--model", "nope/x", "--input", "hi"], "unknown provider 'nope'"),
    "missing key": (["run", "--input", "hi"], "HARNEZ_TEST_KEY"),
    "blank prompt": (["run", "--input", "  \n "], "Nothing to run"),
    "negative timeout": (["run", "--timeout", "-1", "--input", "hi"], "--timeout"),
    "timeout not a number": (["run", "--timeout", "nan", "--input", "hi"], "--timeout"),
    "zero steps": (["run", "--max-steps", "0", "--input", "hi"], "--max-steps"),
    "resume with no database": (["run", "--resume", "latest", "--input", "hi"], "No saved session"),
    "chat resume with no database": (["chat", "--resume", "latest"], "No saved session"),
    "resume by id with no database": (["run", "--resume", "abc123", "--input", "hi"], "abc123"),
    "chat with an unknown provider": (["chat", "--model", "nope/x"], "unknown provider 'nope'"),
}


@pytest.mark.parametrize("case", USAGE_ERRORS)
def test_usage_errors_exit_2_before_anything_is_created(headless: HeadlessWorkspace, case: str) -> None:
    args, said = USAGE_ERRORS[case]
    if case == "missing key":
        headless.env.pop("HARNEZ_TEST_KEY")
    done = headless.harnez(*args, input="")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not headless.database.exists(), "a usage error created the database"
    assert headless.model.requests == []


def test_a_failed_json_run_also_says_why_on_stderr(headless: HeadlessWorkspace) -> None:
    headless.model.add({"status": 401})
    done = headless.harnez("run", "--json", "--input", "hi")
    assert done.returncode == 1
    assert finished(json_lines(done.stdout))["stop"] == "failed"
    assert "task failed:" in done.stderr and "HARNEZ_TEST_KEY" in done.stderr
