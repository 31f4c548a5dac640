"""How narrow terminals look (120×40, 80×24, 60×20): the picker's delete question and keys, toasts."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from harnez.server import server as server_module
from harnez.server.server import Server
from harnez.settings.model import title_source_problem
from harnez.tui.app import HarnezApp
from harnez.tui.screens.dialogs import ConfirmDialog
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import seed_database, wait_for

WORKSPACE = Path("/harnez-demo/project")
SIZES = [(120, 40), (80, 24), (60, 20)]


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic session ids (the short id is shown in the picker)."""
    counter = itertools.count(1)
    monkeypatch.setattr(server_module, "new_session_id", lambda: f"{next(counter):02x}c0ffee" + "0" * 24)


def build(db_path: Path, **options) -> HarnezApp:
    async def open_server() -> Server:
        return await Server.open(db_path)

    return HarnezApp(open_server, WORKSPACE, None, **options)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_picker_delete_question_and_keys(snap_compare, db_path: Path, size: tuple[int, int]) -> None:
    titled = [
        ("plan the ledger migration", "Migrate the billing tables to the new ledger schema"),
        ("fix the login form", "Login form"),
    ]
    asyncio.run(seed_database(db_path, WORKSPACE, titled))
    app = build(db_path, open_picker=True)

    async def ask_to_delete(pilot) -> None:
        await wait_for(pilot, lambda: app.ready and len(app.screen.records) == 2)
        await pilot.press("down", "ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ask_to_delete)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_toasts_beside_a_prompt_being_typed(snap_compare, db_path: Path, size: tuple[int, int]) -> None:
    app = build(db_path)

    async def type_with_toasts(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        prompt = app.screen.query_one(PromptInput)
        prompt.cursor_blink = False
        prompt.load_text("refactor the ledger so that")
        app.notify(title_source_problem("model/nowhere", "/harnez-demo/home/settings.json") or "", timeout=60)
        app.notify("Press Ctrl+C again to quit.", timeout=60)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=type_with_toasts)
