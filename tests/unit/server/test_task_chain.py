"""Prompts that arrive while a task ends: never stranded in a queue, never two tasks at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harnez import events as ev
from harnez.server import Server, TaskOutcome, TaskRun


class CountingWork:
    """Records how many tasks run at once; each yields a few times so prompts can slip in between."""

    def __init__(self) -> None:
        self.active = 0
        self.most = 0
        self.prompts: list[str] = []

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        self.active += 1
        self.most = max(self.most, self.active)
        self.prompts.append(run.prompt)
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            await run.emit_now(ev.TextDelta(text=f"done {run.prompt}"))
            return TaskOutcome("completed", 1)
        finally:
            self.active -= 1


async def test_prompts_sent_at_every_moment_of_a_task_all_run_one_at_a_time(
    db_path: Path, workspace: Path
) -> None:
    work = CountingWork()
    server = await Server.open(db_path, work=work)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "p0")
        # Fire prompts at staggered moments, including while each task is finishing.
        for index in range(1, 40):
            for _ in range(index % 5):
                await asyncio.sleep(0)
            await server.submit(session, f"p{index}")
        await server.wait(session)
        tasks = await server.store.tasks.of_session((await server.get_session(session)).num)
    finally:
        await server.close()
    assert work.most == 1
    assert sorted(work.prompts, key=lambda p: int(p[1:])) == [f"p{i}" for i in range(40)]
    assert work.prompts == [f"p{i}" for i in range(40)], "in the order they were sent"
    assert [t.state for t in tasks] == ["completed"] * 40


async def test_concurrent_submits_on_an_idle_session_start_one_task_and_queue_the_rest(
    db_path: Path, workspace: Path
) -> None:
    work = CountingWork()
    server = await Server.open(db_path, work=work)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "first")
        await server.wait(session)
        await asyncio.gather(*(server.submit(session, f"c{i}") for i in range(8)))
        await server.wait(session)
    finally:
        await server.close()
    assert work.most == 1 and len(work.prompts) == 9


async def test_cancel_stops_the_task_and_drops_the_queue_even_when_sent_at_once(
    db_path: Path, workspace: Path
) -> None:
    gate = asyncio.Event()
    ran: list[str] = []

    async def gated(run: TaskRun) -> TaskOutcome:
        ran.append(run.prompt)
        await gate.wait()
        return TaskOutcome("completed", 1)

    server = await Server.open(db_path, work=gated)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "a")
        await server.submit(session, "queued behind a")
        cancelling = asyncio.create_task(server.cancel(session))
        late = asyncio.create_task(server.submit(session, "sent after the cancel"))
        assert await cancelling
        await late
        gate.set()
        await server.wait(session)
        tasks = await server.store.tasks.of_session((await server.get_session(session)).num)
    finally:
        await server.close()
    assert [t.state for t in tasks] == ["cancelled", "cancelled", "completed"]
    assert ran == ["a", "sent after the cancel"]
