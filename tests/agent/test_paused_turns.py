"""A task on Anthropic whose model call is paused (`pause_turn`, a long server-tool turn) reads as one
answer: one model turn, its text streamed on, the paused blocks sent back in the next prompt's request."""

from __future__ import annotations

from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, kinds, make_settings, run_task
from tests.wires.sse_bodies import (
    block,
    json_delta,
    message_end,
    message_start,
    raw,
    search_result,
    server_tool_use,
)
from tests.wires.sse_bodies import (
    events as sse,
)


def text(index: int, words: str) -> list[dict[str, object]]:
    return block(index, {"type": "text", "text": ""}, {"type": "text_delta", "text": words})


PAUSED = raw(
    sse(
        message_start(),
        *text(0, "Let me look. "),
        *block(1, server_tool_use(), json_delta('{"query": "x"}')),
        *block(2, search_result()),
        *message_end("pause_turn"),
        named=True,
    )
)
RESUMED = raw(sse(message_start(), *text(0, "Found it."), *message_end(), named=True))


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
