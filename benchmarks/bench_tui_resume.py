"""Benchmark resuming a 100k-event session: time to the first complete frame, and the process's RSS.

Frame time, in process: a `HarnezApp(resume=<id>)` over a real server on a private copy of the
seeded database, run with Textual's `run_test()` (120×40). The clock starts before `run_test()` is
entered (so it covers Textual's boot, the server's open, the session look-up, reading the newest
window of events, building and mounting the blocks, streaming their Markdown and the layout); it
stops at the first frame painted (see `bench_tui_lib.hook_frames`) where the transcript's `load_batch`
(the newest window of events) has returned and every answer's Markdown has rendered its blocks. Modules are imported by a warm-up run
first: a real process imports them after its splash, which `bench_tui_start.py` measures.
The reference is the same for a 100-event session.

RSS, in a subprocess: `harnez --resume <id>` in a pty, its VmRSS (from /proc) once the session's last
block is on screen and 0.5 s have passed; against the same for the 100-event session and a bare
Textual app. The time to that screen from the fork is printed too.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui

from harnez.server import Server
from harnez.tui.app import HarnezApp

SIZES = (10, 100, 1_000, 10_000, 100_000)
"""The seeded sessions (shared with bench_tui_keys.py: one cached database)."""
LAST_BLOCK = "✓ Completed"


async def frame_time(database: Path, session_id: str, workspace: Path) -> float:
    """Seconds from starting the app to the first complete frame of the resumed session."""
    from textual.widgets import Markdown

    from harnez.tui.screens.session import SessionScreen
    from harnez.tui.widgets.blocks import AssistantBlock
    from harnez.tui.widgets.transcript import Transcript

    async def open_server() -> Server:
        return await Server.open(database)

    app = HarnezApp(open_server, workspace, None, resume=session_id)
    done: list[float] = []

    def complete() -> bool:
        screen = app.screen
        if not isinstance(screen, SessionScreen):
            return False
        transcript = screen.query_one(Transcript)
        if transcript not in tui.LOADED:
            return False
        # Every answer shown has its Markdown's blocks (the hidden spare answer block is not shown).
        return all(
            b.query_one(Markdown).children
            for b in transcript.children
            if isinstance(b, AssistantBlock) and b.display
        )

    def on_frame(moment: float, _: str | None) -> None:
        if not done and complete():
            done.append(moment)

    tui.hook_frames(app, on_frame)
    start = time.perf_counter()
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: bool(done))
        # Quitting while the screen's subscription still reads stored events fails the worker
        # ("Cannot operate on a closed database"): let that read finish first.
        await pilot.pause(0.3)
        await pilot.press("ctrl+q")
    return done[0] - start


def rss_run(home: tui.Home, session_id: str | None, bare_script: Path) -> tuple[float, float]:
    """(seconds to the screen, VmRSS in MB) of a harnez resuming `session_id`, or of the bare app."""
    if session_id is None:
        process = tui.launch([str(tui.PYTHON), str(bare_script)], home.env(), home.workspace)
        shown = process.wait_for(["bare textual app ready"])
    else:
        process = tui.launch([str(tui.HARNEZ), "--resume", session_id], home.env(), home.workspace)
        shown = process.wait_for([LAST_BLOCK, "mode:"])
    time.sleep(0.5)
    rss = process.rss_mb()
    process.stop()
    return shown, rss


async def main() -> None:
    """Frame times in process, then RSS in subprocesses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 runs of each")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    source, ids = tui.sessions_db(SIZES)
    small, big = ids[SIZES.index(100)], ids[SIZES.index(100_000)]
    lib.header("Resume a 100k-event session (SPEC §10: first frame ≤ 300 ms, ≤ 250 MB RSS)")
    tui.note_loaded_batches()
    database = tui.private_copy(source)
    home = tui.make_home(database)
    try:
        await frame_time(database, small, home.workspace)  # warm-up: imports, page cache
        times: dict[str, list[float]] = {"small": [], "big": []}
        for _ in range(runs):
            times["small"].append(await frame_time(database, small, home.workspace))
            times["big"].append(await frame_time(database, big, home.workspace))
        ref = lib.median(times["small"])
        big_times = times["big"]
        p95 = lib.percentile(big_times, 95)
        print(
            f"  reference: resuming the 100-event session, in process: median {ref * lib.MS:.0f} ms, "
            f"p95 {lib.percentile(times['small'], 95) * lib.MS:.0f} ms ({runs} runs)"
        )
        lib.report(
            "resume 100,000 events, first complete frame (in process)",
            f"median {lib.median(big_times) * lib.MS:.0f} ms, p95 {p95 * lib.MS:.0f} ms",
            "≤ 300 ms",
            p95 <= 0.3,
            f"median {lib.median(big_times) / ref:.2f}× the 100-event session",
        )
        rss_report(home, small, big, max(runs // 3, 2))
    finally:
        tui.remove_home(home)
        tui.remove_home(tui.Home(database.parent, database))


def rss_report(home: tui.Home, small: str, big: str, runs: int) -> None:
    """RSS of harnez resuming each session, and of the bare app."""
    bare_script = tui.bare_app_script(home.root)
    results: dict[str, list[tuple[float, float]]] = {"bare": [], "small": [], "big": []}
    rss_run(home, big, bare_script)  # warm-up
    for _ in range(runs):
        results["bare"].append(rss_run(home, None, bare_script))
        results["small"].append(rss_run(home, small, bare_script))
        results["big"].append(rss_run(home, big, bare_script))
    rss = {k: max(r[1] for r in v) for k, v in results.items()}
    shown = {k: lib.median([r[0] for r in v]) for k, v in results.items()}
    print(
        f"  reference: bare Textual app {rss['bare']:.0f} MB RSS (screen at {shown['bare'] * lib.MS:.0f} ms); "
        f"harnez resuming 100 events {rss['small']:.0f} MB (screen at {shown['small'] * lib.MS:.0f} ms)"
    )
    lib.report(
        "resume 100,000 events, RSS (subprocess, max of runs)",
        f"{rss['big']:.0f} MB (screen at {shown['big'] * lib.MS:.0f} ms from the fork)",
        "≤ 250 MB",
        rss["big"] <= 250,
        f"{rss['big'] / rss['small']:.2f}× the 100-event session, {rss['big'] / rss['bare']:.2f}× bare",
    )


if __name__ == "__main__":
    lib.run(main)
