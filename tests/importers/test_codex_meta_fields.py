"""Codex `session_meta` and call fields the fixtures lack. How a rollout says it is a sub-agent's, in the shapes Codex wrote: older versions only in
`session_meta.source.subagent.thread_spawn`; recent ones at the top of `session_meta` as well
(`parent_thread_id`, `agent_nickname`, `agent_role`, `agent_path`), the spawn object's own fields
then sometimes null, or no spawn object at all (`source` a plain string, `thread_source: subagent`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.importers.test_record_kinds import (
    _line,
    _rollout,
    _said,
    _token_count,
    continued,
    imported,
    read,
)
from tests.importers.test_session_links import origins

PARENT = "019a0000-0000-7000-8000-0000000000d1"
CHILD = "019a0000-0000-7000-8000-0000000000d2"
NAMES = {"agent_nickname": "Ramanujan", "agent_role": "explorer", "agent_path": "/root/explorer"}

SHAPES: dict[str, dict[str, Any]] = {
    "spawn object only (older)": {
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1, **NAMES}}}
    },
    "top level beside a spawn object of nulls": {
        "source": {
            "subagent": {
                "thread_spawn": {
                    "parent_thread_id": PARENT,
                    "depth": 1,
                    "agent_path": None,
                    "agent_nickname": None,
                    "agent_role": None,
                }
            }
        },
        "parent_thread_id": PARENT,
        **NAMES,
    },
    "top level only": {"source": "exec", "thread_source": "subagent", "parent_thread_id": PARENT, **NAMES},
    "top level, role as agent_type": {
        "source": "cli",
        "parent_thread_id": PARENT,
        "agent_nickname": "Ramanujan",
        "agent_type": "explorer",
    },
}


def _session(home: Path, session: str, meta: dict[str, Any], prompt: str) -> Path:
    return _rollout(
        home,
        session,
        [
            _line("session_meta", {"id": session, "cwd": "/w", **meta}, 0),
            _line("turn_context", {"model": "gpt-5.5", "cwd": "/w"}, 1),
            _line("event_msg", {"type": "user_message", "message": prompt}, 2),
            _line("response_item", _said("assistant", "output_text", "Done."), 3),
            _token_count(100, 4),
        ],
    )


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_codex_sub_agent_is_linked_to_its_parent_and_named_in_every_shape(
    tmp_path: Path, workspace: Path, db_path: Path, shape: str
) -> None:
    home = tmp_path / "home"
    _session(home, PARENT, {"source": "cli"}, "map the repository")
    child = _session(home, CHILD, SHAPES[shape], "list the modules")

    [summary] = read(tmp_path, child, "--summary")
    assert (summary["agent_id"], summary["parent_session_id"]) == ("Ramanujan", PARENT)
    assert summary["user_messages"] == 1  # the counting rules do not move

    server = await Server.open(db_path)
    try:
        await server.import_sessions(home, workspace=workspace)
        found = await origins(server)
        sub, mother = found[CHILD], found[PARENT]
        assert sub["agent_id"] == "Ramanujan"
        assert (await server.get_session(sub["id"])).title == "[explorer Ramanujan] list the modules"
        assert (sub["parent_original_id"], sub["parent_session"]) == (PARENT, mother["id"])
        assert mother["children"] == [sub["id"]]
    finally:
        await server.close()


# A call's namespace ---------------------------------------------------------------------------------


def _call(call_id: str, name: str, namespace: str | None, second: int) -> dict[str, Any]:
    item = {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id}
    return _line("response_item", {**item, "namespace": namespace} if namespace else item, second)


def _output(call_id: str, text: str, second: int) -> dict[str, Any]:
    return _line(
        "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}, second
    )


async def test_a_codex_call_keeps_its_namespace_in_its_tool_name(
    tmp_path: Path, workspace: Path, db_path: Path, scripted_model: ScriptedModel
) -> None:
    """Codex's MCP tools are offered in namespaces (`mcp__<server>`) and a call names its namespace
    apart from its tool: two servers' `search` are two tools. Codex's own tools are in the default
    namespace, `functions`, whose name Codex leaves out."""
    home = tmp_path / "home"
    session = "019a0000-0000-7000-8000-0000000000e7"
    rollout = _rollout(
        home,
        session,
        [
            _line("event_msg", {"type": "user_message", "message": "find the issue on both"}, 2),
            _call("c1", "search", "mcp__github", 3),
            _call("c2", "search", "mcp__gitlab__", 3),
            _call("c3", "exec_command", "functions", 3),
            _token_count(100, 4),
            _output("c1", "github #12", 5),
            _output("c2", "gitlab !7", 5),
            _output("c3", "ok", 5),
            _line("response_item", _said("assistant", "output_text", "Both found."), 6),
            _token_count(200, 7),
        ],
    )
    named = ["mcp__github__search", "mcp__gitlab__search", "exec_command"]
    [read_back] = read(tmp_path, rollout)
    calls = [p for e in read_back["entries"] if e["type"] == "assistant" for p in e["parts"]]
    assert [p["name"] for p in calls if p["type"] == "tool_call"] == named
    events = imported(tmp_path, home)[1]
    assert [e["name"] for e in events if e["kind"] == "tool-requested"] == named

    request = await continued(home, workspace, db_path, scripted_model, "openai-responses")
    items = request.body["input"]
    sent = {i["call_id"]: i["name"] for i in items if i.get("type") == "function_call"}
    assert sent == dict(zip(("c1", "c2", "c3"), named, strict=True))
    answered = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert answered == ["c1", "c2", "c3"]  # each call still paired with its output
