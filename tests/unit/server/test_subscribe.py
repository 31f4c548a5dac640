"""Subscribing after a cursor while events are appended concurrently: no gap, no duplicate."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server


async def _collect(server: Server, session_id: str, after: int, until: int) -> list[int]:
    seen: list[int] = []
    async for event in server.subscribe(session_id, after=after):
        seen.append(event.seq)
        if event.seq >= until:
            break
    return seen


async def test_subscribers_joining_during_thousands_of_appends_see_every_event_once(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.UserMessage(text="start")))
    total = 5000
    record = await server.get_session(draft.id)

    async def producer() -> None:
        for i in range(total - 1):
            server.store.events.append(record.num, record.id, Event(ev.TextDelta(text=f"t{i}")))
            if i % 50 == 0:
                await asyncio.sleep(0)
        await server.store.events.flush()

    async def late_subscriber(delay: float, after: int) -> list[int]:
        await asyncio.sleep(delay)
        return await _collect(server, draft.id, after, total)

    results = await asyncio.wait_for(
        asyncio.gather(
            producer(),
            late_subscriber(0, 0),
            late_subscriber(0.005, 0),
            late_subscriber(0.02, 1),
            late_subscriber(0.05, 100),
            late_subscriber(0.1, 0),
        ),
        timeout=60,
    )
    expected_starts = [1, 1, 2, 101, 1]
    for start, seen in zip(expected_starts, results[1:], strict=True):
        assert seen == list(range(start, total + 1))
    await server.close()


async def test_a_subscriber_after_the_last_event_only_gets_new_ones(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    for i in range(3):
        await server.append(draft.id, Event(ev.UserMessage(text=str(i))))
    received: list[int] = []

    async def listen() -> None:
        async for event in server.subscribe(draft.id, after=3):
            received.append(event.seq)
            if event.seq == 5:
                return

    listener = asyncio.create_task(listen())
    await asyncio.sleep(0.05)
    assert received == []
    await server.append(draft.id, Event(ev.UserMessage(text="4")))
    await server.append(draft.id, Event(ev.UserMessage(text="5")))
    await asyncio.wait_for(listener, 5)
    assert received == [4, 5]
    await server.close()


async def test_sequence_numbers_are_per_session_and_gapless(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path)
    a, b = server.create_session(workspace), server.create_session(workspace)
    for i in range(10):
        await server.append((a if i % 3 else b).id, Event(ev.UserMessage(text=str(i))))
    for draft in (a, b):
        seqs = [e.seq for e in await server.events_after(draft.id)]
        assert seqs == list(range(1, len(seqs) + 1))
    await server.close()


async def test_following_another_process_appends_by_polling(db_path: Path, workspace: Path) -> None:
    writer = await Server.open(db_path)
    draft = writer.create_session(workspace)
    await writer.append(draft.id, Event(ev.UserMessage(text="first")))
    reader = await Server.open(db_path)
    got: list[str] = []

    async def follow() -> None:
        async for event in reader.subscribe(draft.id, after=0, poll=0.02):
            got.append(event.body.text)
            if len(got) == 3:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    await writer.append(draft.id, Event(ev.UserMessage(text="second")))
    await writer.append(draft.id, Event(ev.UserMessage(text="third")))
    await asyncio.wait_for(task, 5)
    assert got == ["first", "second", "third"]
    await reader.close()
    await writer.close()
