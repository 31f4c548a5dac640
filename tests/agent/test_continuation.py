"""A run killed mid-tool-call is continued with a new task, on another wire, with a valid history."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

from harnez.agent.context import INTERRUPTED, History, repair
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import AssistantMessage, ToolCall, ToolResult, UserMessage
from tests.agent.helpers import answer, events, kill_quietly, make_settings, tool_call_ids, tool_outputs

ROOT = Path(__file__).resolve().parents[2]


def test_repair_answers_every_dangling_call_in_place_and_drops_orphans() -> None:
    calls = (ToolCall("a", "read", {}), ToolCall("b", "shell", {}))
    items = [
        UserMessage("go"),
        AssistantMessage("", "", calls),
        ToolResult("a", "done"),
        ToolResult("zz", "orphan"),
        UserMessage("next"),
    ]
    repaired, added = repair(items)
    assert added == 1
    assert repaired == [
        UserMessage("go"),
        AssistantMessage("", "", calls),
        ToolResult("a", "done"),
        ToolResult("b", INTERRUPTED, is_error=True),
        UserMessage("next"),
    ]


async def test_a_run_killed_mid_tool_call_continues_on_another_wire(
    scripted_model: ScriptedModel, open_server, workspace: Path, db_path: Path
) -> None:
    command = "echo $$ > shell.pid; exec sleep 30"
    scripted_model.add(
        {
            "reply": [
                {"text": "Let me wait."},
                {"reasoning": "thinking hard", "signature": "sig-x"},
                {"tool_call": {"name": "shell", "id": "k1", "arguments": {"command": command}}},
            ],
            "path": "/responses",
            "usage": {"input": 50, "output": 5},
        },
        answer("Continued on anthropic.", path="/messages"),
    )
    first = make_settings(scripted_model, "openai-responses", permissions={"tools": {"shell": "allow"}})
    db_path.parent.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.agent.task_process",
            str(db_path),
            str(workspace),
            first.model_dump_json(exclude_defaults=True),
            "wait for it",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    pid_file = workspace / "shell.pid"
    try:
        session_id = (await asyncio.to_thread(child.stdout.readline)).strip()  # type: ignore[union-attr]
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        child.kill()
        child.wait(10)
        if pid_file.exists() and pid_file.read_text().strip():
            kill_quietly(int(pid_file.read_text()))

    server: Server = await open_server(make_settings(scripted_model, "anthropic-messages"))
    (interrupted,) = await events(server, session_id, "finished")
    assert interrupted.body.stop == "interrupted"
    await server.submit(session_id, "carry on")
    await server.wait(session_id)
    (_, finished) = await events(server, session_id, "finished")
    assert finished.body.stop == "completed"
    body = scripted_model.requests[-1].body
    assert scripted_model.requests[-1].path.endswith("/messages")
    assert tool_call_ids(body) == ["k1"]
    assert tool_outputs(body)["k1"] == INTERRUPTED
    assert "sig-x" not in str(body)
    codes = [e.body.code for e in await events(server, session_id, "warning")]
    assert "opaque-items-dropped" in codes
    record = await server.get_session(session_id)
    reloaded = await History.load(server.store, record.num, None, "openai-chat")
    assert reloaded.repaired == 0 and reloaded.items[-1] == AssistantMessage("Continued on anthropic.")
