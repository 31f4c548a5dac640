"""The `delegate` tool: hands a self-contained task to a sub-agent, which runs it in a child session."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from harnez.agents.definitions import DELEGATE, MCP_PREFIX, AgentCatalogue, AgentDefinition
from harnez.errors import ToolError
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult
from harnez.tools.mcp import may_be_of, server_prefix

INTRODUCTION = (
    "Hand a task to a sub-agent. It works in a session of its own, with its own tools, and its final "
    "answer comes back as this call's result. It sees nothing of this conversation: give it a "
    "complete task (what to do, where to look, what to report). Agents:"
)


class DelegateParams(ToolParams):
    agent: str = Field(description="The agent's name, from the list in this tool's description.")
    task: str = Field(
        min_length=1,
        description="The whole task for the agent, self-contained: it does not see this conversation.",
    )


@dataclass(frozen=True, slots=True)
class ParentLimits:
    """What a parent task lends the agents it delegates to, and never more."""

    tools: tuple[str, ...]
    """The tools the parent task offers (a child gets its agent's tools among these)."""
    model: str | None
    """The parent's model, for agents that name none (None: the settings' default)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The options the parent lends its children (`TaskOptions.lent`: its permission mode, approval
    policy, instructions, disabled tools, MCP servers, skills, turn budget, declared programs)."""
    servers: Mapping[str, str] = field(default_factory=dict)
    """The MCP server each of the parent's MCP tools comes from, by the name it is offered under (which
    may be cut and tagged: `harnez.tools.mcp.tagged_name`)."""
    whole_names: Mapping[str, str] = field(default_factory=dict)
    """The whole `mcp__<server>__<tool>` name of each of the parent's MCP tools, by the name it is
    offered under: what an agent's `tools` names it by."""

    def names_for(self, entry: str) -> list[str]:
        """The parent's tools an agent's `tools` entry names: a built-in tool by its name, an MCP tool by
        its whole name (never the cut one it may be offered under), `mcp__<server>__*` all of a
        server's."""
        if not entry.startswith(MCP_PREFIX):
            return [entry] if entry in self.tools else []
        if entry.endswith("__*"):
            return [tool for tool in self.tools if self._prefix(tool) == entry[:-1]]
        return [tool for tool in self.tools if self.whole_names.get(tool) == entry]

    def _prefix(self, tool: str) -> str | None:
        server = self.servers.get(tool)
        return server_prefix(server) if server is not None else None

    def unmatched(self, agent: AgentDefinition) -> list[str]:
        """The MCP tools and servers AGENT's `tools` names that none of the parent's tools is."""
        named = agent.tools or ()
        return [e for e in named if e.startswith(MCP_PREFIX) and not self.names_for(e)]


@dataclass(frozen=True, slots=True)
class Delegation:
    """What one delegate call asks for: which agent does what, within which limits."""

    agent: AgentDefinition
    task: str
    call_id: str
    tools: tuple[str, ...]
    """The tools the child may use: its agent's, within those its parent offers."""
    model: str | None
    options: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DelegationResult:
    """How a delegation ended: the child session, and the text the parent's model receives."""

    agent: str
    child: str
    text: str
    stop: str
    is_error: bool = False

    def tool_result(self, *, cancelled: bool = False) -> ToolResult:
        """The delegate call's result: the text for the model, the child session for the UI."""
        details = {"agent": self.agent, "child": self.child, "stop": self.stop}
        return ToolResult(self.text, details=details, is_error=self.is_error, cancelled=cancelled)


Delegate = Callable[[Delegation], Awaitable[DelegationResult]]
"""Runs a delegation as a child session of the task that asked for it (the server's side)."""


def child_tools(agent: AgentDefinition, parent: ParentLimits) -> tuple[str, ...]:
    """The tools a child gets: its agent's that its parent offers (all of those when it names none),
    by the names the parent offers them under."""
    if agent.tools is None:
        return tuple(tool for tool in parent.tools if tool != DELEGATE)
    named = (tool for entry in agent.tools for tool in parent.names_for(entry))
    return tuple(dict.fromkeys(tool for tool in named if tool != DELEGATE))


def child_options(
    lent: dict[str, Any], tools: tuple[str, ...], servers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A child task's options: those its parent lends, its MCP servers narrowed to those the child's
    tools come from, so that a server none of them comes from is not contacted. `servers` (the
    parent's tools: `ParentLimits.servers`) says it for each tool; without it (a child session
    continued later) the names do (`may_be_of`)."""
    options = dict(lent)

    def serves(name: Any) -> bool:
        if servers is not None:
            return any(servers.get(tool) == name for tool in tools)
        return isinstance(name, str) and any(may_be_of(tool, name) for tool in tools)

    kept = [entry for entry in options.pop("mcp_servers", ()) if serves(entry.get("name"))]
    return {**options, "mcp_servers": kept} if kept else options


def describe(catalogue: AgentCatalogue) -> str:
    """The tool's description: how to delegate, and each agent with its description and tools."""
    lines = [INTRODUCTION]
    for agent in catalogue.agents:
        tools = f" (tools: {', '.join(agent.tools)})" if agent.tools is not None else ""
        lines.append(f"- {agent.name}: {agent.description}{tools}")
    return "\n".join(lines)


class DelegateTool(Tool):
    """Starts a sub-agent on a task; returns its final answer (see `offering` for its description)."""

    name = DELEGATE
    description = INTRODUCTION
    parameters = DelegateParams
    kind = "read"
    """It changes nothing itself: what the sub-agent does is checked by the sub-agent's own permissions."""

    def __init__(self, catalogue: AgentCatalogue, delegate: Delegate, parent: ParentLimits) -> None:
        self.catalogue = catalogue
        self.delegate = delegate
        self.parent = parent

    @classmethod
    def offering(cls, catalogue: AgentCatalogue, delegate: Delegate, parent: ParentLimits) -> DelegateTool:
        """The tool for one task, its description listing the task's agents."""
        described = type(cls.__name__, (cls,), {"description": describe(catalogue)})
        return described(catalogue, delegate, parent)

    async def run(self, args: DelegateParams, ctx: ToolContext) -> ToolResult:
        agent = self.catalogue.get(args.agent)
        if agent is None:
            raise ToolError(
                f"There is no agent named {args.agent!r}; use one of: {', '.join(self.catalogue.names)}."
            )
        tools = child_tools(agent, self.parent)
        delegation = Delegation(
            agent,
            args.task,
            ctx.call_id or uuid.uuid4().hex,
            tools,
            agent.model or self.parent.model,
            child_options(self.parent.options, tools, self.parent.servers),
        )
        return (await self.delegate(delegation)).tool_result()
