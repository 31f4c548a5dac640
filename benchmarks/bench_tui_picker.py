"""Benchmark the resume picker: `harnez --resume` launch → first page, then open, filter and search.

Launch (a real process): `harnez --resume` in a 120×40 pty over `generate_data.py`'s database, in its
busiest workspace, from the fork to the first row painted (" · active " on screen); runs alternate with
the bare Textual app's first frame (`bench_tui_lib.bare_app_script`), the reference. The generated
workspaces are invented paths, so harnez is started through a two-line launcher that names the workspace
(`cli._workspace`) and calls `cli.main(["--resume"])`. `--before DIR` also launches the harnez code in
DIR (e.g. `git archive <commit> | tar -x -C DIR`) the same way, for a before/after figure in one run.

The rest in process, with Textual's `run_test()` (120×40) over a real server on `generate_data.py`'s database
(the app's workspace is the busiest one). `bench_store_picker.py` measures the same queries at the
store; this one adds the screen: the worker, building the rows, the OptionList and the paint.

- Open: from `app.open_picker()` (what `/resume` calls) to the end of the first frame painted (see
  `bench_tui_lib.hook_frames`) with the first page's rows: those that fit the screen, of the 50 read (the
  picker lists the rest when the selection nears them); Esc closes it between runs. Also with every
  workspace listed (a `PickerScreen(all_workspaces=True)` pushed the same way).
- Filter: a title word typed one key every 60 ms; from the last key to the first frame painted with
  the title filter's rows for the whole word (`shown_query` is the word, no snippets).
- Lists: a page of rows built anew (the row cache emptied first, as for a term not typed before or a
  picker opened after launch) put in the list (`_replace_rows`) → the first frame painted, for the
  unfiltered page and the common word's search results; the reference is the same with every row of
  the page listed at once (what the picker did before it listed only the rows that fit), alternating.
  The open, filter and search figures repeat the same typing, so their rows mostly come from the cache.
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
PARTS = ("launch", "open", "filter", "search", "lists")
BARE_TEXT = "bare textual app ready"
FIRST_ROW = " · active "
"""Text of every picker row (its activity), never of the splash or the heading."""
LAUNCHER = """
import sys
from pathlib import Path

from harnez import cli

cli._workspace = lambda: Path(sys.argv[1])  # a workspace of the generated data: no such folder here
sys.exit(cli.main(["--resume"]))
"""


async def main() -> None:
    """Open and search the picker through the TUI."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10 runs of each")
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--before", type=Path, metavar="DIR", help="also launch the harnez code in DIR")
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"what to measure, comma-separated (default {','.join(PARTS)})",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    runs = 10 if args.quick else args.runs
    path, meta = generate_data.ensure(args.sessions, args.events)
    lib.header(
        f"Resume picker, {args.sessions:,} sessions / {args.events:,} events (issue #17: launch → first "
        "page ≤ bare first frame + 100 ms; filter ≤ 30 ms; open ≤ 100 ms p95; full text ≤ 150 ms p95)"
    )
    workspace = Path(meta["workspace_big"])
    if "launch" in parts:
        measure_launch(path, workspace, runs, args.before)
    if parts & {"open", "filter", "search", "lists"}:
        await measure_in_process(path, workspace, runs, meta, parts)


async def measure_in_process(path: Path, workspace: Path, runs: int, meta: dict, parts: set[str]) -> None:
    """Open, filter and search through an app under `run_test()`."""

    async def open_server() -> Server:
        return await Server.open(path)

    app = HarnezApp(open_server, workspace, None)
    frames = FrameWatch()
    tui.hook_frames(app, frames.on_frame)
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: app.ready)
        if "open" in parts:
            await measure_open(app, frames, runs, workspace)
        if "filter" in parts:
            await measure_filter(app, frames, runs, meta["title_word"])
        if "search" in parts:
            await measure_search(app, frames, runs, workspace, meta)
        if "lists" in parts:
            await measure_lists(app, frames, runs, workspace, meta["common"])
        await pilot.pause(0.2)
        await pilot.press("ctrl+q")


def measure_launch(database: Path, workspace: Path, runs: int, before: Path | None) -> None:
    """`harnez --resume` → first row painted, alternating with the bare app's first frame."""
    home = tui.make_home(database)
    launcher = home.root / "launch_resume.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    bare = [str(tui.PYTHON), str(tui.bare_app_script(home.root))]
    kinds = {"bare": (bare, {}), "harnez": ([str(tui.PYTHON), str(launcher), str(workspace)], {})}
    if before is not None:
        kinds["before"] = (kinds["harnez"][0], {"PYTHONPATH": str(before.resolve())})
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        for run in range(runs + 1):  # the first round warms the page cache
            for kind, (argv, extra) in kinds.items():
                process = tui.launch(argv, {**home.env(), **extra}, home.workspace)
                shown = process.wait_for([BARE_TEXT if kind == "bare" else FIRST_ROW])
                process.stop()
                if run:
                    times[kind].append(shown)
    finally:
        tui.remove_home(home)
    report_launch(times)


def report_launch(times: dict[str, list[float]]) -> None:
    """Medians and p90 of the launches, against the bare app's first frame."""
    bare = lib.median(times["bare"])
    print(f"  reference: bare Textual app first frame {lib.summary_ms(times['bare'])}")
    for kind, label in (("harnez", "this code"), ("before", "the code given by --before")):
        if kind not in times:
            continue
        shown = lib.median(times[kind])
        lib.report(
            f"harnez --resume, launch → first page painted ({label})",
            f"median {shown * lib.MS:.0f} ms, p90 {lib.percentile(times[kind], 90) * lib.MS:.0f} ms",
            "≤ bare + 100 ms",
            shown <= bare + 0.1,
            f"{shown / bare:.2f}× bare (bare median {bare * lib.MS:.0f} ms, "
            f"+{(shown - bare) * lib.MS:.0f} ms)",
        )


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
            shown = await frames.wait(lambda: rows() > 0)
            if run >= 2:
                times.append(shown - start)
            tui.send_key(app, "escape")
        reference = await lib.timed_runs(
            lambda: app.server.list_sessions(None, None if all_workspaces else workspace, None, 50), runs
        )
        p95 = lib.percentile(times, 95)
        scope = "every workspace" if all_workspaces else f"this workspace ({workspace.name})"
        lib.report(
            f"picker open, first page painted (the rows that fit), {scope}",
            lib.summary_ms(times),
            "≤ 100 ms p95",
            p95 <= 0.1,
            f"p95 {p95 / lib.percentile(reference, 95):.0f}× the store's first page "
            f"(p95 {lib.percentile(reference, 95) * lib.MS:.2f} ms)",
        )


async def measure_filter(app: HarnezApp, frames: FrameWatch, runs: int, word: str) -> None:
    """Type a title word; last key → first frame with the title filter's rows for the whole word."""
    from textual.widgets import Input, OptionList

    from harnez.tui.screens.picker import PickerScreen

    await tui.wait_until(lambda: not isinstance(app.screen, PickerScreen))  # the last one closed
    app.open_picker()
    await tui.wait_until(lambda: isinstance(app.screen, PickerScreen) and app.screen.records)
    picker = app.screen
    options = picker.query_one(OptionList)
    search = picker.query_one("#picker-search", Input)
    times: list[float] = []
    for run in range(runs + 1):
        search.value = ""
        await tui.wait_until(lambda: not picker.shown_query and options.option_count > 0)
        await asyncio.sleep(0.05)
        for letter in word[:-1]:
            tui.send_key(app, letter)
            await asyncio.sleep(TYPE_GAP)
        last = tui.send_key(app, word[-1])
        shown = await frames.wait(
            lambda: picker.shown_query == word and not picker.shown_full_text and options.option_count > 0
        )
        if run >= 1:
            times.append(shown - last)
    reference = await lib.timed_runs(
        lambda: app.server.list_sessions(word, picker.workspace, None, 50, full_text=False), runs
    )
    p95, ref95 = lib.percentile(times, 95), lib.percentile(reference, 95)
    lib.report(
        f"title filter '{word}', last key → rows painted",
        lib.summary_ms(times),
        "≤ 30 ms p95",
        p95 <= 0.03,
        f"p95 {p95 / ref95:.1f}× the store's filter query (p95 {ref95 * lib.MS:.1f} ms)",
    )
    search.value = ""
    tui.send_key(app, "escape")


async def measure_search(app: HarnezApp, frames: FrameWatch, runs: int, workspace: Path, meta: dict) -> None:
    """Type a term; last key → first frame with the search's rows."""
    from textual.widgets import Input, OptionList

    from harnez.tui.screens.picker import SEARCH_DELAY, PickerScreen

    await tui.wait_until(lambda: not isinstance(app.screen, PickerScreen))  # the last one closed
    app.open_picker()
    await tui.wait_until(lambda: isinstance(app.screen, PickerScreen) and app.screen.records)
    picker = app.screen
    options = picker.query_one(OptionList)
    search = picker.query_one("#picker-search", Input)

    def unfiltered() -> bool:
        return not search.value and not picker.snippets and options.option_count > 0

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


async def measure_lists(app: HarnezApp, frames: FrameWatch, runs: int, workspace: Path, term: str) -> None:
    """A page of new rows listed → painted: the rows that fit first, against all of them at once."""
    from textual.widgets import OptionList

    from harnez.tui.screens.picker import ROWS, PickerScreen

    await tui.wait_until(lambda: not isinstance(app.screen, PickerScreen))  # the last one closed
    app.open_picker()
    await tui.wait_until(lambda: isinstance(app.screen, PickerScreen) and app.screen.records)
    picker, fit = app.screen, PickerScreen._rows_that_fit
    options = picker.query_one(OptionList)
    pages = {
        "unfiltered page": await app.server.list_sessions(None, workspace, None, 50),
        f"full text '{term}'": await app.server.list_sessions(term, workspace, None, 50),
    }
    times: dict[tuple[str, bool], list[float]] = {}
    for run in range(runs + 1):
        for name, page in pages.items():
            for all_at_once in (False, True):
                ROWS.clear()
                picker.snippets = dict(page.snippets)
                picker._rows_that_fit = (lambda _: 50) if all_at_once else (lambda o: fit(picker, o))
                await asyncio.sleep(0.05)
                start = time.perf_counter()
                picker.records.clear()
                picker._replace_rows(options, list(page.sessions), None)
                options.highlighted = 0
                shown = await frames.wait(lambda: True)
                if run:
                    times.setdefault((name, all_at_once), []).append(shown - start)
    for name in pages:
        mine, reference = times[(name, False)], times[(name, True)]
        lib.report(
            f"{name}: new rows listed → painted",
            lib.summary_ms(mine),
            "≤ all listed at once",
            lib.median(mine) <= lib.median(reference),
            f"p50 {lib.median(mine) / lib.median(reference):.2f}× all 50 listed at once "
            f"(p50 {lib.median(reference) * lib.MS:.1f} ms)",
        )
    tui.send_key(app, "escape")


if __name__ == "__main__":
    lib.run(main)
