"""What a task offers the model, as its `started` event lists it: the tools published and withheld,
the neutral operations they perform, the skills and the agents."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harnez import events as ev
from harnez.agent.prompt import Skill, find_skills
from harnez.redaction import public_url
from harnez.tools import ToolRegistry
from harnez.wires import ResolvedModel


@dataclass(frozen=True, slots=True)
class Offer:
    """Everything a task puts before the model, each list possibly empty."""

    tools: list[str]
    operations: list[str]
    withheld: list[str]
    skills: list[Skill]
    agents: list[str]

    @classmethod
    def of(
        cls,
        registry: ToolRegistry,
        withheld: list[str],
        workspace: Path,
        agents: list[str],
        env: Mapping[str, str] | None = None,
        harness_skills: Path | None = None,
    ) -> Offer:
        """The offer of a task whose tools are `registry`, in its workspace (the skills found there and
        in its harness's skills folder, when it has one), with the sub-agents its `delegate` tool
        offers (harnez/agents/offer.py)."""
        skills = find_skills(workspace, env, harness_skills)
        return cls(registry.names, registry.operations, withheld, skills, agents)

    @classmethod
    def nothing(cls) -> Offer:
        """A task that calls no tool (`/compact`)."""
        return cls([], [], [], [], [])

    def started(self, model: ResolvedModel) -> ev.Started:
        """The `started` event of a task running `model` with this offer."""
        return ev.Started(
            model=f"{model.provider}/{model.model}",
            thinking=model.thinking,
            wire=model.endpoint.wire,
            tools=self.tools,
            withheld=self.withheld,
            context_window=model.spec.context_window,
            base_url=public_url(model.endpoint.base_url),
            operations=self.operations,
            skills=[skill.name for skill in self.skills],
            agents=self.agents,
        )
