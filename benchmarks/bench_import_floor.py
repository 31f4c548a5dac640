"""The least start-up work a first answer needs after the first frame, against the time issue #17 goal 2
leaves for it: why a prompt pasted and sent at the very first frame cannot be answered within goal 1's
100 ms by one Python process on this interpreter.

A first answer needs, beyond what a bare Textual app's first frame already imported: settings
(pydantic-settings), the HTTP stack the wires use (httpx, httpcore, h11, anyio's asyncio backend, ssl),
the database driver (aiosqlite), and what renders the answer (Textual's Markdown widget, markdown-it).
Each run is a fresh process that first imports what the bare app imports (`textual.app`,
`textual.widgets`), then times those imports alone: the floor, with none of Harnez's own code, no
settings read, no database opened, no request made.

The budget, in the same run: goal 1 allows 100 ms from Enter to the answer, of which the prompt's own
path takes `--prompt-path` ms (bench_tui_answer.py's first prompt once the session is attached; 26–32
ms in docs/performance.md), and work moved before the first frame may take at most 0.3× the bare app's
first frame (goal 6: ≤ 1.3× bare). Bare and floor runs alternate, so load changes hit both alike. The
ratio is floor / budget: above 1, goal 2's pasted prompt misses however little of Harnez's own code runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess

import bench_store_lib as lib
import bench_tui_lib as tui

BARE = "bare textual app ready"

FLOOR = """
import json, time
import textual.app, textual.widgets

def timed(names):
    start = time.perf_counter()
    for name in names:
        __import__(name)
    return time.perf_counter() - start

figures = {
    "settings": timed(["pydantic_settings"]),
    "http": timed(["ssl", "httpx", "httpcore", "h11", "anyio", "anyio._backends._asyncio"]),
    "database": timed(["sqlite3", "aiosqlite"]),
    "markdown": timed(["markdown_it", "textual.widgets._markdown"]),
}
print(json.dumps(figures))
"""

GROUPS = ("settings", "http", "database", "markdown")


def bare_frame(home: tui.Home, script: str) -> float:
    """Seconds from launch to the bare Textual app's first frame."""
    process = tui.launch([str(tui.PYTHON), script], home.env(), home.workspace)
    first = process.wait_for([BARE])
    process.stop()
    return first


def floor(home: tui.Home) -> dict[str, float]:
    """Seconds each group of imports takes in a fresh process that already imported the bare app's."""
    done = subprocess.run(
        [str(tui.PYTHON), "-c", FLOOR], env=home.env(), capture_output=True, text=True, check=True
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each kind (default 10)")
    parser.add_argument(
        "--prompt-path",
        type=float,
        default=30.0,
        metavar="MS",
        help="ms the first prompt takes once the session is attached (bench_tui_answer.py; default 30)",
    )
    args = parser.parse_args()
    lib.header("the import floor of a first answer, against issue #17 goal 2's budget")
    home = tui.make_home()
    script = str(tui.bare_app_script(home.root))
    frames: list[float] = []
    floors: list[dict[str, float]] = []
    try:
        bare_frame(home, script), floor(home)  # warm-up: page cache, bytecode
        for _ in range(args.runs):
            frames.append(bare_frame(home, script))
            floors.append(floor(home))
    finally:
        tui.remove_home(home)
    bare = lib.median(frames)
    totals = [sum(run.values()) for run in floors]
    total = lib.median(totals)
    budget = (0.100 - args.prompt_path / lib.MS) + 0.3 * bare
    print(f"  {args.runs} runs of each kind, alternating")
    print(f"  bare Textual app, launch → first frame: median {bare * lib.MS:.0f} ms")
    for group in GROUPS:
        print(f"  imports, {group}: median {lib.median([run[group] for run in floors]) * lib.MS:.0f} ms")
    print(
        f"  budget: 100 ms − {args.prompt_path:.0f} ms (the prompt's path) + 0.3 × {bare * lib.MS:.0f} ms "
        f"(moved before the first frame) = {budget * lib.MS:.0f} ms"
    )
    lib.report(
        "import floor of a first answer (none of Harnez's own code)",
        f"median {total * lib.MS:.0f} ms, p90 {lib.percentile(totals, 90) * lib.MS:.0f} ms",
        f"≤ the budget, {budget * lib.MS:.0f} ms, for goal 2's pasted prompt to be possible",
        total <= budget,
        f"{total / budget:.2f}× the budget",
    )


if __name__ == "__main__":
    main()
