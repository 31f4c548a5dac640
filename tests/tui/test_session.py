"""The session screen over a real server: sending, streaming, queueing, cancelling, titles, replay."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, DiffView, TaskEndBlock, ToolBlock, UserBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine, TitleBar
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import ANSWER_MARKDOWN, GatedWork, failing_work, retry_work, wait_for


def ends(app) -> list[TaskEndBlock]:
    return list(app.screen.query(TaskEndBlock))


async def send(pilot, text: str) -> None:
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.load_text(text)
    await pilot.press("enter")


async def task_running(pilot, app, prompt: str) -> None:
    """Once the app is ready, send `prompt` and wait until its task runs."""
    await wait_for(pilot, lambda: app.ready)
    await send(pilot, prompt)
    await wait_for(pilot, lambda: app.screen.query_one(PromptInput).running)


async def test_an_empty_session_leaves_no_picker_entry(make_app, db_path: Path) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        assert isinstance(app.screen, SessionScreen)
        assert app.screen.query_one(TitleBar).title == "New session"
        await pilot.press("ctrl+q")
    server = await Server.open(db_path)
    try:
        assert (await server.list_sessions()).sessions == []
    finally:
        await server.close()


async def test_a_prompt_streams_a_markdown_answer_with_a_tool_diff(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "Say hello")
        await wait_for(pilot, lambda: ends(app), "task end")
        screen = app.screen
        assert [b.text for b in screen.query(UserBlock)] == ["Say hello"]
        answers = [b.text for b in screen.query(AssistantBlock) if b.display]
        assert answers == ["".join(ANSWER_MARKDOWN), "Done: `main.py` now says **hello**."]
        tool = screen.query_one(ToolBlock)
        assert tool.tool_name == "edit" and "+print('hello')" in tool.query_one(DiffView).diff
        assert ends(app)[0].stop == "completed"
        status = screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.state == "idle", "the status line shows the end")
        assert (status.tokens_in, status.tokens_out, status.cost) == (1200, 80, "$0.25")


async def test_a_prompt_sent_while_a_task_runs_is_queued_then_runs(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "first")
        await wait_for(pilot, lambda: app.screen.query_one(StatusLine).state == "running")
        await send(pilot, "second")
        await wait_for(pilot, lambda: app.screen.query("UserBlock.-queued"), "queued block")
        await wait_for(
            pilot, lambda: app.screen.query_one(StatusLine).state == "running · 1 queued", "queued"
        )
        work.release()
        await wait_for(pilot, lambda: work.started == 2 and work.gate is not None, "second task")
        work.release()
        await wait_for(pilot, lambda: len(ends(app)) == 2, "both tasks end")
        assert [b.text for b in app.screen.query("UserBlock.-prompt")] == ["first", "second"]
        await wait_for(pilot, lambda: app.screen.query_one(StatusLine).state == "idle", "idle")


async def test_ctrl_s_sends_a_steering_message_into_the_running_task(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await task_running(pilot, app, "first")
        app.screen.query_one(PromptInput).load_text("use tabs")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen.query_one("#steering-waits").display, "shown waiting")
        work.release()
        await wait_for(pilot, lambda: ends(app))
        assert work.steering == ["use tabs"]


async def test_escape_cancels_the_running_task(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await task_running(pilot, app, "long job")
        await pilot.press("escape")
        await wait_for(pilot, lambda: ends(app), "task end")
        assert ends(app)[0].stop == "cancelled"
        assert app.server.running(app.screen.session_id) is None


async def test_prompts_queued_behind_a_cancelled_task_show_they_were_dropped(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await task_running(pilot, app, "long job")
        await send(pilot, "next job")
        await wait_for(pilot, lambda: app.screen.query("UserBlock.-queued"), "queued block")
        await pilot.press("escape")
        await wait_for(pilot, lambda: ends(app), "task end")
        assert [b.text for b in app.screen.query("UserBlock.-dropped")] == ["next job"]
        assert not app.screen.query("UserBlock.-queued")
        first = app.screen
        await app.open_session(first.session_id)  # drawn again from the stored events: the same
        await wait_for(pilot, lambda: app.screen is not first and ends(app), "reopened")
        assert [b.text for b in app.screen.query("UserBlock.-dropped")] == ["next job"]


async def test_a_prompt_queued_while_the_cancel_was_under_way_still_runs_and_is_not_dropped(
    make_app, db_path: Path
) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(db_path.parent, model="scripted/demo")
    events = [
        Event(ev.UserMessage(text="long job", mode="prompt"), task=1),
        Event(ev.PromptQueued(text="dropped job"), task=2),
        Event(ev.PromptQueued(text="late job"), task=3),  # queued once the cancel had dropped task 2
        Event(ev.Finished(stop="cancelled", turns=1, error=None), task=1),
        Event(ev.UserMessage(text="late job", mode="prompt"), task=3),
        Event(ev.Finished(stop="completed", turns=1, error=None), task=3),
    ]
    record = await server.persist(draft.id)
    await server.store.events.append_many(record.num, record.id, events)
    await server.close()
    app = make_app(resume=draft.id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: len(ends(app)) == 2, "shown")
        assert [b.text for b in app.screen.query("UserBlock.-dropped")] == ["dropped job"]
        assert [b.text for b in app.screen.query("UserBlock.-queued")] == ["late job"]


async def test_a_failed_task_shows_the_error_and_the_reason(make_app) -> None:
    app = make_app(failing_work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "try")
        await wait_for(pilot, lambda: ends(app))
        end = ends(app)[0]
        assert end.stop == "failed" and "401" in str(end.render())
        assert "OPENAI_API_KEY" in str(app.screen.query_one("NoticeBlock.-error").render())


async def test_a_retried_turn_discards_its_partial_answer(make_app) -> None:
    app = make_app(retry_work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "go")
        await wait_for(pilot, lambda: ends(app))
        assert [b.text for b in app.screen.query(AssistantBlock) if b.display] == ["final answer"]
        notice = str(app.screen.query_one("NoticeBlock.-warning").render())
        assert notice == "↻ Retrying (attempt 2, in 0.5 s): overloaded. The partial answer was discarded."


async def test_session_name_renames_the_header_and_the_store(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "hello")
        await wait_for(pilot, lambda: ends(app))
        await send(pilot, "/session-name  Greeting   work ")
        assert app.screen.query_one(TitleBar).title == "Greeting work"
        assert app.screen.query_one(StatusLine).title == "Greeting work"
        record = await app.server.get_session(app.screen.session_id)
        assert (record.title, record.title_source) == ("Greeting work", "user")


async def test_a_title_too_long_for_the_header_shows_cut_not_blank(make_app) -> None:
    title = "src/harnez/tui/widgets/completion_menu_ranking_for_paths_with_spaces.py"  # one long word
    app = make_app()
    async with app.run_test(size=(60, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, f"/session-name {title}")
        await pilot.pause()
        header = app.screen.query_one(TitleBar).render_line(0).text
        assert "harnez  src/harnez/tui/" in header and header.rstrip().endswith("…")


async def test_a_title_changed_elsewhere_updates_the_header_live(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "hello")
        await wait_for(pilot, lambda: ends(app))
        assert await app.server.set_automatic_title(
            app.screen.session_id, "Friendly greeting", "keywords/yake"
        )
        await wait_for(
            pilot, lambda: app.screen.query_one(TitleBar).title == "Friendly greeting", "live title"
        )


async def test_reopening_a_session_replays_the_same_transcript(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "Say hello")
        await wait_for(pilot, lambda: ends(app))
        session_id = app.screen.session_id
        first = [type(b).__name__ for b in app.screen.query_one(Transcript).blocks]
        await pilot.press("ctrl+q")
    again = make_app(resume=session_id[:8])
    async with again.run_test() as pilot:
        await wait_for(
            pilot,
            lambda: (
                again.ready
                and again.screen.query(TaskEndBlock)
                and not again.screen.query_one(Transcript).mounting_older
            ),
        )
        assert [type(b).__name__ for b in again.screen.query_one(Transcript).blocks] == first
        status = again.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.tokens_in == 1200, "session totals")
        assert (status.tokens_out, status.cost, status.context) == (80, "$0.25", "1.3k/32k (4%)")


async def test_totals_count_the_whole_session_not_only_the_rendered_window(make_app, db_path: Path) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(db_path.parent, model="scripted/demo")
    events = [Event(ev.Started(model="scripted/demo", wire="openai-chat", context_window=100_000))]
    events += [Event(ev.Usage(input=10, output=2, cache_read=5)), Event(ev.Cost(usd=0.5))] * 3
    events += [Event(ev.TextDelta(text=f"chunk {n} ")) for n in range(500)]
    events += [Event(ev.Cost(usd=None))]
    record = await server.persist(draft.id)
    await server.store.events.append_many(record.num, record.id, events)  # one transaction, not 507 commits
    await server.close()
    app = make_app(resume=draft.id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.tokens_in == 30, "totals beyond the window")
        # One unpriced call: no total is shown (never an invented or partial figure), marked unpriced.
        assert (status.tokens_out, status.cost, status.unpriced, status.context) == (
            6,
            "",
            True,
            "17/100k (0%)",
        )


async def test_up_recalls_the_prompts_sent_before_the_rendered_window(make_app, db_path: Path) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(db_path.parent, model="scripted/demo")
    events = [
        Event(ev.UserMessage(text="the first prompt", mode="prompt")),
        Event(ev.ShellLine(command="make test", output="ok", exit_code=0)),
        Event(ev.PromptQueued(text="a queued one")),
        Event(ev.UserMessage(text="a queued one", mode="prompt")),
    ]
    events += [Event(ev.TextDelta(text=f"chunk {n} ")) for n in range(300)]  # a long answer
    events += [Event(ev.Finished(stop="completed", turns=1, error=None))]
    events += [Event(ev.UserMessage(text="the last prompt", mode="prompt"))]
    record = await server.persist(draft.id)
    await server.store.events.append_many(record.num, record.id, events)
    await server.close()
    app = make_app(resume=draft.id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt = app.screen.query_one(PromptInput)
        await wait_for(pilot, lambda: len(prompt.prompt_history) == 4, "the older prompts read")
        recalled = []
        for _ in range(5):
            await pilot.press("up")
            recalled.append(prompt.text)
        assert recalled == [
            "the last prompt",
            "a queued one",
            "!make test",
            "the first prompt",
            "the first prompt",
        ]


async def test_an_unknown_session_id_exits_with_code_2(make_app) -> None:
    app = make_app(resume="abcdef")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.return_code is not None, "exit")
    assert app.return_code == 2


async def test_events_appended_by_another_process_appear_without_reopening(make_app, db_path: Path) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "Say hello")
        await wait_for(pilot, lambda: ends(app))
        session_id = app.screen.session_id
        other = await Server.open(db_path)  # a second server on the same file, as another process would
        try:
            await other.rename(session_id, "Named in another terminal")
            await other.append(session_id, Event(ev.TextDelta(text="appended-elsewhere-77")))
        finally:
            await other.close()
        await wait_for(
            pilot,
            lambda: app.screen.query_one(TitleBar).title == "Named in another terminal",
            "title from the store",
            tries=1000,
        )
        await wait_for(
            pilot,
            lambda: any("appended-elsewhere-77" in block.text for block in app.screen.query(AssistantBlock)),
            "text",
            tries=1000,
        )


async def test_the_first_frame_takes_keys_before_the_server_is_open(db_path: Path, workspace: Path) -> None:
    gate = asyncio.Event()
    opened: list[Server] = []

    async def slow_open() -> Server:
        await gate.wait()  # a slow disk, a migration: the prompt must not wait for it
        opened.append(await Server.open(db_path, work=GatedWork()))
        return opened[-1]

    app = HarnezApp(slow_open, workspace, None)
    try:
        async with app.run_test() as pilot:
            await wait_for(
                pilot, lambda: isinstance(app.screen, SessionScreen), "session screen as first frame"
            )
            screen = app.screen
            assert not screen.attached and app.screen.query_one(StatusLine).state == "opening…"
            assert isinstance(app.focused, PromptInput)
            await pilot.press(*"typed early", "enter")
            await wait_for(pilot, lambda: "1 waiting" in screen.query_one(StatusLine).state, "held prompt")
            gate.set()
            await wait_for(pilot, lambda: app.ready, "attached")
            await wait_for(
                pilot,
                lambda: [b.text for b in screen.query("UserBlock.-prompt")] == ["typed early"],
                "the early prompt sent once the server opened",
            )
            assert app.screen is screen
    finally:
        for server in opened:
            await server.close()


async def test_a_prompt_refused_because_another_process_runs_the_session_stays_in_the_prompt(
    make_app, db_path: Path, workspace: Path
) -> None:
    """The refusal said to send the prompt again once the other task ends; the prompt box was empty."""
    import sqlite3
    import subprocess
    import sys

    from harnez.store.tasks import process_start
    from tests.tui.helpers import seed_database

    (session_id,) = await seed_database(db_path, workspace, [("hello", None)])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with sqlite3.connect(db_path) as db:  # a task that Harnez process runs in the session now
            (num,) = db.execute("SELECT num FROM sessions WHERE id = ?", (session_id,)).fetchone()
            db.execute(
                "INSERT INTO tasks (session, state, input, model, runner_pid, runner_start, created_at) "
                "VALUES (?, 'running', 'theirs', NULL, ?, ?, 0)",
                (num, other.pid, process_start(other.pid)),
            )
        app = make_app(resume=session_id)
        async with app.run_test(notifications=True) as pilot:
            await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
            prompt = app.screen.query_one(PromptInput)
            prompt.load_text("a prompt written\nwith care")
            await pilot.press("enter")
            await wait_for(
                pilot,
                lambda: any("Another Harnez process" in str(n.message) for n in app._notifications),
                "the refusal",
            )
            assert prompt.text == "a prompt written\nwith care"
    finally:
        other.kill()
        other.wait()


async def test_a_session_whose_runner_died_after_the_app_opened_ends_interrupted_when_listed_or_opened(
    make_app, db_path: Path, workspace: Path
) -> None:
    """A process killed mid-task after this app opened the database: the picker kept listing its
    session 'running' (only an opening closed the task), and its screen, opened, showed it idle with
    no end until a prompt was sent."""
    import sqlite3
    import subprocess
    import sys

    from harnez.tui.widgets.blocks import TaskEndBlock
    from tests.tui.helpers import seed_database

    shown, listed, opened = await seed_database(
        db_path, workspace, [("hello", None), ("listed", None), ("opened", None)]
    )
    app = make_app(resume=shown)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        with sqlite3.connect(db_path) as db:  # each with a task its runner left when it was killed
            for session_id in (listed, opened):
                (num,) = db.execute("SELECT num FROM sessions WHERE id = ?", (session_id,)).fetchone()
                db.execute(
                    "INSERT INTO tasks (session, state, input, model, runner_pid, runner_start, created_at) "
                    "VALUES (?, 'running', 'theirs', NULL, ?, NULL, 0)",
                    (num, dead.pid),
                )
                db.execute("UPDATE sessions SET status = 'running' WHERE num = ?", (num,))
        record = await app.server.get_session(listed)
        assert record.status == "running"
        assert (await app.server.reload_sessions([record]))[listed].status == "interrupted"  # as the picker

        await app.open_session(opened)
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, SessionScreen)
                and [b.stop for b in app.screen.query(TaskEndBlock)] == ["completed", "interrupted"]
            ),
            "the dead task's end shown",
        )
        assert (await app.server.get_session(opened)).status == "interrupted"


async def test_a_session_deleted_by_another_process_while_shown_says_so_and_the_app_stays(
    make_app, db_path: Path, workspace: Path
) -> None:
    """Another terminal's picker deleted the session shown here: the app crashed with a traceback
    (SessionNotFoundError from the events it follows) and exited 1."""
    from tests.tui.helpers import seed_database

    (session_id,) = await seed_database(db_path, workspace, [("hello", None)])
    app = make_app(resume=session_id)
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        other = await Server.open(db_path)  # another process's server, as far as the store can tell
        try:
            await other.delete_session(session_id)
        finally:
            await other.close()
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.state == "deleted", "the status says so")
        assert any("This session was deleted" in str(n.message) for n in app._notifications)
        prompt = app.screen.query_one(PromptInput)
        prompt.load_text("still there?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("No session" in str(n.message) for n in app._notifications))
        assert prompt.text == "still there?" and app.is_running
