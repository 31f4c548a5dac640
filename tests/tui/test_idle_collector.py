"""Full garbage collections run while the person pauses, never right after a key."""

from __future__ import annotations

import gc
import weakref

from harnez.tui.collector import IDLE_AFTER, THAW_AFTER, WORTH_COLLECTING, IdleCollector
from tests.tui.helpers import GatedWork, wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def young_collections(count: int) -> None:
    """Make `count` generation-1 collections, as a busy app does, so a full one becomes due."""
    for _ in range(count):
        gc.collect(1)


def test_a_full_collection_waits_for_a_pause_and_for_something_to_collect() -> None:
    clock = Clock()
    collector = IdleCollector(clock)
    gc.collect()
    assert not collector.collect_if_idle()  # nothing collected young since the last full one
    young_collections(WORTH_COLLECTING)
    collector.input_seen()
    clock.now += IDLE_AFTER / 2
    assert not collector.collect_if_idle() and gc.get_count()[2] >= WORTH_COLLECTING  # a key just now
    clock.now += IDLE_AFTER
    assert collector.collect_if_idle() and gc.get_count()[2] == 0  # paused: collected in full
    young_collections(WORTH_COLLECTING)
    gc.disable()
    try:
        assert not collector.collect_if_idle()  # the app paused the collector (start-up): left alone
    finally:
        gc.enable()


class Recording(IdleCollector):
    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.ran: list[bool] = []

    def collect_if_idle(self) -> bool:
        self.ran.append(super().collect_if_idle())
        return self.ran[-1]


async def test_the_app_counts_keys_as_input_and_collects_on_its_timer(make_app) -> None:
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        clock = Clock()
        app._collector = collector = Recording(clock)
        clock.now += 2 * IDLE_AFTER
        await pilot.press("x")
        young_collections(WORTH_COLLECTING)
        assert not collector.collect_if_idle()  # the key counted as input
        clock.now += IDLE_AFTER
        await wait_for(
            pilot, lambda: True in collector.ran, "a full collection on the app's timer", tries=2000
        )


def test_no_idle_collection_while_a_task_runs() -> None:
    clock, running = Clock(), [True]
    collector = IdleCollector(clock, busy=lambda: running[0])
    young_collections(WORTH_COLLECTING)
    clock.now += 2 * IDLE_AFTER
    assert not collector.collect_if_idle()  # an answer streams: nobody types, but the frames are watched
    running[0] = False
    assert collector.collect_if_idle()


async def test_the_app_holds_idle_collections_while_its_task_runs(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        clock = Clock()
        app._collector = collector = IdleCollector(clock, busy=app._tasks_run)
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: work.started == 1, "the task running")
        young_collections(WORTH_COLLECTING)
        clock.now += 2 * IDLE_AFTER
        assert not collector.collect_if_idle()
        assert work.gate is not None
        work.gate.set()
        await wait_for(pilot, lambda: not app.server.any_running(), "the task ended")
        assert collector.collect_if_idle()


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_full_collection_during_a_task_freezes_its_survivors_until_the_pause_after_it() -> None:
    clock, running = Clock(), [True]
    collector = IdleCollector(clock, busy=lambda: running[0])
    collector.install()
    try:
        kept = Cycle()
        alive = weakref.ref(kept)
        frozen = gc.get_freeze_count()
        gc.collect()  # Python's own full collection while an answer streams
        assert gc.get_freeze_count() > frozen, "the survivors frozen: the next one does not walk them"
        del kept
        gc.collect()
        assert alive() is not None, "frozen garbage waits for the pause after the task"
        clock.now += THAW_AFTER
        assert not collector.collect_if_idle()  # still running
        running[0] = False
        collector.input_seen()
        clock.now += 2 * IDLE_AFTER
        assert not collector.collect_if_idle(), "a longer pause than the usual one"
        clock.now += THAW_AFTER
        assert collector.collect_if_idle()  # the first long pause after it: everything walked once
        assert alive() is None
        assert gc.get_freeze_count() > 0, "frozen again, as at start-up"
        gc.collect()
        assert not collector.collect_if_idle(), "once"
    finally:
        collector.remove()
    assert collector.after_collection not in gc.callbacks


async def test_the_app_freezes_a_running_tasks_collections_and_stops_when_it_quits(make_app) -> None:
    work = GatedWork()
    app = make_app(work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        hook = app._collector.after_collection
        assert hook in gc.callbacks
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: work.started == 1, "the task running")
        frozen = gc.get_freeze_count()
        gc.collect()
        assert gc.get_freeze_count() > frozen
        assert work.gate is not None
        work.gate.set()
        await wait_for(pilot, lambda: not app.server.any_running(), "the task ended")
    assert hook not in gc.callbacks
