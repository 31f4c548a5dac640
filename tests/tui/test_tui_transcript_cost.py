"""What keeps the transcript and the picker cheap: coalesced streaming, answers rendered whole, folds
composed on demand, a view that fills itself, prompt frames, the picker's first page before its paint."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Collapsible, Markdown, OptionList, Static

from harnez import events as ev
from harnez.events import Event
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import TaskEndBlock, ToolBlock
from harnez.tui.widgets.status import StatusLine
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import seed_session, shown_answer, wait_for

WORDS = [f"word{i} " + ("\n\n" if i % 7 == 6 else "") for i in range(60)]


async def burst_work(run: TaskRun) -> TaskOutcome:
    """An answer streamed in a burst of small deltas (many per frame), then a tool call."""
    run.emit(ev.TurnStarted(turn=1))
    for word in WORDS:
        run.emit(ev.TextDelta(text=word))
        await asyncio.sleep(0)
    run.emit(ev.ToolRequested(call_id="c1", name="read", arguments={"path": "notes.txt"}))
    run.emit(ev.ToolCompleted(call_id="c1", name="read", content="the notes' text", is_error=False))
    await run.emit_now(ev.TurnCompleted(turn=1, stop="end"))
    return TaskOutcome("completed", 1)


def answer_source(app) -> str:
    return shown_answer(app.screen).query_one(Markdown).source


async def test_a_burst_of_deltas_shows_the_whole_answer_in_order(make_app) -> None:
    app = make_app(work=burst_work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        await app.server.submit(app.screen.session_id, "stream please")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        assert answer_source(app) == "".join(WORDS)
        markdown = shown_answer(app.screen).query_one(Markdown)
        # The Markdown mounts its blocks after its source is set: wait for them, then look.
        await wait_for(
            pilot, lambda: len(markdown.children) == 9, "9 paragraphs: 60 words, a blank line after every 7th"
        )
        assert "word59" in str(markdown.children[-1].render())


async def test_a_resumed_session_renders_stored_answers_whole_and_streams_nothing(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(
            server, workspace, "a question", answer="# Heading\n\nThe **answer**."
        )
        await server.append(session_id, Event(ev.Usage(input=700, output=20, model="scripted/demo")))
    finally:
        await server.close()
    app = make_app(resume=session_id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and app.screen.query(TaskEndBlock), "the stored session")
        block = shown_answer(app.screen)
        assert block.finished
        markdown = block.query_one(Markdown)
        assert markdown.source == "# Heading\n\nThe **answer**."
        await wait_for(pilot, lambda: len(markdown.children) == 2, "the heading and the paragraph mounted")
        assert [type(child).__name__ for child in markdown.children] == ["MarkdownH1", "StreamedParagraph"]
        # The screen's worker reads the session's totals last: let it finish before the app quits.
        await wait_for(pilot, lambda: app.screen.query_one(StatusLine).tokens_in == 700, "session totals")


async def test_a_collapsed_fold_composes_its_body_only_when_opened(make_app) -> None:
    app = make_app(work=burst_work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        await app.server.submit(app.screen.session_id, "read the notes")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        tool = app.screen.query_one(ToolBlock)
        arguments, result = tool.query(Collapsible)
        assert arguments.collapsed and not arguments.query(Collapsible.Contents)
        assert not result.collapsed
        await wait_for(
            pilot, lambda: result.query(Collapsible.Contents).first().query(Static), "the result's body"
        )
        assert "the notes' text" in str(result.query_one(Collapsible.Contents).query_one(Static).render())
        arguments.collapsed = False
        await wait_for(
            pilot,
            lambda: (
                arguments.query(Collapsible.Contents)
                and arguments.query_one(Collapsible.Contents).query(Static)
            ),
            "the arguments' body",
        )
        body = arguments.query_one(Collapsible.Contents).query_one(Static)
        assert '"path": "notes.txt"' in str(body.render())


async def test_a_window_that_shows_nothing_loads_older_events_until_something_shows(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace)
        record = await server.persist(draft.id)
        events = [
            Event(ev.UserMessage(text="the first question", mode="prompt")),
            Event(ev.TextDelta(text="the first answer")),
        ]
        # 450 events the transcript draws nothing for: the newest windows are empty.
        events += [Event(ev.Usage(input=1, output=1)) for _ in range(450)]
        await server.store.events.append_many(record.num, record.id, events)
    finally:
        await server.close()
    app = make_app(resume=draft.id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: transcript.blocks, "older pages loaded until a block shows")
        assert [block.text for block in transcript.blocks] == ["the first question", "the first answer"]
        await wait_for(pilot, lambda: not transcript.has_older, "the first event reached")


async def test_screens_paint_without_skipping_frames(make_app) -> None:
    # A canary for Textual upgrades: the flag is private (see bridge.paint_without_skipping).
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        await wait_for(pilot, lambda: app.screen.query(Transcript))
        assert app.screen._update_timer._skip is False
        app.open_picker()
        await wait_for(
            pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.is_mounted, "the picker"
        )
        assert app.screen._update_timer._skip is False


async def test_the_picker_has_its_first_page_when_it_is_mounted(
    make_app, db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    try:
        ids = [await seed_session(server, workspace, f"chat {i}") for i in range(3)]
    finally:
        await server.close()
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        screen = PickerScreen(app.server, workspace)
        await app.push_screen(screen)  # returns once the screen is mounted: before its first paint
        assert sorted(screen.records) == sorted(ids)
        assert screen.query_one(OptionList).option_count == 3
