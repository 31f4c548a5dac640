"""`harnez --model M --continue` (or `--resume ID`): the session opened switches to M, as `/model M`
would. It kept its own model without a word, so the person went on with the model they meant to leave."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.server.server import Server
from harnez.settings import Settings
from harnez.settings.model import ProviderSettings
from harnez.tui.app import HarnezApp
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.status import StatusLine
from tests.tui.helpers import seed_database, wait_for

SETTINGS = Settings(
    providers={"chat": ProviderSettings(wire="openai-chat", base_url="http://127.0.0.1:9/v1")},
    model="chat/first",
)


@pytest.mark.parametrize("how", ["continue", "resume"])
async def test_a_model_given_switches_the_session_opened_to_it(db_path: Path, workspace: Path, how) -> None:
    (session_id,) = await seed_database(db_path, workspace, [("hello", None)])
    opened: list[Server] = []

    async def open_server() -> Server:
        opened.append(await Server.open(db_path, SETTINGS))
        return opened[-1]

    where = {"continue_latest": True} if how == "continue" else {"resume": session_id[:8]}
    app = HarnezApp(open_server, workspace, SETTINGS, model="chat/second:high", **where)
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
            assert app.screen.session_id == session_id
            assert app.screen.query_one(StatusLine).model == "chat/second:high"
            assert (await app.server.get_session(session_id)).model == "chat/second:high"
            events = await app.server.events_after(session_id)
            assert events[-1].kind == "model-changed"
    finally:
        for server in opened:
            await server.close()


async def test_a_model_given_that_cannot_be_used_is_said_and_the_session_keeps_its_own(
    db_path: Path, workspace: Path
) -> None:
    (session_id,) = await seed_database(db_path, workspace, [("hello", None)])
    opened: list[Server] = []

    async def open_server() -> Server:
        opened.append(await Server.open(db_path, SETTINGS))
        return opened[-1]

    app = HarnezApp(open_server, workspace, SETTINGS, model="nope/x", continue_latest=True)
    try:
        async with app.run_test(notifications=True) as pilot:
            await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
            kept = (await app.server.get_session(session_id)).model
            assert kept == "scripted/demo"
            assert app.screen.query_one(StatusLine).model == kept
            said = [str(n.message) for n in app._notifications]
            assert any("--model nope/x not used: Unknown provider 'nope'" in text for text in said), said
    finally:
        for server in opened:
            await server.close()
