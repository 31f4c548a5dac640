"""Tools the model calls to act on the workspace, their registry, and the permission rules."""

from __future__ import annotations

from harnez.tools.base import (
    Tool,
    ToolCancelled,
    ToolContext,
    ToolKind,
    ToolParams,
    ToolResult,
    WorkspacePath,
    is_inside,
    resolve_path,
)
from harnez.tools.permissions import Decision, SessionGrants, Verdict, decide, split_command
from harnez.tools.registry import ToolRegistry, builtin_tools

__all__ = [
    "Decision",
    "SessionGrants",
    "Tool",
    "ToolCancelled",
    "ToolContext",
    "ToolKind",
    "ToolParams",
    "ToolRegistry",
    "ToolResult",
    "Verdict",
    "WorkspacePath",
    "builtin_tools",
    "decide",
    "is_inside",
    "resolve_path",
    "split_command",
]
