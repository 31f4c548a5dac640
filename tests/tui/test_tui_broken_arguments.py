"""A tool call whose arguments were broken JSON shows, in the app, the text the model sent."""

from __future__ import annotations

from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.widgets.blocks import ToolBlock
from tests.tui.helpers import wait_for

BROKEN = '{"path": "notes.txt", "old_string": "x = 1'


async def test_the_call_shows_the_raw_arguments_not_an_empty_object(
    make_app, db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace, model="scripted/demo")
        await server.append(draft.id, Event(ev.UserMessage(text="edit it")))
        requested = ev.ToolRequested(
            call_id="c1", name="edit", raw_arguments=BROKEN, arguments_error="not valid JSON"
        )
        await server.append(draft.id, Event(requested))
        session = draft.id
    finally:
        await server.close()
    app = make_app(resume=session)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.query(ToolBlock), "the call drawn")
        (block,) = app.screen.query(ToolBlock)
        assert block.arguments == BROKEN
        assert str(block._arguments.render()) == BROKEN
