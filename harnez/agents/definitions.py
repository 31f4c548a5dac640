"""Sub-agent definitions: Markdown files with a front matter, in the project's and the global agents folder.

```
---
name: reviewer
description: Reviews a change for bugs and missing tests; give it the files or the diff to read.
tools: read, grep, glob
model: anthropic/claude-sonnet-4-5
---
You review code. Report each problem with its file and line, most serious first.
```

`name` and `description` are required; `tools` (a comma list, `[a, b]`, or `- item` lines) limits
the agent to those tools (an MCP server's by its whole name `mcp__<server>__<tool>`, or all of a
server's as `mcp__<server>__*`), and without it the agent gets every tool its parent task offers; `model`
runs it on another model than its parent's. The body is added to the agent's system prompt. A file
that cannot be read as an agent is skipped, with a problem naming the file and what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from harnez import paths
from harnez.agents.frontmatter import FieldValue, FrontMatterError, split_front_matter
from harnez.errors import SettingsError
from harnez.settings import parse_model_ref
from harnez.tools import builtin_tools

DELEGATE = "delegate"
"""The tool a task delegates through (never offered to a sub-agent: it cannot delegate further)."""
KEYS = ("name", "description", "tools", "model")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MCP_PREFIX = "mcp__"
"""The start of an MCP server's tool's name (`mcp__<server>__<tool>`), which an agent's `tools` may name."""
TOOL_ALIASES = {"bash": "shell", "ls": "list"}
"""Names other harnesses give Harnez's tools (matched without regard to case, like the tools' own)."""


class AgentFileError(ValueError):
    """A file that cannot be read as an agent; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One sub-agent the model may delegate to."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    """The tools it may use (within those its parent task offers); None: all of those."""
    model: str | None
    """`<provider>/<model>[:<thinking>]` it runs on; None: its parent's model."""
    instructions: str
    """The body of its file, added to its system prompt."""
    path: Path


@dataclass(frozen=True, slots=True)
class AgentCatalogue:
    """The agents a workspace offers, and a problem for each file skipped."""

    agents: tuple[AgentDefinition, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [agent.name for agent in self.agents]

    def get(self, name: str) -> AgentDefinition | None:
        """The agent called `name`, if offered."""
        return next((agent for agent in self.agents if agent.name == name), None)


def agent_folders(workspace: Path, env: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """The project's agents folder, then the global one (a project agent shadows a global namesake)."""
    return paths.workspace_dir(workspace) / "agents", paths.config_dir(env) / "agents"


def find_agents(
    workspace: Path, providers: Collection[str] | None = None, env: Mapping[str, str] | None = None
) -> AgentCatalogue:
    """Every agent file of the workspace's and the global agents folder, read; `providers` are the
    configured ones an agent's `model` must name (None: not checked)."""
    found: dict[str, AgentDefinition] = {}
    problems: list[str] = []
    for folder in agent_folders(workspace, env):
        here: dict[str, Path] = {}
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            try:
                agent = read_agent(path, providers)
            except AgentFileError as exc:
                problems.append(f"{path}: {exc}. The agent is not offered until the file is fixed.")
                continue
            if agent.name in here:
                problems.append(
                    f"{path}: the agent `{agent.name}` is already defined by {here[agent.name].name} in "
                    "the same folder; rename one. This file is not offered."
                )
                continue
            here[agent.name] = path
            found.setdefault(agent.name, agent)
    return AgentCatalogue(tuple(found.values()), tuple(problems))


def read_agent(path: Path, providers: Collection[str] | None = None) -> AgentDefinition:
    """One agent file, checked; AgentFileError says what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentFileError(f"it cannot be read ({exc})") from None
    try:
        fields, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise AgentFileError(str(exc)) from None
    unknown = [key for key in fields if key not in KEYS]
    if unknown:
        raise AgentFileError(
            f"unknown key `{unknown[0]}` in the front matter; an agent file takes {', '.join(KEYS)}"
        )
    return AgentDefinition(
        name=_name(fields.get("name")),
        description=_required_text(fields, "description", "one line saying what the agent does and when"),
        tools=_tools(fields["tools"]) if "tools" in fields else None,
        model=_model(fields["model"], providers) if "model" in fields else None,
        instructions=body,
        path=path,
    )


def _required_text(fields: dict[str, FieldValue], key: str, what: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f"the front matter needs `{key}:` with {what}")
    return value.strip()


def _name(value: FieldValue | None) -> str:
    name = _required_text({"name": value} if value is not None else {}, "name", "the agent's name")
    if not NAME.match(name):
        raise AgentFileError(
            f"`name: {name}` is not a valid agent name: use letters, digits, `-` and `_` (like `reviewer`)"
        )
    return name


def _tools(value: FieldValue) -> tuple[str, ...]:
    """The tools named, as Harnez names them; a name that is no tool (or `delegate`) is refused."""
    named = [item.strip() for item in (value.split(",") if isinstance(value, str) else value)]
    named = [item for item in named if item]
    if not named:
        raise AgentFileError(
            "`tools:` names no tool; list some (`tools: read, grep`), or leave the key out to give the "
            "agent every tool its parent offers"
        )
    known = [tool.name for tool in builtin_tools()]
    tools: list[str] = []
    for item in named:
        if item.lower().startswith(MCP_PREFIX):
            tool = _mcp_tool(item)
            if tool not in tools:
                tools.append(tool)
            continue
        tool = TOOL_ALIASES.get(item.lower(), item.lower())
        if tool == DELEGATE:
            raise AgentFileError(
                "`tools` names `delegate`, but a sub-agent cannot delegate further; remove it"
            )
        if tool not in known:
            raise AgentFileError(
                f"`tools` names `{item}`, which is not a tool; use some of {', '.join(known)}, or an MCP "
                "server's tool as `mcp__<server>__<tool>` (all of a server's: `mcp__<server>__*`)"
            )
        if tool not in tools:
            tools.append(tool)
    return tuple(tools)


def _mcp_tool(item: str) -> str:
    """An MCP tool's whole name (`mcp__<server>__<tool>`) or a whole server's (`mcp__<server>__*`), as
    written but for the prefix's case: which of a task's tools it names is known only when the task has
    connected its servers (`harnez.agents.delegate.child_tools`)."""
    tool = MCP_PREFIX + item[len(MCP_PREFIX) :]
    server, _, rest = tool[len(MCP_PREFIX) :].partition("__")
    if not server or not rest or ("*" in tool and (rest != "*" or "*" in server)):
        raise AgentFileError(
            f"`tools` names `{item}`, which is no MCP tool's name; name one as `mcp__<server>__<tool>`, "
            "or all of a server's tools as `mcp__<server>__*`"
        )
    return tool


def _model(value: FieldValue, providers: Collection[str] | None) -> str:
    if not isinstance(value, str):
        raise AgentFileError("`model:` must be one model reference like `openai/gpt-5`, not a list")
    try:
        ref = parse_model_ref(value)
    except SettingsError as exc:
        raise AgentFileError(f"`model`: {exc.message.rstrip('.')}") from None
    if providers is not None and ref.provider not in providers:
        configured = ", ".join(sorted(providers)) or "none is configured"
        raise AgentFileError(
            f"`model: {value}` names the provider `{ref.provider}`, which is not configured ({configured}); "
            "use a configured one, or leave `model` out to run on the parent's model"
        )
    return str(ref)
