"""Benchmark how far streamed text on screen lags behind its emission, at 200 tokens/s.

In process, with Textual's `run_test()` (120×40) over a real server on a fresh database: a new
session, one task whose work emits `text-delta` events carrying numbered words (`w000123`) paced at
200/s (a blank line every 40 words, so the Markdown grows by paragraphs), through the store's group
commit, the event bus, the screen's subscription, the transcript and Textual's `MarkdownStream`.

On screen means painted: every frame is rendered to terminal sequences (`bench_tui_lib.hook_frames`)
and the numbered words in that painted output are read back, escape sequences removed. A word's lag
is the time from its `emit` to the end of the first frame that painted it (or a later word: text
arrives in order). Two references from the same run: the same at 20 tokens/s, and the delivery lag
of a plain `Server.subscribe` consumer in the same process during the 200/s stream (emit → event
received; bounded by the store's 20 ms group commit), which also gives each word's lag behind its
reception (on screen − received by that subscriber): the TUI's own share.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui

from harnez import events as ev
from harnez.server import Server
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.tui.app import HarnezApp

MARK = re.compile(r"w(\d{6})")


class NumberedWork:
    """Task work that emits `count` numbered words at `rate` per second, recording each emit time."""

    def __init__(self, rate: float, count: int) -> None:
        self.rate = rate
        self.count = count
        self.emitted: list[float] = []

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        start = time.perf_counter()
        for index in range(self.count):
            self.emitted.append(time.perf_counter())
            run.emit(ev.TextDelta(text=f"w{index:06d}" + ("\n\n" if (index + 1) % 40 == 0 else " ")))
            delay = start + (index + 1) / self.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="end"))
        return TaskOutcome("completed", 1)


async def measure(
    database: Path, workspace: Path, rate: float, seconds: float, with_subscriber: bool
) -> tuple[list[float], list[float], list[float]]:
    """(on-screen lags, subscriber delivery lags, on screen after delivery) in seconds for one stream."""
    from harnez.tui.screens.session import SessionScreen

    work = NumberedWork(rate, int(rate * seconds))

    async def open_server() -> Server:
        return await Server.open(database, work=work)

    app = HarnezApp(open_server, workspace, None)
    shown: dict[int, float] = {}
    seen = [-1]

    def on_frame(moment: float, text: str | None) -> None:
        numbers = [int(n) for n in MARK.findall(text or "")]
        if numbers and max(numbers) > seen[0]:
            for index in range(seen[0] + 1, max(numbers) + 1):
                shown[index] = moment
            seen[0] = max(numbers)

    tui.hook_frames(app, on_frame, with_text=True)
    delivered: dict[int, float] = {}
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: app.ready and isinstance(app.screen, SessionScreen))
        session_id = app.screen.session_id
        await app.server.submit(session_id, "Stream numbered words, please.")
        follower = (
            asyncio.create_task(subscribe(app.server, session_id, delivered)) if with_subscriber else None
        )
        await tui.wait_until(
            lambda: len(work.emitted) == work.count and seen[0] == work.count - 1, timeout=seconds + 30
        )
        await tui.wait_until(lambda: app.server.running(session_id) is None)
        if follower is not None:
            follower.cancel()
        await pilot.pause(0.2)
        await pilot.press("ctrl+q")
    lags = [shown[i] - work.emitted[i] for i in range(work.count)]
    return (
        lags,
        [delivered[i] - work.emitted[i] for i in delivered],
        [shown[i] - delivered[i] for i in delivered],
    )


async def subscribe(server: Server, session_id: str, delivered: dict[int, float]) -> None:
    """Record when each numbered word reaches a plain subscriber."""
    async for event in server.subscribe(session_id, after=0):
        if event.kind == "text-delta":
            match = MARK.search(event.body.to_payload().get("text", ""))
            if match:
                delivered[int(match.group(1))] = time.perf_counter()


async def main() -> None:
    """200 tokens/s with a subscriber alongside, then 20 tokens/s."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each stream (default 15 s)")
    parser.add_argument("--quick", action="store_true", help="5 s streams")
    args = parser.parse_args()
    seconds = 5.0 if args.quick else args.seconds
    lib.header("Streamed text on screen at 200 tokens/s (SPEC §10: ≤ 100 ms behind what was received)")
    home = tui.make_home()
    try:
        await measure(home.database, home.workspace, 50, 1.0, False)  # warm-up: imports, the database
        fast, delivery, after = await measure(home.database, home.workspace, 200, seconds, True)
        slow, _, _ = await measure(home.database, home.workspace, 20, seconds, False)
    finally:
        tui.remove_home(home)
    d50, s50 = lib.percentile(delivery, 50), lib.percentile(slow, 50)
    print(
        f"  reference: subscriber delivery during the 200/s stream {lib.summary_ms(delivery)}; "
        f"on screen at 20 tokens/s {lib.summary_ms(slow)}"
    )
    p95 = lib.percentile(fast, 95)
    lib.report(
        f"on screen at 200 tokens/s, {len(fast)} words over {seconds:.0f} s",
        lib.summary_ms(fast),
        "≤ 100 ms",
        p95 <= 0.1,
        f"p50 {lib.percentile(fast, 50) / d50:.1f}× subscriber delivery, "
        f"{lib.percentile(fast, 50) / s50:.2f}× at 20 tokens/s",
    )
    lib.report(
        "on screen after a subscriber received it (the TUI's own share)",
        lib.summary_ms(after),
        "≤ 100 ms",
        lib.percentile(after, 95) <= 0.1,
        "—",
    )


if __name__ == "__main__":
    lib.run(main)
