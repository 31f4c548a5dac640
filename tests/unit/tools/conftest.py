"""Fixtures for the tool tests: a registry, a context on the shared workspace, a call helper."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from harnez.tools import ToolContext, ToolRegistry, ToolResult

Call = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry()


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)


@pytest.fixture
def call(registry: ToolRegistry, ctx: ToolContext) -> Call:
    """Validate and execute one tool call the way the agent loop does, returning its result."""

    async def run(name: str, **arguments: Any) -> ToolResult:
        args = registry.validate(name, arguments)
        if isinstance(args, ToolResult):
            return args
        return await registry.execute(registry.get(name), args, ctx)

    return run
