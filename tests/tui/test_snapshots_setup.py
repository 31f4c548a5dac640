"""How the first-run setup looks: while it looks for local servers, and with what it found."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez.server.server import Server
from harnez.settings import Settings
from harnez.tui.app import HarnezApp
from harnez.tui.screens.setup import SetupScreen
from harnez.wires.discovery import LocalServer
from tests.tui.helpers import wait_for

WORKSPACE = Path("/harnez-demo/project")
FOUND = [
    LocalServer("ollama", "http://127.0.0.1:11434/v1", ("qwen3:8b", "llama3.2")),
    LocalServer("lm-studio", "http://127.0.0.1:1234/v1", ()),
]
"""Fixed probe results: the screen must not depend on what this machine runs."""


@pytest.fixture(autouse=True)
def fixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed global folder (shown on screen; nothing is written) and an OpenAI key that is set."""
    monkeypatch.setenv("HARNEZ_HOME", "/harnez-demo/home")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-shown")


def build(db_path: Path, probe) -> HarnezApp:
    async def open_server() -> Server:
        return await Server.open(db_path)

    return HarnezApp(open_server, WORKSPACE, Settings(), local_probe=probe)


def test_setup_while_looking_for_local_servers(snap_compare, db_path: Path) -> None:
    async def never() -> list[LocalServer]:
        await asyncio.Event().wait()
        return []

    app = build(db_path, never)

    async def shown(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and app.screen.is_mounted)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(90, 24), run_before=shown)


def test_setup_with_a_key_and_local_servers(snap_compare, db_path: Path) -> None:
    async def found() -> list[LocalServer]:
        return FOUND

    app = build(db_path, found)

    async def shown(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen) and not app.screen.probing)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(90, 24), run_before=shown)
