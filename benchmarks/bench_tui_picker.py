"""Benchmark the resume picker through the TUI on 10k sessions / 1M events: open, and full-text search.

In process, with Textual's `run_test()` (120×40) over a real server on `generate_data.py`'s database
(the app's workspace is the busiest one). `bench_store_picker.py` measures the same queries at the
store; this one adds the screen: the worker, building the rows, the OptionList and the paint.

- Open: from `app.open_picker()` (what `/resume` calls) to the end of the first frame painted (see
  `bench_tui_lib.hook_frames`) with 50 rows in the list; Esc closes it between runs. Also with
  every workspace listed (a `PickerScreen(all_workspaces=True)` pushed the same way).
- Search: the search box is cleared (the unfiltered first page reloads), then a term is typed one key
  every 60 ms through the terminal driver's path; from the last key to the first frame painted with
  the search's results (rows carrying snippets, for the whole term). The picker waits for 50 ms of quiet typing
  (`SEARCH_DELAY`) before it queries: that wait is inside the figure, and also shown subtracted.

The reference is the store-level call the screen makes (`Server.list_sessions`, same arguments),
timed in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui
import generate_data

from harnez.server import Server
from harnez.tui.app import HarnezApp

TYPE_GAP = 0.06


async def main() -> None:
    """Open and search the picker through the TUI."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10 runs of each")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    runs = 10 if args.quick else args.runs
    path, meta = generate_data.ensure(args.sessions, args.events)
    lib.header(
        f"Resume picker through the TUI, {args.sessions:,} sessions / {args.events:,} events "
        "(SPEC §10: open ≤ 100 ms p95; full-text first results ≤ 150 ms p95)"
    )
    workspace = Path(meta["workspace_big"])

    async def open_server() -> Server:
        return await Server.open(path)

    app = HarnezApp(open_server, workspace, None)
    frames = FrameWatch()
    tui.hook_frames(app, frames.on_frame)
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: app.ready)
        await measure_open(app, frames, runs, workspace)
        await measure_search(app, frames, runs, workspace, meta)
        await pilot.pause(0.2)
        await pilot.press("ctrl+q")


class FrameWatch:
    """Notes the end of the first frame painted while a condition holds (checked as each frame ends)."""

    def __init__(self) -> None:
        self.condition = None
        self.moment: float | None = None

    def on_frame(self, moment: float, _: str | None) -> None:
        if self.condition is not None and self.moment is None and self.condition():
            self.moment = moment

    async def wait(self, condition, timeout: float = 30.0) -> float:
        """Arm the condition, then wait for a frame painted while it holds."""
        self.condition, self.moment = condition, None
        await tui.wait_until(lambda: self.moment is not None, timeout, step=0.001)
        self.condition = None
        return self.moment


async def measure_open(app: HarnezApp, frames: FrameWatch, runs: int, workspace: Path) -> None:
    """Open → 50 rows painted, for this workspace and for every workspace."""
    from textual.widgets import OptionList

    from harnez.tui.screens.picker import PickerScreen
    from harnez.tui.screens.session import SessionScreen

    def rows() -> int:
        return app.screen.query_one(OptionList).option_count if isinstance(app.screen, PickerScreen) else 0

    for all_workspaces in (False, True):
        times: list[float] = []
        for run in range(runs + 2):
            await tui.wait_until(lambda: isinstance(app.screen, SessionScreen))
            await asyncio.sleep(0.05)
            start = time.perf_counter()
            if all_workspaces:
                app.push_screen(PickerScreen(app.server, workspace, all_workspaces=True))
            else:
                app.open_picker()
            shown = await frames.wait(lambda: rows() >= 50)
            if run >= 2:
                times.append(shown - start)
            tui.send_key(app, "escape")
        reference = await lib.timed_runs(
            lambda: app.server.list_sessions(None, None if all_workspaces else workspace, None, 50), runs
        )
        p95 = lib.percentile(times, 95)
        scope = "every workspace" if all_workspaces else f"this workspace ({workspace.name})"
        lib.report(
            f"picker open, 50 rows painted, {scope}",
            lib.summary_ms(times),
            "≤ 100 ms p95",
            p95 <= 0.1,
            f"p95 {p95 / lib.percentile(reference, 95):.0f}× the store's first page "
            f"(p95 {lib.percentile(reference, 95) * lib.MS:.2f} ms)",
        )


async def measure_search(app: HarnezApp, frames: FrameWatch, runs: int, workspace: Path, meta: dict) -> None:
    """Type a term; last key → first frame with the search's rows."""
    from textual.widgets import Input, OptionList

    from harnez.tui.screens.picker import SEARCH_DELAY, PickerScreen

    app.open_picker()
    await tui.wait_until(lambda: isinstance(app.screen, PickerScreen) and app.screen.records)
    picker = app.screen
    options = picker.query_one(OptionList)
    search = picker.query_one("#picker-search", Input)

    def unfiltered() -> bool:
        return not search.value and not picker.snippets and options.option_count >= 50

    def results(term: str) -> bool:
        # The rows must answer the whole term: a search for a prefix typed earlier also has snippets.
        return (
            picker.shown_query == term
            and bool(picker.snippets)
            and options.option_count > 0
            and all(options.get_option_at_index(i).id in picker.snippets for i in range(options.option_count))
        )

    for term in (meta["common"], meta["rare"]):
        times: list[float] = []
        for run in range(runs + 1):
            search.value = ""
            await tui.wait_until(unfiltered)
            await asyncio.sleep(0.05)
            for letter in term[:-1]:
                tui.send_key(app, letter)
                await asyncio.sleep(TYPE_GAP)
            last = tui.send_key(app, term[-1])
            shown = await frames.wait(lambda: results(term))
            if run >= 1:
                times.append(shown - last)
        reference = await lib.timed_runs(lambda: app.server.list_sessions(term, workspace, None, 50), runs)
        p95 = lib.percentile(times, 95)
        ref95 = lib.percentile(reference, 95)
        lib.report(
            f"full text '{term}' in this workspace, last key → results painted",
            lib.summary_ms(times),
            "≤ 150 ms p95",
            p95 <= 0.15,
            f"p95 {(p95 - SEARCH_DELAY) * lib.MS:.0f} ms after the {SEARCH_DELAY * lib.MS:.0f} ms typing "
            f"pause, {(p95 - SEARCH_DELAY) / ref95:.1f}× the store's query (p95 {ref95 * lib.MS:.1f} ms)",
        )
    search.value = ""
    tui.send_key(app, "escape")


if __name__ == "__main__":
    lib.run(main)
