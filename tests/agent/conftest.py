"""Fixtures of the agent tests: a real server with AgentWork and a temp database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.settings import Settings


@pytest.fixture
async def open_server(db_path: Path) -> AsyncIterator[Callable[..., object]]:
    """Open servers running AgentWork on the test database; all are closed after the test."""
    opened: list[Server] = []

    async def build(settings: Settings, approve: str = "ask") -> Server:
        server = await Server.open(db_path, settings, AgentWork(settings, approve=approve))  # type: ignore[arg-type]
        opened.append(server)
        return server

    yield build
    for server in opened:
        await server.close()
