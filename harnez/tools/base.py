"""The tool contract: parameters, results, the run context, and workspace path resolution."""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from harnez.errors import ToolError

ToolKind = Literal["read", "edit", "shell", "remote"]
"""What a tool does, which decides its default permission: reads, edits files, runs commands, or calls
another service (an MCP server's tool: harnez/tools/mcp.py), which asks as a shell command does."""
Operation = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""The harness-neutral name of what a tool does, as `started` lists it (the Agent Client Protocol's
tool kinds), so a consumer can tell what a run may do without knowing Harnez's tool names."""


class ToolParams(BaseModel):
    """Base of every tool's argument model: unknown arguments are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class ToolResult:
    """What a tool produced: `content` goes to the model, `details` to the UI."""

    content: str
    details: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    cancelled: bool = False
    """The run was cut short by cancellation; `content` holds what was produced before."""

    @classmethod
    def error(cls, message: str, **details: Any) -> ToolResult:
        """A failed call whose message tells the model what to do next."""
        return cls(content=message, details=details, is_error=True)


class ToolCancelled(asyncio.CancelledError):
    """Cancellation of a running tool that carries the partial result produced so far.

    It is a `CancelledError`, so cancellation propagates as usual; a caller that wants the partial
    output catches `asyncio.CancelledError` and reads `getattr(exc, "result", None)`.
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__("tool cancelled")
        self.result = result


class ProcessWatch(Protocol):
    """Where a tool reports the process groups of the commands it runs."""

    async def started(self, pgid: int, command: str) -> object:
        """A command started as process group `pgid`; returns a token for `ended`."""
        ...

    async def ended(self, token: object) -> None:
        """The command's group is gone."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """Where and how a tool runs."""

    workspace: Path
    """The session's workspace; relative paths resolve against it and shell commands run in it."""
    on_output: Callable[[str], None] | None = None
    """Called with chunks of shell output as they arrive, for live display."""
    processes: ProcessWatch | None = None
    """Told of every command a shell tool starts and ends (recorded, so the next open can stop a
    command that outlived a killed Harnez)."""
    pass_env: frozenset[str] = frozenset()
    """Credential variables shell commands get anyway (`permissions.shell.pass_env`); the others
    are withheld (harnez.redaction.command_environment)."""
    call_id: str | None = None
    """The id of the model's call being run (the delegate tool links its child session to it)."""


@dataclass(frozen=True)
class WorkspacePath:
    """A path argument resolved to its real location, and whether that lies in the workspace."""

    path: Path
    inside: bool

    def display(self, workspace: Path) -> str:
        """The path as shown to the model: relative inside the workspace, absolute outside."""
        if not self.inside:
            return str(self.path)
        relative = self.path.relative_to(real_workspace(workspace))
        return "." if relative == Path(".") else relative.as_posix()


def real_workspace(workspace: Path) -> Path:
    """The workspace with every symlink resolved."""
    return Path(os.path.realpath(workspace))


def resolve_path(workspace: Path, raw: str | os.PathLike[str]) -> WorkspacePath:
    """Resolve a path argument against the workspace, following symlinks and `..`."""
    text = os.fspath(raw)
    if not text.strip():
        raise ToolError("The path is empty; give a path relative to the workspace, e.g. 'src/app.py'.")
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = workspace / candidate
    real = Path(os.path.realpath(candidate))
    return WorkspacePath(path=real, inside=is_inside(workspace, real))


def is_inside(workspace: Path, path: Path) -> bool:
    """Whether a resolved path is the workspace itself or lies under it."""
    root = real_workspace(workspace)
    return path == root or root in path.parents


class Tool(ABC):
    """One capability the model may call. Subclasses set the class attributes and `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[type[ToolParams]]
    kind: ClassVar[ToolKind]
    operation: ClassVar[Operation] = "other"

    @property
    def read_only(self) -> bool:
        """Whether the tool leaves the workspace unchanged."""
        return self.kind == "read"

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The names a person may give the tool in settings (`permissions.tools`, disabled tools, a hook's
        `tools`): its name, and another when what the model is offered is not all of it (an MCP tool's
        cut name)."""
        return (self.name,)

    def input_schema(self) -> dict[str, Any] | None:
        """The JSON schema published for the arguments, when it is not the parameters model's (None)."""
        return None

    def targets(self, args: ToolParams, workspace: Path) -> list[WorkspacePath]:
        """The paths a call touches, resolved; by default the `path` argument if there is one."""
        raw = getattr(args, "path", None)
        return [] if raw is None else [resolve_path(workspace, raw)]

    @abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Do the work. Raise `ToolError` for a failure the model should hear about."""
