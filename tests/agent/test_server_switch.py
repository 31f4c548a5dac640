"""A session moved (`/model`) to another server of the same wire goes on, told once per task what of
its history that server is not sent."""

from __future__ import annotations

from pathlib import Path

from harnez.settings import ProviderSettings
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call


async def test_a_task_on_another_server_warns_once_that_the_first_servers_items_were_left_out(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    """The first server's encrypted reasoning is left out of both requests of the next task's tool
    loop on the second server, and the task says so once (`opaque-items-dropped`), as for a wire
    switch."""
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(
        {"reply": [{"reasoning": "ponder", "signature": "SIG-1"}, {"text": "Hi."}], "usage": {"input": 9}}
    )
    settings = make_settings(scripted_model, "openai-responses")
    with ScriptedModel() as other:
        other.add(tool_call("read", "r1", path="a.txt"), answer("It says alpha."))
        elsewhere = ProviderSettings(wire="openai-responses", base_url=other.base_url("openai-responses"))
        settings = settings.model_copy(update={"providers": {**settings.providers, "azure": elsewhere}})
        server = await open_server(settings)
        session_id, outcome = await run_task(server, workspace, "hello")
        assert outcome.stop == "completed"
        await server.submit(session_id, "what does a.txt say?", model="azure/test-model")
        assert (await server.wait(session_id)).stop == "completed"
        bodies = [r.body for r in other.requests]
    assert len(bodies) == 2 and all("SIG-1" not in str(body) for body in bodies)
    warnings = [e.body for e in await events(server, session_id, "warning")]
    dropped = [w for w in warnings if w.code == "opaque-items-dropped"]
    assert len(dropped) == 1, warnings
    assert "given by another server" in dropped[0].message
    assert "SIG-1" in str(dropped[0].raw)  # the item left out, kept in the event
