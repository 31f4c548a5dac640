"""The sub-agents side of one task: the agents it offers through `delegate`, or the limits of its agent.

A task of an ordinary session reads the agent files and, when there are agents (and settings do not
deny `delegate`), offers the `delegate` tool listing them. A task of a child session offers no
agent (a sub-agent cannot delegate further) and is held to its link: only the tools stored there,
its agent's instructions, and its parent's session grants.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harnez.agents.definitions import DELEGATE, AgentCatalogue, AgentDefinition, find_agents
from harnez.agents.delegate import Delegate, DelegateTool, ParentLimits
from harnez.events import WarningEvent
from harnez.tools import ToolRegistry

if TYPE_CHECKING:
    from harnez.settings import Settings
    from harnez.store.delegations import DelegationLink, DelegationTable
    from harnez.store.sessions import SessionRecord


SUB_AGENT = (
    "Another agent handed you this task: your final answer is all it receives, so end with the whole "
    "result it needs. You cannot ask it questions; when something is missing, say what and why."
)


class LinkStore(Protocol):
    """Where a task finds whether its session is a child, and of whom."""

    @property
    def delegations(self) -> DelegationTable: ...


@dataclass(frozen=True, slots=True)
class TaskAgents:
    """The agents one task may delegate to, or (in a child session) the agent it runs as."""

    catalogue: AgentCatalogue
    link: DelegationLink | None = None
    agent: AgentDefinition | None = None
    """A child's own agent, read again by name for its instructions (None once its file is gone)."""

    @classmethod
    async def load(cls, store: LinkStore, session: SessionRecord, settings: Settings) -> TaskAgents:
        """Read the session's link and the agent files (in a thread: they are files)."""
        link, catalogue = await asyncio.gather(  # side by side: each comes back through the event loop
            store.delegations.of_child(session.num),
            asyncio.to_thread(find_agents, Path(session.workspace), settings.providers),
        )
        if link is None:
            return cls(catalogue)
        return cls(AgentCatalogue(), link, catalogue.get(link.agent))

    def withheld(self, tools: Iterable[str]) -> tuple[str, ...]:
        """Those of `tools` (the built-in ones and the MCP servers' tools the task has) a child session
        may not use: every tool outside its link's."""
        if self.link is None:
            return ()
        return tuple(tool for tool in tools if tool not in self.link.tools)

    @property
    def instructions(self) -> str | None:
        """A child session's part of the system prompt: that it is a sub-agent, and its agent's
        instructions (None for an ordinary session)."""
        if self.link is None:
            return None
        body = self.agent.instructions if self.agent is not None else ""
        return "\n\n".join(part for part in (f"# Sub-agent: {self.link.agent}", SUB_AGENT, body) if part)

    @property
    def grants_owner(self) -> str | None:
        """The session whose "allow for this session" answers a child shares: its parent's."""
        return self.link.parent if self.link is not None else None

    def grants_session(self, session: SessionRecord) -> SessionRecord | None:
        """For a child session, its parent's record: whose stored answers rebuild the grants they share
        (the parent's log holds copies of the child's answers). None for any other session."""
        if self.link is None or self.link.parent is None:
            return None
        return dataclasses.replace(session, num=self.link.parent_num, id=self.link.parent)

    def offer(
        self, registry: ToolRegistry, withheld: list[str], delegate: Delegate, parent: ParentLimits
    ) -> ToolRegistry:
        """The registry with `delegate` added, when there are agents and settings do not deny it."""
        if not self.catalogue.agents or DELEGATE in withheld or DELEGATE in registry.names:
            return registry
        tools = [registry.get(name) for name in registry.names]
        return ToolRegistry([*tools, DelegateTool.offering(self.catalogue, delegate, parent)])

    def offered(self, registry: ToolRegistry) -> list[str]:
        """The agents the task offers (for the `started` event): none unless `delegate` is published."""
        return self.catalogue.names if DELEGATE in registry.names else []

    def warn(self, emit: Callable[..., Any], registry: ToolRegistry) -> None:
        """An `invalid-agent` warning for each agent file skipped, and an `agent-tool-unknown` one for each
        MCP tool or server an offered agent's `tools` names that the task does not offer (the agent goes
        without it): two codes, so a client can tell a refused agent from one offered with less."""
        for problem in self.catalogue.problems:
            emit(WarningEvent(code="invalid-agent", message=problem))
        tool = registry.get(DELEGATE) if DELEGATE in registry.names else None
        if not isinstance(tool, DelegateTool):
            return
        for agent in self.catalogue.agents:
            for entry in tool.parent.unmatched(agent):
                emit(WarningEvent(code="agent-tool-unknown", message=_unmatched(agent, entry, tool.parent)))


def _unmatched(agent: AgentDefinition, entry: str, parent: ParentLimits) -> str:
    servers = ", ".join(sorted(set(parent.servers.values()))) or "none"
    return (
        f"{agent.path}: `tools` names `{entry}`, which is none of the MCP tools this task offers (its "
        f"connected MCP servers: {servers}); the {agent.name} agent is offered without it. Name a tool "
        "by its whole name `mcp__<server>__<tool>`, or all of a server's as `mcp__<server>__*`."
    )
