"""Enter → answer as a session grows: the same prompt's latency early in a session and after many.

One fresh interpreter per code tree runs `HarnezApp` under Textual's `run_test()` (120×40) over the
server the CLI builds, on a new database, against the scripted model in its own process answering at
once (as `bench_tui_answer_stages.py`), and sends `--prompts` prompts one after the other in one
session, each once the previous task has ended. Per prompt it takes Enter → the answer's first word
in a rendered frame, and the longest screen layout during the prompt (what a key pressed then would
wait for). The report gives medians per ten prompts; the reference, measured in the same run, is the
session's own prompts 2–10: the ratio says what a long session costs over a short one.

`--before DIR` runs the code of another tree (`git archive <commit> | tar -x -C DIR`) the same way,
alternating, for a pair measured in the same minutes (this script is copied into the tree's
benchmarks/ and run from there, so that the tree's code is the one imported).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_store_lib as lib
import bench_tui_answer as answer
import bench_tui_lib as tui

ENTER = [0.0]
LAYOUTS: list[float] = []


def time_layouts() -> None:
    """Record every screen layout's duration (a layout includes the frame it paints)."""
    from textual.screen import Screen

    original = Screen._refresh_layout

    def timed(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            original(self, *args, **kwargs)
        finally:
            if ENTER[0]:
                LAYOUTS.append(time.perf_counter() - started)

    Screen._refresh_layout = timed  # type: ignore[method-assign]


async def child(url: str, folder: Path, prompts: int) -> list[dict[str, float]]:
    """One session of `prompts` prompts; per prompt: seconds to the answer painted, longest layout."""
    from harnez.server.factory import open_agent_server
    from harnez.settings import load_settings
    from harnez.tui.app import HarnezApp

    time_layouts()
    settings = load_settings(folder / "workspace")
    app = HarnezApp(
        lambda: open_agent_server(folder / "harnez.sqlite", settings), folder / "workspace", settings
    )
    painted: dict[str, float] = {}

    def on_frame(moment: float, text: str | None) -> None:
        for word in answer.ANSWERS:
            if ENTER[0] and word in (text or "") and word not in painted:
                painted[word] = moment - ENTER[0]

    tui.hook_frames(app, on_frame, with_text=True)
    results: list[dict[str, float]] = []
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: app.ready)
        for n in range(prompts):
            prompt, word = answer.PROMPTS[n % 2], answer.ANSWERS[n % 2]
            for character in prompt:
                tui.send_key(app, character if character != " " else "space", character)
            await pilot.pause(0.15)
            painted.clear()
            LAYOUTS.clear()
            ENTER[0] = tui.send_key(app, "enter")
            await tui.wait_until(lambda w=word: w in painted)  # type: ignore[misc]
            await tui.wait_until(lambda: app.server.running(app.screen.session_id) is None)
            await pilot.pause(0.15)
            ENTER[0] = 0.0
            results.append({"painted": painted[word], "layout": max(LAYOUTS, default=0.0)})
        await pilot.press("ctrl+q")
    return results


def run_child(url: str, prompts: int, tree: Path | None) -> list[dict[str, float]]:
    """One fresh interpreter's session (the code of `tree`, or of this checkout)."""
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-long-"))
    home = tui.Home(folder, folder / "harnez.sqlite")
    home.home.mkdir()
    home.workspace.mkdir()
    answer.point_at(home, url)
    script = Path(__file__)
    if tree is not None:  # run from the tree: bench_store_lib puts the checkout it lies in first on the path
        script = tree / "benchmarks" / script.name
        shutil.copyfile(__file__, script)
    done = subprocess.run(
        [sys.executable, str(script), "--child", url, str(folder), str(prompts)],
        env={**os.environ, **home.env()},
        capture_output=True,
        text=True,
        cwd=tree or lib.REPO,
        timeout=60 + prompts * 5,
    )
    tui.remove_home(home)
    if done.returncode != 0:
        raise RuntimeError(f"the measured app failed:\n{done.stderr[-2000:]}")
    results: list[dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def report(name: str, sessions: list[list[dict[str, float]]]) -> None:
    """Medians per ten prompts over the sessions, and the last ten against prompts 2-10."""
    count = min(len(session) for session in sessions)

    def median_of(key: str, first: int, last: int) -> float:
        return lib.median([s[i][key] for s in sessions for i in range(first, last)]) * lib.MS

    print(f"  {name} ({len(sessions)} sessions of {count} prompts): median ms, Enter → answer painted /")
    print("    the longest layout during the prompt")
    early = median_of("painted", 1, min(10, count))
    for start in range(0, count, 10):
        end = min(start + 10, count)
        print(
            f"    prompts {start + 1:>3}–{end:<3}  painted {median_of('painted', start, end):6.1f}"
            f"   longest layout {median_of('layout', start, end):6.1f}"
        )
    late = median_of("painted", max(count - 10, 1), count)
    print(f"    last ten against prompts 2–10: {late:.1f} / {early:.1f} ms = {late / early:.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=100, help="prompts per session (default 100)")
    parser.add_argument("--runs", type=int, default=2, help="sessions per code tree (default 2)")
    parser.add_argument("--before", type=Path, help="another tree's code, run alternately")
    parser.add_argument("--child", nargs=3, metavar=("URL", "FOLDER", "PROMPTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, folder, prompts = args.child
        print(json.dumps(asyncio.run(child(url, Path(folder), int(prompts)))))
        return
    lib.header("Enter → answer as a session grows (in process, scripted model answering at once)")
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-model-"))
    model, url = answer.start_model(folder)
    trees: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.before:
        trees.append((f"before ({args.before})", args.before.resolve()))
    sessions: dict[str, list[list[dict[str, float]]]] = {name: [] for name, _ in trees}
    try:
        for _ in range(args.runs):
            for name, tree in trees:
                sessions[name].append(run_child(url, args.prompts, tree))
    finally:
        model.kill()
        model.wait()
        tui.remove_home(tui.Home(folder, folder / "x"))
    for name, _ in trees:
        report(name, sessions[name])


if __name__ == "__main__":
    main()
