"""`harnez --resume` shows the picker as its first screen, listing while the server still opens."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from textual.widgets import Label

from harnez.server.server import Server
from harnez.store.migrate import migrate, migrations_dir
from harnez.tui.app import HarnezApp
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from tests.tui.helpers import seed_session, wait_for


async def _seed(db_path: Path, workspace: Path, count: int) -> list[str]:
    server = await Server.open(db_path)
    try:
        return [await seed_session(server, workspace, f"chat number {n}") for n in range(count)]
    finally:
        await server.close()


class GatedOpener:
    """Opens the server only once `gate` is set, as a slow start-up would; closes what it opened."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.gate = asyncio.Event()
        self.opened: list[Server] = []

    async def __call__(self, database: Path | None = None) -> Server:
        await self.gate.wait()
        self.opened.append(await Server.open(database or self.db_path))
        return self.opened[-1]

    async def close(self) -> None:
        for server in self.opened:
            await server.close()


def _app(opener: GatedOpener, workspace: Path) -> HarnezApp:
    database = opener.db_path
    return HarnezApp(
        opener, workspace, None, open_picker=True, database=lambda: database, early_database=lambda: database
    )


async def test_the_first_page_shows_before_the_server_opens_and_a_choice_made_meanwhile_opens(
    db_path: Path, workspace: Path
) -> None:
    ids = await _seed(db_path, workspace, 3)
    opener = GatedOpener(db_path)
    app = _app(opener, workspace)
    try:
        async with app.run_test() as pilot:
            await wait_for(
                pilot, lambda: isinstance(app.screen, PickerScreen) and len(app.screen.records) == 3
            )
            picker = app.screen
            assert picker.starting and not opener.opened and picker.selected_id == ids[-1]
            await pilot.press("ctrl+d")  # deleting waits for the server: said so, nothing asked
            assert app.screen is picker
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: "opening…" in str(picker.query_one("#picker-heading", Label).content)
            )
            opener.gate.set()
            await wait_for(
                pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == ids[-1]
            )
    finally:
        await opener.close()


async def test_esc_on_the_first_picker_quits_and_an_empty_one_starts_a_new_session(
    tmp_path: Path, workspace: Path
) -> None:
    opener = GatedOpener(tmp_path / "none-yet.sqlite")
    app = _app(opener, workspace)
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
            opener.gate.set()
            await wait_for(pilot, lambda: app.ready and not app.screen.starting, "attached")
            assert not opener.db_path.exists()  # listing an absent database creates nothing
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.attached)
        again = _app(GatedOpener(opener.db_path), workspace)
        async with again.run_test() as pilot:
            await wait_for(pilot, lambda: isinstance(again.screen, PickerScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not again.is_running, "quit")
    finally:
        await opener.close()


async def test_a_database_that_needs_migrating_is_listed_once_the_server_has_migrated_it(
    tmp_path: Path, db_path: Path, workspace: Path
) -> None:
    first_only = tmp_path / "migrations"
    first_only.mkdir()
    first = sorted(migrations_dir().glob("0001_*.sql"))[0]
    shutil.copy(first, first_only / first.name)
    migrate(db_path, first_only)
    opener = GatedOpener(db_path)
    app = _app(opener, workspace)
    try:
        async with app.run_test() as pilot:
            await pilot.pause()
            assert not isinstance(app.screen, PickerScreen)  # the splash: nothing read before migrating
            opener.gate.set()
            await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen))
            assert not app.screen.records
    finally:
        await opener.close()
