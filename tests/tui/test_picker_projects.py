"""The picker across projects, and where there is no database yet: Pilot tests over real databases."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList, Static

from harnez.server.projects import remember_database
from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.screens.dialogs import ConfirmDialog, RenameDialog
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import answer_work, seed_session, wait_for


@pytest.fixture
async def projects(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Builds an app for a workspace as the CLI does: it finds its project's database, opens it (or
    another project's) on demand, and records which databases it opened."""
    opened: list[Server] = []

    def build(workspace: Path, **options: Any) -> HarnezApp:
        own = workspace / ".harnez" / "harnez.sqlite"

        async def open_server(database: Path | None = None) -> Server:
            opened.append(await Server.open(database or own, work=answer_work))
            return opened[-1]

        app = HarnezApp(open_server, workspace, None, database=lambda: own, **options)
        app.opened = opened  # type: ignore[attr-defined]
        return app

    yield build
    for server in opened:
        await server.close()


async def other_project(root: Path, *prompts: str) -> tuple[Path, list[str]]:
    """Another project with saved sessions, in the index as if Harnez had opened it there."""
    database = root / ".harnez" / "harnez.sqlite"
    server = await Server.open(database)
    try:
        ids = [await seed_session(server, root, prompt) for prompt in prompts]
    finally:
        await server.close()
    assert remember_database(database) is None
    return database, ids


def picker(app: HarnezApp) -> PickerScreen:
    assert isinstance(app.screen, PickerScreen)
    return app.screen


async def test_resume_where_there_is_no_database_creates_nothing_and_offers_a_new_session(
    projects, tmp_path: Path
) -> None:
    here = tmp_path / "fresh"
    here.mkdir()
    app = projects(here, open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen), "empty picker")
        empty = str(app.screen.query_one("#picker-empty", Static).render())
        assert "No saved session in this workspace yet" in empty and "Enter: start a new session" in empty
        assert not (here / ".harnez").exists() and app.opened == []
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.attached, "new session"
        )
        assert len(app.opened) == 1 and app.server.draft(app.screen.session_id) is not None
    assert (here / ".harnez" / "harnez.sqlite").exists()


async def test_esc_in_the_empty_picker_at_start_quits_and_leaves_nothing(projects, tmp_path: Path) -> None:
    here = tmp_path / "fresh"
    here.mkdir()
    app = projects(here, open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen), "empty picker")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.is_running, "quit")
    assert not (here / ".harnez").exists()


async def test_continue_where_there_is_no_database_is_an_error_and_creates_nothing(
    projects, tmp_path: Path
) -> None:
    here = tmp_path / "fresh"
    here.mkdir()
    app = projects(here, continue_latest=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: not app.is_running, "exit")
    assert app.return_code == 2 and "there is no database at" in (app.failure or "")
    assert not (here / ".harnez").exists()


async def test_ctrl_t_lists_every_project_and_opens_a_session_in_its_own(projects, tmp_path: Path) -> None:
    elsewhere, (theirs, _) = await other_project(tmp_path / "zoo", "the zebra feeding plan", "a routine chat")
    here = tmp_path / "fresh"
    here.mkdir()
    app = projects(here, open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen), "empty picker")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: len(picker(app).records) == 2, "every project")
        assert "all projects" in str(app.screen.query_one("#picker-heading").render())
        row = str(app.screen.query_one(OptionList).get_option(theirs).prompt)
        assert "zoo" in row, "a row across projects names its project"
        app.screen.query_one(Input).value = "zebra"
        await wait_for(pilot, lambda: list(picker(app).records) == [theirs], "search across projects")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == theirs,
            "opened in its project",
        )
        await wait_for(pilot, lambda: app.screen.query_one(Transcript).blocks, "replayed")
        assert app.server.database == elsewhere and app.workspace == (tmp_path / "zoo").resolve()
    assert not (here / ".harnez").exists(), "opening another project's session creates nothing here"


async def test_renaming_and_deleting_another_projects_session_happen_in_its_database(
    projects, tmp_path: Path
) -> None:
    elsewhere, (first, second) = await other_project(tmp_path / "zoo", "one chat", "another chat")
    here = tmp_path / "home-project"
    here.mkdir()
    server = await Server.open(here / ".harnez" / "harnez.sqlite")
    try:
        mine = await seed_session(server, here, "a chat here")
    finally:
        await server.close()
    app = projects(here, open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and list(picker(app).records) == [mine], "this workspace")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: len(picker(app).records) == 3, "every project")
        options = app.screen.query_one(OptionList)
        options.highlighted = options.get_option_index(first)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RenameDialog))
        app.screen.query_one(Input).value = "Zoo planning"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, PickerScreen) and picker(app).records[first].title == "Zoo planning"
            ),
            "renamed row",
        )
        options.highlighted = options.get_option_index(second)
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: second not in picker(app).records, "row removed")
        assert app.server.database == (here / ".harnez" / "harnez.sqlite").resolve(), (
            "this project stays open"
        )
    other = await Server.open(elsewhere)
    try:
        assert (await other.get_session(first)).title == "Zoo planning"
        assert [r.id for r in (await other.list_sessions()).sessions] == [first]
    finally:
        await other.close()


async def test_resume_with_an_id_from_another_project_opens_it_there(projects, tmp_path: Path) -> None:
    elsewhere, (theirs,) = await other_project(tmp_path / "zoo", "the zebra feeding plan")
    here = tmp_path / "fresh"
    here.mkdir()
    app = projects(here, resume=theirs[:10])
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "opened")
        assert app.screen.session_id == theirs and app.server.database == elsewhere
    assert not (here / ".harnez").exists()
