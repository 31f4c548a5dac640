"""A sub-agent started inside a UHP harness task works under the harness too: its system prompt, skills,
disabled tools, MCP servers and turn budget reach the child, unless the agent's file says otherwise
(its `tools`, its `model`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.server import Server
from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.testing.scripted_model import RecordedRequest, ScriptedModel
from tests.agent.agents_support import delegate, only_child, published_tools, system_text, write_agent
from tests.agent.helpers import answer, events, make_settings, tool_call
from tests.http.test_serve_mcp import McpServer, _mcp_server

SKILL = {
    "name": "vault-manual",
    "files": [{"path": "SKILL.md", "content": "---\nname: vault-manual\ndescription: Opens vaults.\n---\n"}],
}


@pytest.fixture
def mcp() -> Iterator[McpServer]:
    yield from _mcp_server()


async def _harness_task(server: Server, tmp_path: Path, mcp: McpServer) -> str:
    """One task of a harness with every option a child could inherit; its session id, once ended."""
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create(
        {
            "base": "harnez",
            "system_prompt": "Speak like a PLANTED-PIRATE.",
            "skills": [SKILL],
            "disabled_tools": ["shell"],
            "max_step": 2,
            "mcp_servers": [{"name": "vault", "url": mcp.url}],
        }
    )
    row, _ = await host.start(TaskRequest(text="open it", input_items=[], harness_id=harness.id))
    await server.wait(row.session_id)
    return row.session_id


def _under_the_harness(request: RecordedRequest) -> None:
    """A child's model request made under `_harness_task`'s harness: its prompt, skill, MCP tools,
    no blocked shell, and no `delegate` (children do not delegate)."""
    assert "PLANTED-PIRATE" in system_text(request)
    assert "vault-manual: Opens vaults." in system_text(request)
    offered = published_tools(request)
    assert "mcp__vault__lookup" in offered and "shell" not in offered and "delegate" not in offered


async def test_a_sub_agent_inherits_the_harness_prompt_skills_tools_mcp_and_turn_budget(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, isolated_home: Path, mcp: McpServer
) -> None:
    write_agent(isolated_home / "agents", "helper", "name: helper\ndescription: Helps.")
    scripted_model.add(
        delegate("d1", "helper", "find the code"),
        tool_call("read", "c1", path="a.txt"),
        tool_call("read", "c2", path="b.txt"),
        answer("The helper ran out of turns."),
    )
    server = await open_server(make_settings(scripted_model))

    parent = await _harness_task(server, tmp_path, mcp)

    _under_the_harness(scripted_model.requests[1])
    child = await only_child(server, parent)
    (finished,) = await events(server, child, "finished")
    assert (finished.body.stop, finished.body.turns) == ("incomplete", 2), "held to the harness's max_step"
    assert len(scripted_model.requests) == 4


async def test_an_agent_with_its_own_tools_gets_no_mcp_server_it_does_not_use_even_resumed(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, isolated_home: Path, mcp: McpServer
) -> None:
    write_agent(isolated_home / "agents", "reader", "name: reader\ndescription: Reads.\ntools: read")
    scripted_model.add(delegate("d1", "reader", "read it"), answer("read"), answer("done"), answer("again"))
    server = await open_server(make_settings(scripted_model))

    child = await only_child(server, await _harness_task(server, tmp_path, mcp))
    await server.submit(child, "read it again")  # continued on its own, later
    await server.wait(child)

    for request in (scripted_model.requests[1], scripted_model.requests[3]):
        assert published_tools(request) == ["read"]
        assert "PLANTED-PIRATE" in system_text(request)
    assert mcp.methods().count("initialize") == 1, "only the parent connected to the MCP server"


async def test_a_sub_agent_session_resumed_later_runs_under_its_parents_harness_again(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, isolated_home: Path, mcp: McpServer
) -> None:
    # A child session continued on its own (the TUI's "Open the reviewer session", `harnez run
    # --resume`) is no HTTP session, so it had no harness: it ran with none of what its delegation
    # inherited — the operator's prompt, skills, blocked tools, MCP servers, turn budget.
    write_agent(isolated_home / "agents", "helper", "name: helper\ndescription: Helps.")
    scripted_model.add(delegate("d1", "helper", "find the code"), answer("Found it."), answer("Found."))
    scripted_model.add(tool_call("read", "c1", path="a.txt"), tool_call("read", "c2", path="b.txt"))
    server = await open_server(make_settings(scripted_model))
    parent = await _harness_task(server, tmp_path, mcp)
    child = await only_child(server, parent)

    await server.submit(child, "look once more")
    await server.wait(child)

    _under_the_harness(scripted_model.requests[3])
    (_, finished) = await events(server, child, "finished")
    assert (finished.body.stop, finished.body.turns) == ("incomplete", 2), "held to the harness's max_step"
    assert len(scripted_model.requests) == 5
