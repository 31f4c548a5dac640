"""An imported session's links in the app: the line above its transcript says which harness it came from
and which session it was forked from, resumed from or ran under; a click or `/parent` opens that one.
Over a real database holding fixture sessions really imported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harnez.server.server import Server
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.origin import OriginLine
from tests.importers.conftest import FIXTURES
from tests.importers.test_session_links import (
    CODEX_HOME,
    CODEX_PARENT,
    PI_SESSION,
    REVIEW_CHILD,
    REVIEW_EXCERPTS,
    REVIEW_PARENT,
    codex_fork,
    pi_fork,
)
from tests.tui.helpers import seed_database, wait_for

FORK = "01a0f21c-9999-7f72-9aa9-ef0b43570681"
CLAUDE_HOME = "claude-code/agtrace-2.0.28/home"
CLAUDE_MAIN = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"


@pytest.fixture
def fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"the importer fixtures are not at {FIXTURES}")
    return FIXTURES


async def import_home(db_path: Path, home: Path, workspace: Path) -> dict[str, str]:
    """Import every session under `home`; their Harnez ids by their original ids (a sub-agent's by
    `<original id>/<agent id>`)."""
    server = await Server.open(db_path)
    try:
        await server.import_sessions(home, workspace=workspace)
        ids = {}
        for record in (await server.list_sessions(None, None)).sessions:
            origin = await server.session_origin(record.id)
            agent = f"/{origin['agent_id']}" if origin["agent_id"] else ""
            ids[origin["original_id"] + agent] = record.id
        return ids
    finally:
        await server.close()


def origin_line(app) -> OriginLine:
    return app.screen.query_one(OriginLine)


async def shown(pilot, app, session_id: str) -> str:
    """The origin line of the session on screen once it is `session_id`'s ("" while it is hidden)."""
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == session_id,
        "session",
    )
    await wait_for(
        pilot, lambda: not any(w.group == "origin" and not w.is_finished for w in app.workers), "read"
    )
    await pilot.pause()
    line = origin_line(app)
    return str(line.render()) if line.display else ""


def notified(app) -> str:
    return "\n".join(notice.message for notice in app._notifications)


async def type_command(pilot, text: str) -> None:
    for key in text:
        await pilot.press(key)
    await pilot.press("enter")


async def test_a_codex_fork_says_whose_fork_it_is_and_parent_opens_that_session(
    make_app, fixtures: Path, db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    home = Path(shutil.copytree(fixtures / CODEX_HOME, tmp_path / "home"))
    codex_fork(home, FORK)
    ids = await import_home(db_path, home, workspace)
    app = make_app(resume=ids[FORK])
    async with app.run_test(size=(140, 30)) as pilot:
        line = await shown(pilot, app, ids[FORK])
        parent = ids[CODEX_PARENT]
        title = (await app.server.get_session(parent)).display_title
        assert line == f"Imported from Codex · forked from «{title}» ({parent[:8]}) · /parent opens it"
        await type_command(pilot, "/parent")
        assert await shown(pilot, app, parent) == "Imported from Codex"  # it names no session of its own
        await type_command(pilot, "/parent")
        await wait_for(pilot, lambda: "names no session it came from" in notified(app), "refusal")
        assert app.screen.session_id == parent


async def test_a_codex_review_and_a_claude_sub_agent_name_their_parent_and_a_click_opens_it(
    make_app, fixtures: Path, db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    home = Path(shutil.copytree(fixtures / CLAUDE_HOME, tmp_path / "home"))
    day = home / ".codex/sessions/2026/01/04"
    day.mkdir(parents=True)
    shutil.copy(
        fixtures / REVIEW_EXCERPTS / "rollout-parent-019b88e0.jsonl",
        day / f"rollout-2026-01-04T11-59-02-{REVIEW_PARENT}.jsonl",
    )
    shutil.copy(
        fixtures / REVIEW_EXCERPTS / "rollout-subagent-019b88e5.jsonl",
        day / f"rollout-2026-01-04T12-05-09-{REVIEW_CHILD}.jsonl",
    )
    ids = await import_home(db_path, home, workspace)
    [claude_agent] = [key for key in ids if key.startswith(CLAUDE_MAIN + "/")]
    app = make_app(resume=ids[f"{REVIEW_CHILD}/review"])
    async with app.run_test(size=(140, 30)) as pilot:
        line = await shown(pilot, app, ids[f"{REVIEW_CHILD}/review"])
        assert line.startswith("Imported from Codex · review sub-agent of «")
        assert line.endswith(f"» ({ids[REVIEW_PARENT][:8]}) · /parent opens it")
        await pilot.click(OriginLine)
        await shown(pilot, app, ids[REVIEW_PARENT])

        await app.open_session(ids[claude_agent])
        line = await shown(pilot, app, ids[claude_agent])
        assert line.startswith("Imported from Claude Code · sub-agent of «")
        assert f"({ids[CLAUDE_MAIN][:8]})" in line
        await type_command(pilot, "/parent")
        await shown(pilot, app, ids[CLAUDE_MAIN])


async def test_a_fork_whose_parent_is_not_imported_names_it_and_parent_says_to_import_it(
    make_app, fixtures: Path, db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    [parent] = (fixtures / PI_SESSION).glob("*.jsonl")
    parent_id = parent.stem.split("_", 1)[1]
    pi_fork(fixtures, home / ".pi/agent/sessions/--home-user-proj--", f"/home/user/{parent.name}")
    ids = await import_home(db_path, home, workspace)
    [fork] = ids.values()
    app = make_app(resume=fork)
    async with app.run_test(size=(140, 30)) as pilot:
        line = await shown(pilot, app, fork)
        assert line == f"Imported from pi · forked from pi session {parent_id} (not imported)"
        await type_command(pilot, "/parent")
        await wait_for(pilot, lambda: "which is not imported" in notified(app), "the advice")
        assert app.screen.session_id == fork


async def test_harnez_own_session_has_no_origin_line(make_app, db_path: Path, workspace: Path) -> None:
    [own] = await seed_database(db_path, workspace, [("hello", "mine")])
    app = make_app(resume=own)
    async with app.run_test() as pilot:
        assert await shown(pilot, app, own) == ""


async def test_the_picker_row_of_an_imported_session_says_it_was_imported(
    make_app, fixtures: Path, db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    home = Path(shutil.copytree(fixtures / CODEX_HOME, tmp_path / "home"))
    ids = await import_home(db_path, home, workspace)
    app = make_app(open_picker=True)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen), "picker")
        await pilot.press("ctrl+t")  # the imported session's folder is not this workspace
        picker = app.screen
        await wait_for(pilot, lambda: ids[CODEX_PARENT] in picker.records, "the imported session listed")
        row = str(picker.query_one("#picker-sessions").get_option(ids[CODEX_PARENT]).prompt)
        assert "imported from Codex" in row
