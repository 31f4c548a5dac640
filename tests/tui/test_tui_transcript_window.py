"""The transcript keeps a window of blocks mounted: a few heights of the view while it follows the end,
whatever the session's length; what the person scrolled up to read stays until they come back."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import TaskEndBlock, ToolBlock, UserBlock, block_seq
from harnez.tui.widgets.transcript import KEEP_SCREENS, OPEN_BLOCKS, Transcript
from tests.tui.helpers import wait_for

EXCHANGES = 60


async def short_answer(run: TaskRun) -> TaskOutcome:
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.TextDelta(text="A short answer."))
    await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="end"))
    return TaskOutcome("completed", 1)


async def stored_session(db_path: Path, workspace: Path, events: list[Event]) -> str:
    """A session holding `events`, written in one transaction; its id."""
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace, model="scripted/demo")
        record = await server.persist(draft.id)
        await server.store.events.append_many(record.num, record.id, events)
        return draft.id
    finally:
        await server.close()


async def long_session(db_path: Path, workspace: Path) -> str:
    """A stored session of `EXCHANGES` prompts, each answered and finished (3 events, 3 blocks)."""
    events: list[Event] = []
    for n in range(EXCHANGES):
        events += [
            Event(ev.UserMessage(text=f"question {n}", mode="prompt")),
            Event(ev.TextDelta(text=f"answer {n}")),
            Event(ev.Finished(stop="completed", turns=1, error=None)),
        ]
    return await stored_session(db_path, workspace, events)


async def shown_window(pilot, app) -> Transcript:
    """The session screen's transcript once the session's window is mounted (both steps)."""
    await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
    transcript: Transcript = app.screen.query_one(Transcript)
    await wait_for(
        pilot, lambda: questions(transcript) and not transcript.mounting_older, "the newest exchanges"
    )
    return transcript


def questions(transcript: Transcript) -> list[str]:
    return [block.text for block in transcript.blocks if isinstance(block, UserBlock)]


async def scroll_to_first(pilot, transcript: Transcript) -> None:
    """Scroll to the top until the session's first question is mounted (a page of older events each time)."""

    def first_shown() -> bool:
        if questions(transcript)[0] == "question 0":
            return True
        transcript.scroll_home(animate=False)
        return False

    await wait_for(pilot, first_shown, "every older page loaded")


def covered(transcript: Transcript) -> int:
    """The lines the mounted blocks take, with their margins."""
    return sum(block.virtual_region_with_margin.height for block in transcript.blocks)


async def test_a_long_session_keeps_a_few_screens_mounted_and_the_rest_on_demand(
    make_app, db_path: Path, workspace: Path
) -> None:
    session_id = await long_session(db_path, workspace)
    app = make_app(work=short_answer, resume=session_id)
    async with app.run_test() as pilot:
        # All 180 stored events were read (one page of 200); only the newest exchanges are mounted.
        transcript = await shown_window(pilot, app)
        view = transcript.scrollable_content_region.height
        assert len(questions(transcript)) < EXCHANGES
        shown = questions(transcript)
        assert shown[-1] == f"question {EXCHANGES - 1}"
        assert shown == [f"question {n}" for n in range(EXCHANGES - len(shown), EXCHANGES)]
        assert covered(transcript) > view, "the view is full"
        assert transcript.has_older and transcript.oldest_seq > 1

        # Scrolled to the top, the older events come back above.
        await scroll_to_first(pilot, transcript)
        assert not transcript.has_older
        mounted = len(transcript.blocks)

        # A task that ends while the person reads up there drops nothing.
        await app.server.submit(session_id, "one more")
        await wait_for(pilot, lambda: len(transcript.query(TaskEndBlock)) == EXCHANGES + 1, "the task ends")
        await pilot.pause(0.1)
        assert questions(transcript)[0] == "question 0"
        assert len(transcript.blocks) == mounted + 3

        # Back at the end, the next task's end trims the window again.
        transcript.scroll_end(animate=False)
        await app.server.submit(session_id, "and another")
        await wait_for(pilot, lambda: questions(transcript)[-1:] == ["and another"], "the prompt shown")
        await wait_for(pilot, lambda: len(questions(transcript)) < EXCHANGES, "trimmed after the task")
        assert transcript.has_older
        assert covered(transcript) >= KEEP_SCREENS * view


async def test_a_session_opens_with_its_newest_exchanges_whole_and_reads_the_rest_when_scrolled_to(
    make_app, db_path: Path, workspace: Path
) -> None:
    events: list[Event] = []
    for n in range(60):  # 5 events and 4 blocks each: a window of 200 events holds the last 40
        call = "call_1"  # one id for every call, as scripted models send
        events += [
            Event(ev.UserMessage(text=f"question {n}", mode="prompt")),
            Event(ev.ToolRequested(call_id=call, name="read", arguments={"path": f"{n}.txt"})),
            Event(ev.ToolCompleted(call_id=call, name="read", content=f"text {n}", is_error=False)),
            Event(ev.TextDelta(text=f"answer {n}")),
            Event(ev.Finished(stop="completed", turns=2, error=None)),
        ]
    app = make_app(work=short_answer, resume=await stored_session(db_path, workspace, events))
    async with app.run_test() as pilot:
        transcript = await shown_window(pilot, app)
        # The blocks trimmed above the kept window are removed without waiting: under load the last
        # of them (a tool's, an answer's: widgets with children) went a few frames later.
        await wait_for(pilot, lambda: isinstance(transcript.blocks[0], UserBlock), "an exchange shown whole")
        assert len(transcript.blocks) <= OPEN_BLOCKS + 3, "not the whole window read"
        assert transcript.has_older and questions(transcript)[-1] == "question 59"
        await scroll_to_first(pilot, transcript)
        tools = list(transcript.query(ToolBlock))
        assert len(tools) == 60
        assert all(tool.has_result for tool in tools), "every call drawn again with its result"


async def test_page_keys_scroll_the_transcript_back_to_the_first_exchange_and_forth(
    make_app, db_path: Path, workspace: Path
) -> None:
    session_id = await long_session(db_path, workspace)
    app = make_app(work=short_answer, resume=session_id)
    async with app.run_test() as pilot:
        transcript = await shown_window(pilot, app)
        assert app.screen.focused is not transcript  # the prompt has the keys

        async def page_up_to_the_first() -> bool:
            await pilot.press("pageup")
            return questions(transcript)[0] == "question 0" and transcript.scroll_y == 0

        for _ in range(200):
            if await page_up_to_the_first():
                break
        else:
            raise AssertionError("Page Up never reached the first exchange")
        assert not transcript.is_vertical_scroll_end
        for _ in range(500):
            if transcript.is_vertical_scroll_end:
                break
            await pilot.press("pagedown")
        assert transcript.is_vertical_scroll_end, "Page Down reaches the end"
        await app.server.submit(session_id, "one more")
        await wait_for(pilot, lambda: questions(transcript)[-1:] == ["one more"], "the prompt shown")
        await wait_for(pilot, lambda: transcript.is_vertical_scroll_end, "the view follows the end again")


async def test_a_prompt_sent_while_reading_further_up_brings_the_view_back_to_the_end(
    make_app, db_path: Path, workspace: Path
) -> None:
    session_id = await long_session(db_path, workspace)
    app = make_app(work=short_answer, resume=session_id)
    async with app.run_test() as pilot:
        transcript = await shown_window(pilot, app)
        for _ in range(3):
            await pilot.press("pageup")
        assert not transcript.is_vertical_scroll_end
        for key in "one more":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await wait_for(pilot, lambda: questions(transcript)[-1:] == ["one more"], "the prompt shown")
        answered = lambda: any(end.seq > 3 * EXCHANGES for end in transcript.query(TaskEndBlock))  # noqa: E731
        await wait_for(pilot, answered, "answered")
        await wait_for(pilot, lambda: transcript.is_vertical_scroll_end, "the view back at the end")
        await pilot.pause(0.2)
        assert transcript.is_vertical_scroll_end, "and it follows the answer"


async def test_a_call_split_across_two_pages_is_drawn_once_with_its_request_and_result(
    make_app, db_path: Path, workspace: Path
) -> None:
    events = [
        Event(ev.UserMessage(text="question 0", mode="prompt")),
        Event(ev.ToolRequested(call_id="call_1", name="read", arguments={"path": "notes.txt"})),
        Event(ev.ToolCompleted(call_id="call_1", name="read", content="the notes", is_error=False)),
        Event(ev.TextDelta(text="answer 0")),
        Event(ev.Finished(stop="completed", turns=2, error=None)),
    ]
    # Events the transcript draws nothing for: the newest 200 begin with the call's result.
    events += [Event(ev.Usage(input=1, output=1)) for _ in range(197)]
    app = make_app(work=short_answer, resume=await stored_session(db_path, workspace, events))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        # The window does not fill the view: the older page is read by itself.
        await wait_for(pilot, lambda: questions(transcript) == ["question 0"], "the older page")
        (tool,) = transcript.query(ToolBlock)
        assert tool.requested and tool.has_result and tool.arguments == {"path": "notes.txt"}


async def every_block_then_the_end(pilot, app) -> Transcript:
    """The transcript with every block of the session mounted (read from the top) and the view back
    at the end."""
    transcript = await shown_window(pilot, app)
    await scroll_to_first(pilot, transcript)
    transcript.scroll_end(animate=False)
    await pilot.pause(0.1)
    assert transcript.is_vertical_scroll_end and questions(transcript)[0] == "question 0"
    return transcript


async def test_blocks_trimmed_from_the_window_leave_its_blocks_at_once(
    make_app, db_path: Path, workspace: Path
) -> None:
    session_id = await long_session(db_path, workspace)
    app = make_app(work=short_answer, resume=session_id)
    async with app.run_test() as pilot:
        transcript = await every_block_then_the_end(pilot, app)
        mounted = list(transcript.blocks)

        # A reader of the window between the trim and the end of the removal (a streamed event, the
        # next page's load) sees the window the trim left, and where it begins.
        trim = transcript._trim()  # as `call_after_refresh` runs it: a task of its own if a coroutine
        trimming = asyncio.ensure_future(trim) if inspect.isawaitable(trim) else None
        await asyncio.sleep(0)  # it ran to its first wait (the removal's)
        kept = transcript.blocks
        assert len(kept) < len(mounted) and kept == mounted[len(mounted) - len(kept) :]
        assert block_seq(kept[0]) == transcript.oldest_seq and transcript.has_older
        if trimming is not None:
            await trimming
        await pilot.pause()
        assert transcript.blocks == kept
        assert [child for child in transcript.children if child in mounted] == kept
