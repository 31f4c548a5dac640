"""MCP tools' results as text, and their permission: harnez/tools/mcp.py (the client over HTTP is
tested against a real server in tests/http/test_serve_mcp.py)."""

from __future__ import annotations

from pathlib import Path

from harnez.settings import PermissionSettings
from harnez.tools import SessionGrants, decide
from harnez.tools.mcp import MAX_RESULT_CHARS, McpParams, McpSession, mcp_tool, result_text


def test_text_is_kept_other_content_is_described_and_structured_content_is_json() -> None:
    result = {
        "content": [
            {"type": "text", "text": "one"},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAAAAAA"},
            {"type": "resource_link", "uri": "file:///x.md", "name": "x.md"},
            {"type": "resource", "resource": {"uri": "file:///y", "text": "embedded"}},
            {"type": "resource", "resource": {"uri": "file:///z", "blob": "AA=="}},
            {"type": "hologram"},
        ]
    }
    assert result_text(result).splitlines() == [
        "one",
        "[audio of type audio/wav, about 6 bytes, not shown]",
        "[resource link: file:///x.md x.md]",
        "embedded",
        "[resource file:///z (binary), not shown]",
        "[content of type 'hologram', not shown]",
    ]
    assert result_text({"content": [], "structuredContent": {"code": 4321}}) == '{"code": 4321}'
    long = result_text({"content": [{"type": "text", "text": "x" * (MAX_RESULT_CHARS + 5)}]})
    assert long.endswith("[… 5 more characters not shown]")


def test_a_tool_is_named_for_its_server_and_asks_even_where_edits_are_accepted(tmp_path: Path) -> None:
    session = McpSession("my vault", "http://127.0.0.1:1/mcp", {}, None)  # type: ignore[arg-type]
    tool = mcp_tool(session, {"name": "look.up", "inputSchema": {"type": "string"}})
    assert tool.name == "mcp__my_vault__look_up" and not tool.read_only
    assert tool.input_schema() == {"type": "object", "properties": {}}  # not an object schema: replaced
    args = McpParams.model_validate({"path": "/etc/passwd"})
    accepting = PermissionSettings(mode="accept-edits")
    decision = decide(tool, args, tmp_path, accepting, SessionGrants())
    assert decision.verdict == "ask" and "MCP" in decision.reason
    assert (
        decide(tool, args, tmp_path, PermissionSettings(mode="read-only"), SessionGrants()).verdict == "deny"
    )
    allowed = PermissionSettings(mode="ask", tools={tool.name: "allow"})
    assert decide(tool, args, tmp_path, allowed, SessionGrants()).verdict == "allow"
