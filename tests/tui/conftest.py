"""TUI test set-up: apps over a real server on the test's temp database, with scripted task work."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from harnez.agent.work import AgentWork
from harnez.server.runner import TaskWork
from harnez.server.server import Server
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from tests.agent.helpers import make_settings
from tests.tui.helpers import AgentApp, answer_work

AppFactory = Callable[..., HarnezApp]


@pytest.fixture
async def agent_app(db_path: Path, workspace: Path, scripted_model: ScriptedModel) -> AsyncIterator[AgentApp]:
    """A HarnezApp over a real server running AgentWork(approve="ask") against the scripted model.

    `before(server)` runs once the server is open, before the app shows its first screen.
    """
    opened: list[Server] = []

    def build(before: Callable[[Server], Any] | None = None, **options: Any) -> HarnezApp:
        settings = make_settings(scripted_model)

        async def open_server() -> Server:
            server = await Server.open(db_path, settings, AgentWork(settings, approve="ask"))
            opened.append(server)
            if before is not None:
                await before(server)
            return server

        return HarnezApp(open_server, workspace, settings, **options)

    yield build
    for server in opened:
        await server.close()


@pytest.fixture
async def make_app(db_path: Path, workspace: Path) -> AsyncIterator[AppFactory]:
    """Builds a HarnezApp over a real server on the test's database, with the given task work.

    Every server opened is closed after the test, also when the test ended without quitting the
    app: an open aiosqlite connection keeps a thread that would stop the test process from exiting.
    """
    opened: list[Server] = []

    def build(work: TaskWork | None = answer_work, **options: Any) -> HarnezApp:
        async def open_server() -> Server:
            opened.append(await Server.open(db_path, work=work))
            return opened[-1]

        return HarnezApp(open_server, options.pop("workspace", workspace), None, **options)

    yield build
    for server in opened:
        await server.close()


@pytest.fixture
def markdown_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources Markdown is parsed from (every parser's, while the test runs)."""
    from markdown_it import MarkdownIt

    sources: list[str] = []
    parse = MarkdownIt.parse

    def recording(self: MarkdownIt, source: str, env: Any = None) -> Any:
        sources.append(source)
        return parse(self, source, env)

    monkeypatch.setattr(MarkdownIt, "parse", recording)
    return sources
