"""A finished task's context records keep no copy of the text its events hold, and read back whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harnez.agent.context import History
from harnez.store.context import unpack
from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import AssistantMessage, ToolResult, UserMessage
from tests.agent.helpers import answer, make_settings, run_task, tool_call, tool_outputs


async def test_records_point_at_the_events_and_the_next_request_has_every_text(
    scripted_model: ScriptedModel, open_server, workspace: Path, db_path: Path
) -> None:
    (workspace / "notes.txt").write_text("the walrus hums at noon\n")
    scripted_model.add(tool_call("read", "r1", path="notes.txt"), answer("It hums at noon."), answer("Yes."))
    server = await open_server(make_settings(scripted_model))
    session_id, _ = await run_task(server, workspace, "what does the walrus do?")
    with sqlite3.connect(db_path) as conn:
        bodies = [unpack(row[0]) for row in conn.execute("SELECT body FROM context_records ORDER BY id")]
    shared = {
        item["type"]: item for item in bodies if isinstance(item.get("text", item.get("content")), dict)
    }
    assert set(shared) == {"user", "assistant", "tool_result"}, bodies

    await run_task(server, workspace, "really?", session_id)
    body = scripted_model.requests[-1].body
    assert "what does the walrus do?" in str(body) and "It hums at noon." in str(body)
    assert "the walrus hums at noon" in tool_outputs(body)["r1"]
    record = await server.get_session(session_id)
    items = (await History.load(server.store, record.num, None, "openai-chat")).items
    assert items[0] == UserMessage("what does the walrus do?")
    assert isinstance(items[2], ToolResult) and "walrus hums" in items[2].content
    assert items[3:] == [
        AssistantMessage("It hums at noon."),
        UserMessage("really?"),
        AssistantMessage("Yes."),
    ]
