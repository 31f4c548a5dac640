"""A tool call whose events fall on both sides of a page of history is drawn once, not once per page."""

from __future__ import annotations

from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.bridge import WINDOW_EVENTS
from harnez.tui.widgets.blocks import ToolBlock
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import wait_for


async def _session_with_a_call_on_the_page_boundary(db_path: Path, workspace: Path) -> str:
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace, model="scripted/demo")
        await server.append(draft.id, Event(ev.UserMessage(text="run it")))
        await server.append(
            draft.id, Event(ev.ToolRequested(call_id="c1", name="shell", arguments={"command": "make"}))
        )
        # the newest page starts at the answer to that call: its request is on the older page
        await server.append(
            draft.id,
            Event(
                ev.ApprovalRequired(call_id="c1", name="shell", arguments={"command": "make"}, reason="asks")
            ),
        )
        await server.append(
            draft.id, Event(ev.ApprovalResolved(call_id="c1", name="shell", verdict="deny", reason="not now"))
        )
        await server.append(
            draft.id, Event(ev.ToolCompleted(call_id="c1", name="shell", content="denied", is_error=True))
        )
        for n in range(WINDOW_EVENTS - 3):
            await server.append(draft.id, Event(ev.Usage(input=n, output=1)))  # drawn by nobody
        return draft.id
    finally:
        await server.close()


async def test_a_call_split_across_pages_is_one_block(make_app, db_path: Path, workspace: Path) -> None:
    session = await _session_with_a_call_on_the_page_boundary(db_path, workspace)
    app = make_app(resume=session)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(
            pilot, lambda: app.screen.query(Transcript) and app.screen.session_id == session, "opened"
        )
        transcript = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.oldest_seq == 1, "the older page loaded")
        await pilot.pause(0.1)
        blocks = [b for b in app.screen.query(ToolBlock) if b.call_id == "c1"]
        assert len(blocks) == 1
        assert blocks[0].arguments == {"command": "make"}
