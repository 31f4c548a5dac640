"""Record kinds, fields and versions each harness writes that the fixtures lack, written small and by
hand from the shapes in each harness's own source, and read the way a person does: `harnez read
--summary --json`, `harnez read --json` and `harnez import` (then `harnez sessions show --json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.importers.conftest import harnez_in


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read(tmp_path: Path, source: Path, *flags: str) -> list[dict[str, Any]]:
    """`harnez read SOURCE --json [FLAGS]`: one object per session."""
    shown = harnez_in(tmp_path)("read", str(source), "--json", *flags)
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]


def imported_events(tmp_path: Path, home: Path) -> list[dict[str, Any]]:
    """`harnez import --home HOME`, then the stored events of the one session it imported."""
    workspace = tmp_path / "work"
    workspace.mkdir(exist_ok=True)
    harnez = harnez_in(workspace)
    done = harnez("import", "--home", str(home), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 1, done.stdout
    listed = harnez("sessions", "--all", "--json")
    [session] = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    shown = harnez("sessions", "show", session["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]


# OpenCode -------------------------------------------------------------------------------------------


def test_an_opencode_command_run_as_a_subtask_keeps_its_prompt(tmp_path: Path) -> None:
    """A command run as a sub-agent's task (`subtask: true`) writes a user message whose only part is
    `subtask` (its `prompt` the expanded template); the parent's reply runs the `task` tool."""
    home = tmp_path / "home"
    store = home / ".local" / "share" / "opencode" / "storage"
    write_json(
        store / "session" / "proj" / "ses_1.json",
        {"id": "ses_1", "title": "Review", "directory": "/w", "time": {"created": 1000, "updated": 3000}},
    )
    write_json(
        store / "message" / "ses_1" / "msg_1.json",
        {"id": "msg_1", "role": "user", "sessionID": "ses_1", "time": {"created": 1000}},
    )
    subtask = {
        "id": "prt_1",
        "type": "subtask",
        "agent": "general",
        "description": "review the diff",
        "command": "review",
        "prompt": "Review the staged changes for bugs.",
    }
    write_json(store / "part" / "msg_1" / "prt_1.json", subtask)
    write_json(
        store / "message" / "ses_1" / "msg_2.json",
        {
            "id": "msg_2",
            "role": "assistant",
            "sessionID": "ses_1",
            "providerID": "p",
            "modelID": "m",
            "time": {"created": 2000, "completed": 3000},
        },
    )
    task = {
        "id": "prt_2",
        "type": "tool",
        "callID": "call_1",
        "tool": "task",
        "state": {
            "status": "completed",
            "input": {"prompt": "Review the staged changes for bugs.", "subagent_type": "general"},
            "output": "No bugs found.",
        },
    }
    write_json(store / "part" / "msg_2" / "prt_2.json", task)
    write_json(store / "part" / "msg_2" / "prt_3.json", {"id": "prt_3", "type": "step-finish", "tokens": {}})

    [summary] = read(tmp_path, store, "--summary")
    assert (summary["user_messages"], summary["tool_calls"], summary["tool_results"]) == (1, 1, 1)
    [session] = read(tmp_path, store)
    [prompt] = [e for e in session["entries"] if e["type"] == "user"]
    assert (prompt["kind"], prompt["text"]) == ("prompt", "Review the staged changes for bugs.")
    said = [e["text"] for e in imported_events(tmp_path, home) if e["kind"] == "user-message"]
    assert said == ["Review the staged changes for bugs."]
