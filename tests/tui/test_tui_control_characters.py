"""Terminal control sequences in titles (stored by an older Harnez or another program), prompts,
answers and tool output are shown escaped in the title bar, the status line, the picker and the
transcript: they never reach the terminal raw."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import OptionList

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.widgets.blocks import AssistantBlock, UserBlock
from harnez.tui.widgets.status import StatusLine, TitleBar
from tests.tui.helpers import seed_session, wait_for

HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\u202etitle"
SHOWN = "evil\\x1b]0;pwned\\x07\\x1b[2J\\u202etitle"


async def hostile_session(db_path: Path, workspace: Path) -> str:
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "hello")
        await server.append(session_id, Event(ev.TitleChanged(title=HOSTILE, source="user")))
    finally:
        await server.close()
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE sessions SET title = ?, title_source = 'user'", (HOSTILE,))
    return session_id


def rendered(widget) -> str:
    return str(widget.render())


async def test_the_title_bar_and_status_line_show_a_hostile_title_escaped(
    make_app, db_path, workspace
) -> None:
    session_id = await hostile_session(db_path, workspace)
    app = make_app(resume=session_id)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        bar, status = app.screen.query_one(TitleBar), app.screen.query_one(StatusLine)
        assert SHOWN in rendered(bar) and "\x1b" not in rendered(bar)
        assert "\x1b" not in rendered(status) and "\u202e" not in rendered(status)


async def test_the_picker_shows_a_hostile_title_escaped(make_app, db_path, workspace) -> None:
    session_id = await hostile_session(db_path, workspace)
    app = make_app(open_picker=True)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(
            pilot, lambda: app.ready and isinstance(app.screen, PickerScreen) and app.screen.records
        )
        row = str(app.screen.query_one(OptionList).get_option(session_id).prompt)
        assert SHOWN in row and "\x1b" not in row and "\u202e" not in row


async def test_the_transcript_shows_control_sequences_in_prompts_and_answers_escaped(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(
            server, workspace, "clear \x1b[2J please", answer="done\x1b]0;x\x07 ok"
        )
    finally:
        await server.close()
    app = make_app(resume=session_id)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(
            pilot, lambda: app.ready and [b for b in app.screen.query(AssistantBlock) if b.display]
        )
        assert [b.text for b in app.screen.query(UserBlock)] == ["clear \\x1b[2J please"]
        assert [b.text for b in app.screen.query(AssistantBlock) if b.display] == ["done\\x1b]0;x\\x07 ok"]
