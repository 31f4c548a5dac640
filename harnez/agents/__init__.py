"""Sub-agents: agent definitions in Markdown files, the `delegate` tool, and what a task lends a child.

docs/agents.md describes them; the child sessions themselves are run by `harnez.server.delegations`.
"""

from harnez.agents.definitions import AgentCatalogue, AgentDefinition, find_agents
from harnez.agents.delegate import Delegate, DelegateTool, Delegation, DelegationResult, ParentLimits

__all__ = [
    "AgentCatalogue",
    "AgentDefinition",
    "Delegate",
    "DelegateTool",
    "Delegation",
    "DelegationResult",
    "ParentLimits",
    "find_agents",
]
