"""Shared pieces of the sub-agent tests: agent files, and the requests of parent and child sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harnez.server import Server
from harnez.testing.scripted_model import RecordedRequest, ScriptedModel


def write_agent(folder: Path, name: str, front: str, body: str = "") -> Path:
    """An agent file `<name>.md` in `folder`, with the front matter lines given."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{front.strip()}\n---\n{body}\n")
    return path


def project_agents(workspace: Path) -> Path:
    return workspace / ".harnez" / "agents"


def reviewer(workspace: Path, tools: str = "read, grep", **extra: str) -> Path:
    """The `reviewer` agent of the workspace: reads and greps, with instructions of its own."""
    lines = ["name: reviewer", "description: Reviews files for bugs.", f"tools: {tools}"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return write_agent(
        project_agents(workspace), "reviewer", "\n".join(lines), "Report bugs with line numbers."
    )


def delegate(call_id: str, agent: str, task: str) -> dict[str, Any]:
    """A scripted turn that delegates `task` to `agent`."""
    return {
        "reply": [
            {"tool_call": {"name": "delegate", "id": call_id, "arguments": {"agent": agent, "task": task}}}
        ],
        "usage": {"input": 100, "output": 10},
    }


def published_tools(request: RecordedRequest) -> list[str]:
    """The tool names a chat-completions request offered."""
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def system_text(request: RecordedRequest) -> str:
    """The system message of a chat-completions request."""
    return next(m["content"] for m in request.body["messages"] if m["role"] == "system")


def requests_with(model: ScriptedModel, text: str) -> list[RecordedRequest]:
    """The chat-completions requests whose system prompt holds `text`."""
    return [r for r in model.requests if "messages" in r.body and text in system_text(r)]


async def only_child(server: Server, parent: str) -> str:
    """The id of the one child session of `parent`."""
    (link,) = await server.children(parent)
    return link.child
