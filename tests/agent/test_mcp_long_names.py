"""MCP tools whose `mcp__<server>__<tool>` names pass the providers' 64 characters: each is offered
under a name of its own that stays the same from task to task, a harness's `disabledTools` blocks one
by its whole name, and a sub-agent's MCP servers are narrowed to those its tools come from whatever
their names were cut to. Real MCP servers on loopback."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.server import Server
from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.testing.scripted_model import ScriptedModel
from harnez.tools.mcp import McpConnections, McpTool
from tests.agent.agents_support import delegate, only_child, published_tools, write_agent
from tests.agent.helpers import answer, make_settings, tool_call
from tests.http.test_serve_mcp import McpServer, _mcp_server

SHIFT = "list_every_door_code_in_the_building_for_the_night_shift_"
EAST, WEST, NORTH = SHIFT + "east", SHIFT + "west", SHIFT + "north"
"""Three tools of `vault` whose whole names share their first 64 characters."""
ARCHIVE = "records-of-the-facilities-department-for-every-building-we-own"
"""A server whose name alone leaves `mcp__<server>__` longer than a cut name keeps."""


@pytest.fixture
def servers() -> Iterator[dict[str, McpServer]]:
    with contextlib.ExitStack() as stack:
        found = {
            name: stack.enter_context(contextlib.contextmanager(_mcp_server)())
            for name in ("vault", ARCHIVE, "quiet")
        }
        found["vault"].tools = [EAST, WEST, NORTH]
        found[ARCHIVE].tools = ["lookup"]
        yield found


async def _task(server: Server, host: HarnessHost, harness: str, text: str) -> str:
    row, _ = await host.start(TaskRequest(text=text, input_items=[], harness_id=harness))
    await server.wait(row.session_id)
    return row.session_id


def _mcp_tools(offered: list[str]) -> list[str]:
    return [name for name in offered if name.startswith("mcp__")]


async def test_mcp_tools_cut_alike_are_offered_apart_and_a_sub_agent_gets_the_servers_of_its_tools(
    scripted_model: ScriptedModel,
    open_server,
    tmp_path: Path,
    isolated_home: Path,
    servers: dict[str, McpServer],
) -> None:
    write_agent(isolated_home / "agents", "doorman", "name: doorman\ndescription: Reads codes.")
    server = await open_server(make_settings(scripted_model), approve="allow")
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    entries = [{"name": name, "url": mcp.url} for name, mcp in servers.items()]
    blocked = [f"mcp__vault__{NORTH}", "mcp__quiet__lookup", "mcp__quiet__jammed"]
    harness = await host.harnesses.create(
        {"base": "harnez", "mcp_servers": entries, "disabled_tools": blocked}
    )

    scripted_model.add(answer("Listed."))
    await _task(server, host, harness.id, "which tools?")
    offered = _mcp_tools(published_tools(scripted_model.requests[0]))
    assert len(offered) == 3, offered  # east, west, the archive's lookup: north and quiet's blocked
    assert all(len(name) <= 64 for name in offered)
    east, west = (name for name in offered if name.startswith(f"mcp__vault__{SHIFT}"[:55]))
    assert east != west

    scripted_model.add(
        delegate("d1", "doorman", "read the west codes"),
        tool_call(west, "c1"),
        answer("West read."),
        answer("The doorman read them."),
    )
    parent = await _task(server, host, harness.id, "get the west codes")
    assert _mcp_tools(published_tools(scripted_model.requests[1])) == offered  # the same names again
    child = await only_child(server, parent)
    assert _mcp_tools(published_tools(scripted_model.requests[2])) == offered
    posted = [r.body for r in servers["vault"].requests if r.method == "POST"]
    called = [body["params"]["name"] for body in posted if body["method"] == "tools/call"]
    assert called == [WEST]  # the tool the model chose, of the two cut alike

    scripted_model.add(answer("Still west."))
    await server.submit(child, "once more")  # continued on its own: narrowed by its tools' names
    await server.wait(child)
    assert _mcp_tools(published_tools(scripted_model.requests[5])) == offered
    connected = {name: mcp.methods().count("initialize") for name, mcp in servers.items()}
    assert connected == {"vault": 4, ARCHIVE: 4, "quiet": 2}, "the child connected only its servers"


async def test_mcp_tools_alike_once_made_of_allowed_characters_are_both_offered(
    servers: dict[str, McpServer],
) -> None:
    """`get.me` and `get_me` are both `mcp__quiet__get_me` once the `.` a tool name may not hold is
    made `_`: the second is tagged, not left out."""
    servers["quiet"].tools = ["get.me", "get_me"]
    connections = await McpConnections.open(({"name": "quiet", "url": servers["quiet"].url},))
    try:
        named = {tool.name: tool.tool for tool in connections.tools if isinstance(tool, McpTool)}
    finally:
        await connections.aclose()
    assert named.pop("mcp__quiet__get_me") == "get.me"
    [(tagged, tool)] = named.items()
    assert tool == "get_me" and re.fullmatch(r"mcp__quiet__get_me_[0-9a-f]{8}", tagged), tagged
