"""Inputs larger than the model's window: a prompt is refused before anything is sent, tool-call
arguments are cut in the conversation with a warning — never silently summarised away."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call, user_texts

WINDOW = 8000
"""Tokens: about 32,000 characters, of which a prompt may take roughly 20,000 here."""


async def test_a_prompt_larger_than_the_window_is_refused_and_not_kept(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("A short answer."))
    server = await open_server(make_settings(scripted_model, window=WINDOW))
    session_id, outcome = await run_task(server, workspace, "explain this log: " + "error line\n" * 5000)
    assert outcome.stop == "failed"
    assert "was not sent" in outcome.error and "window of 8,000 tokens" in outcome.error
    assert scripted_model.requests == [], "nothing may reach the model, not even a summary request"
    assert await events(server, session_id, "compacted") == []
    _, second = await run_task(server, workspace, "and now a short question", session_id)
    assert second.stop == "completed"
    (request,) = scripted_model.requests
    assert user_texts(request.body) == ["and now a short question"]


async def test_an_attached_file_counts_towards_the_prompt(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "dump.sql").write_text("INSERT INTO t VALUES (1);\n" * 2000)
    server = await open_server(make_settings(scripted_model, window=WINDOW))
    _, outcome = await run_task(server, workspace, "what does @dump.sql insert?")
    assert outcome.stop == "failed" and "attached files included" in outcome.error
    assert scripted_model.requests == []


async def test_a_prompt_that_fits_is_sent_whole(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("Read it."))
    server = await open_server(make_settings(scripted_model, window=WINDOW))
    prompt = "explain this log: " + "error line\n" * 1000
    _, outcome = await run_task(server, workspace, prompt)
    assert outcome.stop == "completed"
    assert user_texts(scripted_model.requests[0].body) == [prompt]


async def test_huge_tool_arguments_are_cut_in_the_conversation_with_a_warning(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    content = "".join(f"row {n}\n" for n in range(12_000))
    scripted_model.add(tool_call("write", "w1", path="table.txt", content=content), answer("Written."))
    server = await open_server(make_settings(scripted_model, window=WINDOW), approve="allow")
    session_id, outcome = await run_task(server, workspace, "write the table")
    assert outcome.stop == "completed"
    assert (workspace / "table.txt").read_text() == content, "the tool must receive the arguments whole"
    (requested,) = await events(server, session_id, "tool-requested")
    assert requested.body.arguments["content"] == content
    (warning,) = [
        e for e in await events(server, session_id, "warning") if e.body.code == "truncated-for-window"
    ]
    assert "write call w1" in warning.body.message and "received them whole" in warning.body.message
    second = scripted_model.requests[1].body
    (sent,) = [
        json.loads(call["function"]["arguments"])
        for message in second["messages"]
        for call in message.get("tool_calls") or []
    ]
    assert sent["path"] == "table.txt" and sent["content"].startswith("row 0\nrow 1\n")
    assert "characters cut here to fit the model's window" in sent["content"]
    assert (
        len(json.dumps(sent, ensure_ascii=False)) <= WINDOW
    )  # a quarter of the window, 4 characters a token
    assert await events(server, session_id, "compacted") == []
