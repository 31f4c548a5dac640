"""The transcript keeps a window of blocks mounted: a few heights of the view while it follows the end,
whatever the session's length; what the person scrolled up to read stays until they come back."""

from __future__ import annotations

from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import TaskEndBlock, UserBlock
from harnez.tui.widgets.transcript import KEEP_SCREENS, Transcript
from tests.tui.helpers import wait_for

EXCHANGES = 60


async def short_answer(run: TaskRun) -> TaskOutcome:
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.TextDelta(text="A short answer."))
    await run.emit_now(ev.TurnCompleted(turn=1, stop="end"))
    return TaskOutcome("completed", 1)


async def long_session(db_path: Path, workspace: Path) -> str:
    """A stored session of `EXCHANGES` prompts, each answered and finished (3 events, 3 blocks)."""
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace, model="scripted/demo")
        record = await server.persist(draft.id)
        events: list[Event] = []
        for n in range(EXCHANGES):
            events += [
                Event(ev.UserMessage(text=f"question {n}", mode="prompt")),
                Event(ev.TextDelta(text=f"answer {n}")),
                Event(ev.Finished(stop="completed", turns=1, error=None)),
            ]
        await server.store.events.append_many(record.num, record.id, events)
        return draft.id
    finally:
        await server.close()


def questions(transcript: Transcript) -> list[str]:
    return [block.text for block in transcript.blocks if isinstance(block, UserBlock)]


def covered(transcript: Transcript) -> int:
    """The lines the mounted blocks take, with their margins."""
    return sum(block.virtual_region_with_margin.height for block in transcript.blocks)


async def test_a_long_session_keeps_a_few_screens_mounted_and_the_rest_on_demand(
    make_app, db_path: Path, workspace: Path
) -> None:
    session_id = await long_session(db_path, workspace)
    app = make_app(work=short_answer, resume=session_id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        view = transcript.scrollable_content_region.height
        # All 180 stored events were read (one page of 200); only the newest screens stay mounted.
        await wait_for(pilot, lambda: 0 < len(questions(transcript)) < EXCHANGES, "the window trimmed")
        shown = questions(transcript)
        assert shown[-1] == f"question {EXCHANGES - 1}"
        assert shown == [f"question {n}" for n in range(EXCHANGES - len(shown), EXCHANGES)]
        assert covered(transcript) >= KEEP_SCREENS * view, "still a full window to scroll back through"
        assert transcript.has_older and transcript.oldest_seq > 1

        # Scrolled to the top, the older events come back above.
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: questions(transcript)[0] == "question 0", "older pages loaded")
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
