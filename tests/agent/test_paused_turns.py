"""A task on Anthropic whose model call is paused (`pause_turn`, a long server-tool turn) reads as one
answer: one model turn, its text streamed on, the paused blocks sent back in the next prompt's request."""

from __future__ import annotations

from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, kinds, make_settings, run_task
from tests.wires.sse_bodies import PAUSED, RESUMED


async def test_a_paused_turn_is_one_model_turn_of_one_answer(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(PAUSED, RESUMED, answer("Again.", path="/messages"))
    server = await open_server(make_settings(scripted_model, "anthropic-messages"))
    session_id, outcome = await run_task(server, workspace, "search it")
    assert outcome.stop == "completed" and outcome.turns == 1
    assert (await kinds(server, session_id)).count("turn-started") == 1
    streamed = "".join(e.body.text for e in await events(server, session_id, "text-delta"))
    assert streamed == "Let me look. Found it."
    (completed,) = await events(server, session_id, "turn-completed")
    assert completed.body.stop_reason == "end_turn"
    await run_task(server, workspace, "again", session_id)
    history = scripted_model.requests[-1].body["messages"]
    assert [b["type"] for b in history[1]["content"]] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
