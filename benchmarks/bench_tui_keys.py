"""Benchmark keystroke-to-frame latency in the prompt while an answer streams at 100 tokens/s.

In process, with Textual's `run_test()` (120×40) over a real server on a private copy of the seeded
database: `HarnezApp(resume=<id>)` opens a session with 10, 1,000 or 10,000 prior events, then a
task whose work emits one `text-delta` word every 10 ms (paced against the clock, a blank line every
40 words so the Markdown grows by paragraphs) streams through the store, the event bus and the
screen's subscription into the transcript.

Each keystroke is handed to the app the way its terminal driver does (`driver.send_message(Key)`,
only the byte parsing is skipped), at random gaps of 40-90 ms so keys do not lock to the stream.
Latency is measured from that moment to the end of the first frame painted (the hook in
`bench_tui_lib.hook_frames`, which also renders the frame to terminal sequences as a real terminal
run would) in which the prompt's text includes the key. The reference is the same keystrokes with
nothing streaming, on the 10-event session. The widgets mounted on the screen are counted to show
whether they stay bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui

from harnez import events as ev
from harnez.server import Server
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.tui.app import HarnezApp

SIZES = (10, 100, 1_000, 10_000, 100_000)
"""The seeded sessions (the same cached database as bench_tui_resume.py)."""
PRIOR = (10, 1_000, 10_000)
WORDS = ("stream", "render", "frame", "widget", "markdown", "token", "answer", "prompt", "layout", "update")


class StreamWork:
    """Task work that emits one word every `1/rate` seconds until stopped."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.stop = asyncio.Event()
        self.emitted = 0
        self.started_at = 0.0

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        self.started_at = start = time.perf_counter()
        while not self.stop.is_set():
            self.emitted += 1
            word = WORDS[self.emitted % len(WORDS)]
            run.emit(ev.TextDelta(text=word + ("\n\n" if self.emitted % 40 == 0 else " ")))
            delay = start + self.emitted / self.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        await run.emit_now(ev.TurnCompleted(turn=1, stop="end"))
        return TaskOutcome("completed", 1)

    @property
    def achieved_rate(self) -> float:
        """Tokens per second actually emitted."""
        return self.emitted / max(time.perf_counter() - self.started_at, 1e-9)


async def measure(
    database: Path, session_id: str, workspace: Path, keys: int, stream: bool
) -> tuple[list[float], int, float]:
    """(latencies in seconds, widgets mounted, tokens/s achieved) of `keys` keystrokes."""
    from harnez.tui.widgets.prompt import PromptInput

    work = StreamWork(100.0)

    async def open_server() -> Server:
        return await Server.open(database, work=work)

    app = HarnezApp(open_server, workspace, None, resume=session_id)
    typed = [""]
    pending: list[float] = []
    latencies: list[float] = []

    def on_frame(moment: float, _: str | None) -> None:
        if pending and app.screen.query(PromptInput) and app.screen.query_one(PromptInput).text == typed[0]:
            latencies.append(moment - pending.pop())

    tui.hook_frames(app, on_frame)
    rng = random.Random(7)
    tui.LOADED.clear()
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: bool(tui.LOADED))
        if stream:
            await app.server.submit(session_id, "Stream an answer, please.")
            await tui.wait_until(lambda: work.emitted >= 100)  # a second of streaming first
        for index in range(keys):
            letter = "abcdefghij"[index % 10]
            typed[0] += letter
            pending.append(tui.send_key(app, letter))
            await tui.wait_until(lambda: not pending, step=0.001)
            await asyncio.sleep(rng.uniform(0.04, 0.09))
        widgets = len(list(app.screen.query("*")))
        rate = work.achieved_rate if stream else 0.0
        work.stop.set()
        await tui.wait_until(lambda: app.server.running(session_id) is None)
        await pilot.pause(0.2)
        await pilot.press("ctrl+q")
    return latencies, widgets, rate


async def main() -> None:
    """Streaming at 10 / 1,000 / 10,000 prior events, and the idle reference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=150, help="keystrokes per case (default 150)")
    parser.add_argument("--quick", action="store_true", help="50 keystrokes per case")
    args = parser.parse_args()
    keys = 50 if args.quick else args.keys
    source, ids = tui.sessions_db(SIZES)
    lib.header("Keystroke to frame while streaming 100 tokens/s (SPEC §10: ≤ 16 ms p50, ≤ 50 ms p95, flat)")
    tui.note_loaded_batches()
    database = tui.private_copy(source)
    home = tui.make_home(database)
    try:
        session = dict(zip(SIZES, ids, strict=True))
        await measure(database, session[10], home.workspace, 10, stream=False)  # warm-up: imports
        idle, widgets, _ = await measure(database, session[10], home.workspace, keys, stream=False)
        idle50 = lib.percentile(idle, 50)
        print(
            f"  reference: no streaming, 10 prior events: {lib.summary_ms(idle)} ({widgets} widgets mounted)"
        )
        for prior in PRIOR:
            times, widgets, rate = await measure(database, session[prior], home.workspace, keys, stream=True)
            p50, p95 = lib.percentile(times, 50), lib.percentile(times, 95)
            lib.report(
                f"{prior:,} prior events, streaming {rate:.0f} tokens/s, {len(times)} keys",
                lib.summary_ms(times),
                "≤ 16 ms p50, ≤ 50 ms p95",
                p50 <= 0.016 and p95 <= 0.05,
                f"p50 {p50 / idle50:.1f}× idle; {widgets} widgets mounted",
            )
    finally:
        tui.remove_home(home)
        tui.remove_home(tui.Home(database.parent, database))


if __name__ == "__main__":
    lib.run(main)
