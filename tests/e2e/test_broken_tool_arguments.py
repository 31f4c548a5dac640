"""A tool call whose arguments are broken JSON: every reader sees what the model actually sent."""

from __future__ import annotations

import sqlite3

from tests.e2e.helpers import HeadlessWorkspace, finished, json_lines

BROKEN = '{"path": "notes.txt", "old_string": "x = 1'


def _broken_call(arguments: str) -> list[dict]:
    return [
        {"reply": [{"tool_call": {"id": "c1", "name": "edit", "arguments": arguments}}]},
        {"reply": [{"text": "Sorry, I will send JSON."}]},
    ]


def test_the_requested_call_carries_the_raw_text_and_why_it_failed_in_run_json_and_events(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add(*_broken_call(BROKEN))
    done = headless.harnez("run", "--json", "--input", "edit notes.txt")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    (requested,) = [e for e in events if e["kind"] == "tool-requested"]
    assert requested["arguments"] == {} and requested["raw_arguments"] == BROKEN
    assert requested["arguments_error"] == (
        "the tool arguments are not valid JSON (Unterminated string starting at: line 1 column 37)"
    )
    (completed,) = [e for e in events if e["kind"] == "tool-completed"]
    assert completed["is_error"] and "not valid JSON" in completed["content"]
    stored = json_lines(headless.harnez("events", "--session", events[0]["session"]).stdout)
    assert [e for e in stored if e["kind"] == "tool-requested"] == [requested]
    transcript = headless.harnez("sessions", "show", events[0]["session"]).stdout
    assert f"[tool] edit {BROKEN} (the tool arguments are not valid JSON" in transcript
    assert finished(events)["stop"] == "completed"


def test_huge_broken_arguments_are_kept_cut_with_a_marker(headless: HeadlessWorkspace) -> None:
    huge = '{"path": "notes.txt", "content": "' + "y" * 100_000
    headless.model.add(*_broken_call(huge))
    done = headless.harnez("run", "--json", "--input", "write notes.txt")
    (requested,) = [e for e in json_lines(done.stdout) if e["kind"] == "tool-requested"]
    kept = 4000
    assert requested["raw_arguments"] == f"{huge[:kept]} … [cut: {len(huge) - kept:,} more characters]"
    with sqlite3.connect(headless.database) as db:
        (size,) = db.execute("SELECT length(payload) FROM events WHERE kind = 'tool-requested'").fetchone()
    assert size < 6000  # the stored event, not the 100 kB the model sent
