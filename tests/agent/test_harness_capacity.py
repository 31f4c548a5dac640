"""`--max-tasks` counts the tasks at work: one that has finished and is only recording its end (its
stream draining, its session's status being written) leaves room for the next at once."""

from __future__ import annotations

from pathlib import Path

from harnez.events import Finished
from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, make_settings


async def test_a_task_whose_end_a_client_has_read_no_longer_counts_toward_the_limit(
    scripted_model: ScriptedModel, open_server, tmp_path: Path
) -> None:
    server = await open_server(make_settings(scripted_model))
    host = await HarnessHost(server, tmp_path / "workspaces", max_tasks=1).open()
    scripted_model.add(answer("one"), answer("two"))
    first, _ = await host.start(TaskRequest(text="one", input_items=[]))
    async for event in server.subscribe(first.session_id, first.start_seq):
        if isinstance(event.body, Finished):
            break
    assert first.session_id in server.chains.sessions(), "read while its end is still being recorded"

    second, _ = await host.start(TaskRequest(text="two", input_items=[]))  # at once: no 429

    assert (await server.wait(second.session_id)).stop == "completed"
