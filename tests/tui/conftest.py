"""TUI test set-up: apps over a real server on the test's temp database, with scripted task work."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from harnez.server.runner import TaskWork
from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from tests.tui.helpers import answer_work

AppFactory = Callable[..., HarnezApp]


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
