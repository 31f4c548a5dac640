"""What stands between a prompt and its first words: one HTTP client per provider, words emitted at once."""

from __future__ import annotations

from pathlib import Path

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task

WORDS = [f"word{index} " for index in range(40)]


async def test_every_task_of_a_server_reuses_one_connection_and_closing_the_server_closes_it(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add(answer("First."), answer("Second."), answer("Third, elsewhere."))
    settings = make_settings(scripted_model)
    work = AgentWork(settings, approve="deny")
    server = await Server.open(db_path, settings, work)
    session_id, first = await run_task(server, workspace, "one")
    _, second = await run_task(server, workspace, "two", session_id)
    _, third = await run_task(server, workspace, "three in another session")
    assert first.stop == second.stop == third.stop == "completed"
    peers = {request.peer for request in scripted_model.requests}
    assert len(scripted_model.requests) == 3 and len(peers) == 1  # one kept-alive connection
    model = work.resolve(None)
    client = work.clients.client(model.endpoint, settings.retry)
    assert len(work.clients) == 1 and not client.is_closed
    await server.close()
    assert client.is_closed and len(work.clients) == 0


async def test_the_first_words_of_an_answer_are_emitted_at_once_and_later_ones_joined(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": WORDS}], "usage": {"input": 10, "output": 40}})
    server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "count to forty")
    assert outcome.stop == "completed"
    deltas = [event.body.text for event in await events(server, session_id, "text-delta")]
    assert deltas[0] == WORDS[0]  # not held back to be joined with what follows
    assert "".join(deltas) == "".join(WORDS) and len(deltas) < len(WORDS)
