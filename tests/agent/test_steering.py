"""Steering lands at the running task's next model turn; a queued prompt starts its own task after."""

from __future__ import annotations

from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, first_event, make_settings, tool_call, user_texts


async def test_steering_reaches_the_next_turn_and_a_queued_prompt_the_next_task(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        {**tool_call("read", "r1", path="a.txt"), "hold": "first"},
        answer("Read a.txt, and noted B."),
        answer("Queued one done."),
    )
    server = await open_server(make_settings(scripted_model))
    session = server.create_session(workspace)
    task = await server.submit(session.id, "read a")
    await first_event(server, session.id, lambda e: e.kind == "turn-started")
    assert await server.submit(session.id, "also consider B", steer=True) == task
    queued = await server.submit(session.id, "queued prompt")
    assert queued != task
    scripted_model.release("first")
    await server.wait(session.id)

    first, second, third = (r.body for r in scripted_model.requests)
    assert user_texts(first) == ["read a"]
    assert user_texts(second) == ["read a", "also consider B"]
    assert second["messages"][-2]["role"] == "tool" and second["messages"][-1]["role"] == "user"
    assert user_texts(third) == ["read a", "also consider B", "queued prompt"]
    (delivered,) = await events(server, session.id, "steering-delivered")
    assert delivered.body.to_payload() == {"text": "also consider B"} and delivered.task == task
    stops = [(e.task, e.body.stop) for e in await events(server, session.id, "finished")]
    assert stops == [(task, "completed"), (queued, "completed")]


async def test_steering_that_arrives_as_the_model_finishes_still_gets_a_turn(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(
        {**answer("Done, I think."), "hold": "end", "hold_after_chunks": 3}, answer("Now with C as well.")
    )
    server = await open_server(make_settings(scripted_model))
    session = server.create_session(workspace)
    await server.submit(session.id, "do it")
    await first_event(server, session.id, lambda e: e.kind == "text-delta")
    await server.submit(session.id, "and C", steer=True)
    scripted_model.release("end")
    outcome = await server.wait(session.id)
    assert outcome is not None and outcome.turns == 2
    assert user_texts(scripted_model.requests[-1].body) == ["do it", "and C"]
