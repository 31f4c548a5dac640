"""`permissions.tools` rules name an MCP tool by the name it is offered under or by its whole
`mcp__<server>__<tool>` name, also when the offered one was cut to 64 characters and tagged. A real
MCP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.settings import HookCommand, PermissionSettings
from harnez.testing.scripted_model import ScriptedModel
from harnez.tools import SessionGrants, decide
from harnez.tools.mcp import McpParams, McpSession, mcp_tool, public_name
from tests.agent.agents_support import published_tools
from tests.agent.helpers import answer, make_settings, tool_call, tool_outputs
from tests.agent.test_hooks import with_hooks
from tests.agent.test_mcp_long_names import EAST, WEST  # whole names past 64 characters
from tests.http.test_serve_mcp import McpServer, _mcp_server


@pytest.fixture
def vault() -> Iterator[McpServer]:
    for server in _mcp_server():
        server.tools = [EAST, WEST]
        yield server


async def test_rules_written_with_the_whole_name_of_a_cut_mcp_tool_hold(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, vault: McpServer
) -> None:
    """Denied by its whole name, EAST is not offered; allowed by its whole name, WEST runs although
    the server's approval policy refuses every call that asks."""
    rules = {f"mcp__vault__{EAST}": "deny", f"mcp__vault__{WEST}": "allow"}
    settings = make_settings(scripted_model, permissions={"tools": rules})
    server = await open_server(settings, approve="deny")
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create(
        {"base": "harnez", "mcp_servers": [{"name": "vault", "url": vault.url}]}
    )
    west = public_name("vault", WEST)
    assert len(west) == 64 and west != f"mcp__vault__{WEST}"

    scripted_model.add(tool_call(west, "c1"), answer("Read."))
    row, _ = await host.start(TaskRequest(text="codes", input_items=[], harness_id=harness.id))
    await server.wait(row.session_id)

    offered = [name for name in published_tools(scripted_model.requests[0]) if name.startswith("mcp__")]
    assert offered == [west]
    posted = [r.body for r in vault.requests if r.method == "POST"]
    assert [b["params"]["name"] for b in posted if b["method"] == "tools/call"] == [WEST]


async def test_the_stricter_of_a_cut_mcp_tools_two_rules_decides(tmp_path: Path) -> None:
    async with httpx.AsyncClient() as client:
        tool = mcp_tool(McpSession("vault", "http://127.0.0.1:9/mcp", {}, client), {"name": EAST})
    offered, whole = tool.name, f"mcp__vault__{EAST}"
    settings = PermissionSettings(tools={offered: "allow", whole: "ask"})
    decision = decide(tool, McpParams(), tmp_path, settings, SessionGrants())
    assert (decision.verdict, decision.reason) == ("ask", f"permissions.tools.{whole} is 'ask'.")
    settings = PermissionSettings(tools={offered: "deny", whole: "allow"})
    decision = decide(tool, McpParams(), tmp_path, settings, SessionGrants())
    assert (decision.verdict, decision.reason) == (
        "deny",
        f"Settings deny the {offered} tool (permissions.tools.{offered}).",
    )


async def test_a_hook_for_a_cut_mcp_tool_named_by_its_whole_name_runs(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, vault: McpServer
) -> None:
    """A pre_tool hook's `tools` gave WEST by its whole name, which never equalled the cut name the
    call came under: the hook never ran, and the call went to the server. It runs, and denies it."""
    block = """python3 -c 'import json; print(json.dumps({"decision": "block", "reason": "not today"}))'"""
    hook = HookCommand(command=block, tools=[f"mcp__vault__{WEST}"])
    settings = with_hooks(make_settings(scripted_model), pre_tool=[hook])
    server = await open_server(settings, approve="allow")
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create(
        {"base": "harnez", "mcp_servers": [{"name": "vault", "url": vault.url}]}
    )
    scripted_model.add(tool_call(public_name("vault", WEST), "c1"), answer("Done."))
    row, _ = await host.start(TaskRequest(text="codes", input_items=[], harness_id=harness.id))
    await server.wait(row.session_id)

    assert tool_outputs(scripted_model.requests[-1].body)["c1"].endswith("not today. It did not run.")
    posted = [r.body for r in vault.requests if r.method == "POST"]
    assert not [b for b in posted if b["method"] == "tools/call"]
