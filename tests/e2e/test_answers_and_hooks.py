"""`harnez run --output-schema` and hooks as real processes over loopback: answers that validate, hooks
that send the task back, crash or wait for the person's trust."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.e2e.helpers import HeadlessWorkspace, finished, json_lines

SCHEMA = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string"}},
        "lines": {"type": "integer", "minimum": 0},
    },
    "required": ["files", "lines"],
    "additionalProperties": False,
}


def answer_turn(call_id: str, arguments: dict) -> dict:
    return {"reply": [{"tool_call": {"name": "answer", "id": call_id, "arguments": arguments}}]}


def write_schema(headless: HeadlessWorkspace, schema: object = SCHEMA) -> Path:
    path = headless.path.parent / "answer.schema.json"
    path.write_text(json.dumps(schema))
    return path


def add_settings(path: Path, **values: object) -> None:
    """Add keys to a settings file (created when missing)."""
    settings = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**settings, **values}))


def test_run_json_with_an_output_schema_streams_an_answer_that_validates(headless: HeadlessWorkspace) -> None:
    (headless.path / "a.py").write_text("x = 1\ny = 2\n")
    headless.model.add(
        {"reply": [{"tool_call": {"id": "c1", "name": "read", "arguments": {"path": "a.py"}}}]},
        answer_turn("c2", {"files": ["a.py"], "lines": "two"}),
        answer_turn("c3", {"files": ["a.py"], "lines": 2}),
    )
    schema = write_schema(headless)
    done = headless.harnez("run", "--json", "--output-schema", str(schema), "count the lines")

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)  # an event stream only: no bare answer line
    assert all("kind" in event for event in events)
    (answered,) = [e for e in events if e["kind"] == "answered"]
    jsonschema.validate(answered["answer"], SCHEMA)
    assert answered["answer"] == {"files": ["a.py"], "lines": 2} and answered["call_id"] == "c3"
    (started,) = [e for e in events if e["kind"] == "started"]
    assert "answer" in started["tools"]
    rejected = [e for e in events if e["kind"] == "tool-completed" and e["call_id"] == "c2"]
    assert rejected[0]["is_error"] and "$.lines: 'two' is not of type 'integer'" in rejected[0]["content"]
    assert finished(events)["stop"] == "completed"
    assert [e["kind"] for e in events].index("answered") < [e["kind"] for e in events].index("finished")


def test_run_without_json_prints_the_answer_alone_after_one_nudge(headless: HeadlessWorkspace) -> None:
    headless.model.add(
        {"reply": [{"text": "There are 2 lines in a.py."}]},
        answer_turn("c1", {"files": ["a.py"], "lines": 2}),
    )
    done = headless.harnez("run", "--output-schema", str(write_schema(headless)), "count the lines")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"files": ["a.py"], "lines": 2}
    assert done.stdout.count("\n") == 1 and "There are 2 lines" not in done.stdout
    assert "told once more to answer through the tool" in done.stderr
    assert headless.model.requests[1].body["tool_choice"] == {
        "type": "function",
        "function": {"name": "answer"},
    }


def test_no_valid_answer_exits_non_zero_with_a_message_and_prints_nothing(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add({"reply": [{"text": "2 lines."}]}, {"reply": [{"text": "I said 2 lines."}]})
    done = headless.harnez("run", "--output-schema", str(write_schema(headless)), "count the lines")

    assert done.returncode == 1 and done.stdout == ""
    assert (
        "harnez: task failed: The model ended without a valid answer through the `answer` tool" in done.stderr
    )


def test_a_bad_schema_file_is_one_line_and_exit_2_before_anything_opens(headless: HeadlessWorkspace) -> None:
    for content, says in (
        (
            "{not json",
            "is not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2",
        ),
        (
            '{"type": "strin"}',
            "is not a valid JSON Schema: 'strin' is not valid under any of the given schemas",
        ),
        ("[1, 2]", "must be a JSON object (a JSON Schema), not a list."),
    ):
        schema = headless.path.parent / "bad.json"
        schema.write_text(content)
        done = headless.harnez("run", "--output-schema", str(schema), "go")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"harnez: The output schema {schema} ") and says in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    missing = headless.harnez("run", "--output-schema", "nowhere.json", "go")
    assert missing.returncode == 2 and "cannot be read (No such file or directory)" in missing.stderr
    assert not headless.database.exists() and not headless.model.requests


def test_a_stop_hook_sends_the_run_back_once_then_lets_it_finish(
    headless: HeadlessWorkspace, isolated_home: Path
) -> None:
    mark = headless.path.parent / "checked"
    hook = f"[ -e {mark} ] && exit 0; touch {mark}; echo 'the changelog is missing' >&2; exit 2"
    add_settings(isolated_home / "settings.json", hooks={"stop": [{"command": hook}]})
    headless.model.add({"reply": [{"text": "Done."}]}, {"reply": [{"text": "Changelog added; done."}]})
    done = headless.harnez("run", "--json", "ship it")

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    ran = [(e["decision"], e["reason"]) for e in events if e["kind"] == "hook-ran"]
    assert ran == [("block", "the changelog is missing"), ("allow", None)]
    kinds = [e["kind"] for e in events]
    assert kinds.count("turn-started") == 2 and finished(events)["stop"] == "completed"
    assert kinds.index("hook-ran") < [i for i, k in enumerate(kinds) if k == "turn-started"][1]


def test_a_crashing_hook_ends_the_run(headless: HeadlessWorkspace, isolated_home: Path) -> None:
    add_settings(isolated_home / "settings.json", hooks={"stop": [{"command": "exit 3"}]})
    headless.model.add({"reply": [{"text": "Done."}]})
    done = headless.harnez("run", "--json", "go")

    assert done.returncode == 1
    events = json_lines(done.stdout)
    (failed,) = [e for e in events if e["kind"] == "hook-failed"]
    assert failed["exit_code"] == 3 and failed["hook"] == "stop"
    assert finished(events)["stop"] == "failed" and finished(events)["error"] == failed["message"]
    assert "harnez: task failed: The stop hook `exit 3` failed with exit code 3" in done.stderr


def test_project_hooks_run_only_once_trusted_and_ask_again_when_they_change(
    headless: HeadlessWorkspace, isolated_home: Path
) -> None:
    ran = headless.path.parent / "project-hook-ran"
    project_file = headless.path / ".harnez" / "settings.json"
    add_settings(project_file, hooks={"prompt_submit": [{"command": f"echo once >> {ran}"}]})
    headless.model.add(*[{"reply": [{"text": "ok"}]}] * 4)

    untrusted = headless.harnez("run", "--json", "hello")
    assert untrusted.returncode == 0, untrusted.stderr
    assert not ran.exists()
    events = json_lines(untrusted.stdout)
    (warned,) = [e for e in events if e["kind"] == "warning" and e["code"] == "untrusted-hooks"]
    assert str(project_file) in warned["message"] and "--trust-hooks" in warned["message"]
    assert not (isolated_home / "trusted-hooks.json").exists()

    trusted = headless.harnez("run", "--trust-hooks", "hello")
    assert trusted.returncode == 0, trusted.stderr
    assert ran.read_text() == "once\n"
    assert f"harnez: note: trusted the hooks of {project_file}: prompt_submit: echo once" in trusted.stderr
    assert headless.harnez("run", "hello again").returncode == 0  # remembered: no flag needed
    assert ran.read_text() == "once\nonce\n"

    add_settings(project_file, hooks={"prompt_submit": [{"command": f"echo changed >> {ran}"}]})
    changed = headless.harnez("run", "hello")
    assert changed.returncode == 0 and ran.read_text() == "once\nonce\n"
    assert "are not trusted yet, so they did not run" in changed.stderr
