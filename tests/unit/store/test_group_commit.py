"""The group commit: the first event after a quiet interval is committed at once, later ones gathered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.events import Event
from harnez.store import Store
from harnez.store.events import EventLog
from harnez.store.sessions import SessionRecord

LONG_INTERVAL = 3600.0
"""An interval no test waits out: what is committed before `stop` was committed without waiting for it."""

WAIT = 10.0
"""Seconds a commit that should happen at once may take on a loaded machine before the test fails."""


async def settle() -> None:
    """Let the event loop run what is ready (no commit is due: the interval is an hour)."""
    for _ in range(10):
        await asyncio.sleep(0.01)


async def open_log(db_path: Path, session_id: str) -> tuple[Store, SessionRecord, EventLog]:
    """A store, one session in it, and a started event log whose interval no test waits out."""
    store = await Store.open(db_path)
    record = await store.sessions.insert(session_id, "/w", None)
    log = EventLog(store.db, flush_interval=LONG_INTERVAL)
    log.start()
    return store, record, log


async def test_a_quiet_log_commits_the_next_event_at_once_and_gathers_those_right_after(
    db_path: Path,
) -> None:
    store, record, log = await open_log(db_path, "ab" * 16)
    first = log.append(record.num, record.id, Event(ev.UserMessage(text="hello")))
    stored = await asyncio.wait_for(first, WAIT)  # never an interval's wait
    await settle()  # that commit's flush ends (what it finds pending meanwhile, it commits too)
    later = [log.append(record.num, record.id, Event(ev.ReasoningDelta(text=str(i)))) for i in range(3)]
    await settle()
    assert not any(future.done() for future in later)  # gathered for the next commit, an interval on
    await log.stop()
    assert [(await future).seq for future in later] == [stored.seq + 1, stored.seq + 2, stored.seq + 3]
    await store.close()


async def test_events_appended_together_after_a_quiet_interval_share_one_commit(db_path: Path) -> None:
    store = await Store.open(db_path)
    record = await store.sessions.insert("cd" * 16, "/w", None)
    commits: list[list[int]] = []
    log = EventLog(store.db, lambda events: commits.append([e.seq for e in events]), LONG_INTERVAL)
    log.start()
    # (Not an answer's first words: those end their commit, below.)
    burst = [log.append(record.num, record.id, Event(ev.ReasoningDelta(text=str(i)))) for i in range(5)]
    await asyncio.wait_for(asyncio.gather(*burst), WAIT)
    assert len(commits) == 1 and len(commits[0]) == 5
    await log.stop()
    await store.close()


async def test_a_turns_events_and_an_answers_first_words_are_committed_at_once_the_words_after_gathered(
    db_path: Path,
) -> None:
    store, record, log = await open_log(db_path, "ef" * 16)
    await asyncio.wait_for(log.append(record.num, record.id, Event(ev.UserMessage(text="hi"))), WAIT)
    await settle()
    # Not a streamed delta: committed at once, though an interval has not passed since the last commit.
    await asyncio.wait_for(log.append(record.num, record.id, Event(ev.TurnStarted(turn=1))), WAIT)
    await settle()
    first = log.append(record.num, record.id, Event(ev.TextDelta(text="The")))
    await asyncio.wait_for(first, WAIT)
    await settle()
    more = log.append(record.num, record.id, Event(ev.TextDelta(text=" answer")))
    await settle()
    assert not more.done()  # later words wait for the interval as before
    ended = log.append(record.num, record.id, Event(ev.TurnCompleted(turn=1, stop_reason="end_turn")))
    await asyncio.wait_for(asyncio.gather(more, ended), WAIT)  # the turn's end takes the words along
    await settle()
    again = log.append(record.num, record.id, Event(ev.TextDelta(text="Next")))  # a new answer's first words
    await asyncio.wait_for(again, WAIT)
    await log.stop()
    await store.close()


async def test_an_answers_first_words_end_their_commit_when_the_whole_turn_comes_at_once(
    db_path: Path,
) -> None:
    store = await Store.open(db_path)
    record = await store.sessions.insert("ab" * 16, "/w", None)
    commits: list[list[str]] = []
    log = EventLog(store.db, lambda events: commits.append([e.body.kind for e in events]), LONG_INTERVAL)
    log.start()
    await asyncio.wait_for(log.append(record.num, record.id, Event(ev.UserMessage(text="hi"))), WAIT)
    turn = [
        log.append(record.num, record.id, Event(body))
        for body in (
            ev.TextDelta(text="The"),
            ev.TextDelta(text=" answer."),
            ev.TurnCompleted(turn=1, stop_reason="end_turn"),
        )
    ]
    stored = await asyncio.wait_for(asyncio.gather(*turn), WAIT)
    assert commits[1:] == [["text-delta"], ["text-delta", "turn-completed"]]
    assert [event.seq for event in stored] == [2, 3, 4]
    await log.stop()
    await store.close()


async def test_an_event_that_hurries_starts_its_own_commit_without_the_flusher(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def idle_flusher(self: EventLog) -> None:  # a flusher that never commits anything
        await asyncio.Event().wait()

    monkeypatch.setattr(EventLog, "_run", idle_flusher)
    store, record, log = await open_log(db_path, "cd" * 16)
    started = log.append(record.num, record.id, Event(ev.Started(model="m", wire="openai-chat")))
    words = log.append(record.num, record.id, Event(ev.TextDelta(text="first words")))
    assert (await asyncio.wait_for(started, WAIT)).seq == 1
    assert (await asyncio.wait_for(words, WAIT)).seq == 2  # an answer's first words hurry too
    later = log.append(record.num, record.id, Event(ev.TextDelta(text=" and more")))
    await settle()
    assert not later.done()  # a delta after them waits for the flusher's interval
    await log.stop()  # which stop stands in for
    assert (await later).seq == 3
    await store.close()
