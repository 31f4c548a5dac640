"""A full disk while the app streams: the app says so, stays open, and the session reopens intact."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from tests.e2e.small_disk import growth_limits
from tests.tui.helpers import wait_for


async def endless_answer(run: TaskRun) -> TaskOutcome:
    """Streams 3 KB deltas that do not compress, until it is stopped."""
    await run.emit_now(ev.TextDelta(text="the first words "))
    while True:
        run.emit(ev.TextDelta(text=os.urandom(1500).hex() + "\n\n"))
        await asyncio.sleep(0.05)


@pytest.fixture
def small_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The database may grow by 12 pages, then SQLite answers "database or disk is full"."""
    for owner, attribute, replacement in growth_limits(12):
        monkeypatch.setattr(owner, attribute, replacement)


async def test_a_full_disk_is_shown_and_the_session_stays_openable(
    make_app, small_disk, db_path: Path
) -> None:
    app = make_app(endless_answer)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        app.screen.query_one(PromptInput).load_text("write forever")
        await pilot.press("enter")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.state == "not saving", "the storage failure", tries=2000)
        assert isinstance(app.screen, SessionScreen)
        assert any("disk is full" in n.text for n in app.notices)
        session_id = app.screen.session_id
        await pilot.press("ctrl+q")
    server = await Server.open(db_path)
    try:
        events = await server.events_after(session_id)
    finally:
        await server.close()
    assert events[0].kind == "user-message" and any(e.kind == "text-delta" for e in events)
