"""An agent file's `tools` may name MCP tools: one by its whole `mcp__<server>__<tool>` name (even when
it is offered cut to 64 characters and tagged), all of a server's as `mcp__<server>__*`; a name that
none of the task's MCP tools has is a warning naming it. Real MCP servers on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.agents.definitions import AgentFileError, read_agent
from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.testing.scripted_model import ScriptedModel
from harnez.tools.mcp import public_name
from tests.agent.agents_support import delegate, published_tools, requests_with, write_agent
from tests.agent.helpers import answer, events, make_settings
from tests.agent.test_mcp_long_names import EAST, WEST  # whole names past 64 characters
from tests.http.test_serve_mcp import McpServer, _mcp_server


@pytest.fixture
def servers() -> Iterator[dict[str, McpServer]]:
    with contextlib.ExitStack() as stack:
        found = {
            name: stack.enter_context(contextlib.contextmanager(_mcp_server)()) for name in ("vault", "quiet")
        }
        found["vault"].tools = [EAST, WEST, "peek"]
        found["quiet"].tools = ["lookup", "jammed"]
        yield found


async def test_an_agent_gets_the_mcp_tools_and_servers_its_file_names_by_their_whole_names(
    scripted_model: ScriptedModel,
    open_server,
    tmp_path: Path,
    isolated_home: Path,
    servers: dict[str, McpServer],
) -> None:
    tools = f"read, mcp__vault__{WEST}, mcp__quiet__*, mcp__vault__nosuch"
    path = write_agent(
        isolated_home / "agents", "doorman", f"name: doorman\ndescription: Reads.\ntools: {tools}"
    )
    server = await open_server(make_settings(scripted_model), approve="allow")
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    entries = [{"name": name, "url": mcp.url} for name, mcp in servers.items()]
    harness = await host.harnesses.create({"base": "harnez", "mcp_servers": entries})

    scripted_model.add(delegate("d1", "doorman", "read the west codes"), answer("Read."), answer("Done."))
    row, _ = await host.start(TaskRequest(text="codes", input_items=[], harness_id=harness.id))
    await server.wait(row.session_id)

    west = public_name("vault", WEST)
    assert west in published_tools(scripted_model.requests[0]) and len(west) == 64  # cut and tagged
    (child,) = requests_with(scripted_model, "# Sub-agent: doorman")
    mcp = [name for name in published_tools(child) if name.startswith("mcp__")]
    assert sorted(mcp) == sorted([west, "mcp__quiet__lookup", "mcp__quiet__jammed"]), mcp
    assert "read" in published_tools(child) and "shell" not in published_tools(child)
    warnings = await events(server, row.session_id, "warning")
    assert not [w for w in warnings if w.body.code == "invalid-agent"]  # the agent is offered
    warned = [w.body.message for w in warnings if w.body.code == "agent-tool-unknown"]
    assert warned == [
        f"{path}: `tools` names `mcp__vault__nosuch`, which is none of the MCP tools this task offers "
        "(its connected MCP servers: quiet, vault); the doorman agent is offered without it. Name a "
        "tool by its whole name `mcp__<server>__<tool>`, or all of a server's as `mcp__<server>__*`."
    ]


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        ("mcp__vault", "`tools` names `mcp__vault`, which is no MCP tool's name"),
        ("mcp__*", "`tools` names `mcp__*`, which is no MCP tool's name"),
        ("mcp__vault__get_*", "`tools` names `mcp__vault__get_*`, which is no MCP tool's name"),
    ],
)
def test_an_mcp_name_an_agent_file_cannot_mean_is_refused_with_the_forms_it_takes(
    tmp_path: Path, tools: str, said: str
) -> None:
    path = write_agent(tmp_path, "doorman", f"name: doorman\ndescription: Reads.\ntools: read, {tools}")
    with pytest.raises(AgentFileError) as refused:
        read_agent(path)
    assert str(refused.value).startswith(said)
    assert "`mcp__<server>__<tool>`" in str(refused.value) and "`mcp__<server>__*`" in str(refused.value)
