"""Benchmark a very long streamed answer: lag on screen and the main thread's CPU, thousand words by thousand.

`bench_tui_lag.py`'s stream (in process, `run_test()` at 120×40, a real server on a new database,
numbered words emitted at 200 a second, a blank line every 40 words, each word's lag from its emit
to the end of the first frame that painted it) run for `--seconds` (default 50: 10,000 words, about
250 paragraphs in one answer). Beside it a sampler on the event loop's thread records that thread's
CPU time every 0.25 s. The report gives, per thousand words, the lag's p50 / p95 and the main
thread's CPU in ms per second; the reference, from the same stream, is its first thousand words:
the ratio says what the answer's length costs.

`--fence` streams the same words as lines of code in one fenced block (eight words a line), the
shape of an answer that writes out a whole file; `--table` as the rows of one Markdown table (four
cells of four words a row: as many lines a second as the fence's), a long comparison or listing;
`--list` as the items of one bullet list (sixteen words an item, 12.5 items a second).

`--before DIR` runs the code of another tree (`git archive <commit> | tar -x -C DIR`) the same way,
alternating, in a fresh interpreter each (this script is copied into the tree's benchmarks/ and run
from there, so that the tree's code is the one imported).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import bench_store_lib as lib

RATE = 200
"""Words a second."""


SHAPES = {
    "paragraphs": ("in paragraphs", "", ()),
    "fence": ("as lines of one code fence", "The whole file:\n\n```text\n", (" ",) * 7 + ("\n",)),
    "table": (
        "as rows of one table",
        "The results:\n\n| a | b | c | d |\n|---|---|---|---|\n| ",
        ((" ", " ", " ", " | ") * 3 + (" ", " ", " ", " |\n| ")),
    ),
    "list": ("as items of one bullet list", "The steps:\n\n- ", (" ",) * 15 + ("\n- ",)),
}
"""Per shape: its name, the text before the words, and what follows each word, in turn."""


def shaped_work(base: type, shape: str) -> type:
    """`bench_tui_lag`'s work (`base`), its words written in another `shape` (`SHAPES`)."""
    _, before, after = SHAPES[shape]

    class ShapedWork(base):  # type: ignore[valid-type,misc]
        async def __call__(self, run: Any) -> Any:
            from harnez import events as ev
            from harnez.server.runner import TaskOutcome

            run.emit(ev.TurnStarted(turn=1))
            run.emit(ev.TextDelta(text=before))
            begun = time.perf_counter()
            for index in range(self.count):
                self.emitted.append(time.perf_counter())
                run.emit(ev.TextDelta(text=f"w{index:06d}" + after[index % len(after)]))
                await asyncio.sleep(max(0.0, begun + (index + 1) / self.rate - time.perf_counter()))
            await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="end"))
            return TaskOutcome("completed", 1)

    return ShapedWork


async def child(seconds: float, shape: str) -> dict[str, Any]:
    """One stream in this interpreter: per-word lags, and (words emitted, CPU s, wall s) samples."""
    import bench_tui_lag as lag
    import bench_tui_lib as tui

    if shape != "paragraphs":
        lag.NumberedWork = shaped_work(lag.NumberedWork, shape)  # type: ignore[misc]
    samples: list[tuple[int, float, float]] = []
    emitted: list[list[float]] = []
    original = lag.NumberedWork.__init__

    def keep(self: Any, rate: float, count: int) -> None:
        original(self, rate, count)
        emitted.append(self.emitted)

    lag.NumberedWork.__init__ = keep  # type: ignore[method-assign]

    async def sample() -> None:
        while True:
            words = len(emitted[-1]) if emitted else 0
            samples.append((words, time.thread_time(), time.perf_counter()))
            await asyncio.sleep(0.25)

    home = tui.make_home()
    try:
        await lag.measure(home.database, home.workspace, 50, 1.0, False)  # warm-up: imports, the database
        emitted.clear()
        sampler = asyncio.create_task(sample())
        try:
            lags, _, _ = await lag.measure(home.database, home.workspace, RATE, seconds, False)
        except TimeoutError:  # the screen fell so far behind that the last word never showed in time
            lags = []
        sampler.cancel()
    finally:
        tui.remove_home(home)
    return {"lags": lags, "samples": samples}


def run_child(seconds: float, shape: str, tree: Path | None) -> dict[str, Any]:
    script = Path(__file__)
    if tree is not None:
        script = tree / "benchmarks" / script.name
        shutil.copyfile(__file__, script)
    done = subprocess.run(
        [sys.executable, str(script), "--child", str(seconds), "--shape", shape],
        capture_output=True,
        text=True,
        cwd=tree or lib.REPO,
        timeout=seconds * 3 + 120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the measured app failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def cpu_rate(samples: list[list[float]], first: int, last: int) -> float:
    """The main thread's CPU in ms per second while words `first` to `last` were emitted."""
    inside = [s for s in samples if first <= s[0] <= last]
    if len(inside) < 2:
        return float("nan")
    (_, cpu0, wall0), (_, cpu1, wall1) = inside[0], inside[-1]
    return (cpu1 - cpu0) / (wall1 - wall0) * lib.MS


def report(name: str, result: dict[str, Any]) -> None:
    lags: list[float] = result["lags"]
    samples: list[list[float]] = result["samples"]
    if not lags:
        words = int(samples[-1][0]) if samples else 0
        print(f"  {name}: {words:,} words emitted; the screen never showed the last of them within 30 s")
        lib.report("the last thousand words on screen", "not shown", "≤ 100 ms", False, "—")
        return
    print(f"  {name}: {len(lags):,} words at {RATE}/s in one answer")
    rows = []
    for first in range(0, len(lags), 1000):
        part = lags[first : first + 1000]
        rows.append(
            (lib.percentile(part, 50), lib.percentile(part, 95), cpu_rate(samples, first, first + 1000))
        )
        p50, p95, cpu = rows[-1]
        print(
            f"    words {first:>6,}–{first + len(part):<6,} lag p50 {p50 * lib.MS:5.0f} ms"
            f"  p95 {p95 * lib.MS:5.0f} ms   main thread {cpu:5.0f} ms/s"
        )
    (_, early95, early_cpu), (_, late95, late_cpu) = rows[0], rows[-1]
    lib.report(
        "the last thousand words on screen (SPEC §10: ≤ 100 ms behind)",
        f"p95 {late95 * lib.MS:.0f} ms, main thread {late_cpu:.0f} ms/s",
        "≤ 100 ms",
        late95 <= 0.1,
        f"{late95 / early95:.2f}× the first thousand's p95 ({early95 * lib.MS:.0f} ms), "
        f"CPU {late_cpu / early_cpu:.2f}×",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=50.0, help="length of the stream (default 50 s)")
    parser.add_argument(
        "--shape", choices=sorted(SHAPES), default="paragraphs", help="how the words are written"
    )
    parser.add_argument("--fence", dest="shape", action="store_const", const="fence", help="--shape fence")
    parser.add_argument("--table", dest="shape", action="store_const", const="table", help="--shape table")
    parser.add_argument("--list", dest="shape", action="store_const", const="list", help="--shape list")
    parser.add_argument("--runs", type=int, default=1, help="streams per code tree (default 1)")
    parser.add_argument("--before", type=Path, help="another tree's code, run alternately")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.child, args.shape))))
        return
    lib.header(
        f"A very long streamed answer {SHAPES[args.shape][0]}: lag and CPU per thousand words"
        " (in process, 200 words/s)"
    )
    trees: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.before:
        trees.append((f"before ({args.before})", args.before.resolve()))
    for run in range(args.runs):
        for name, tree in trees:
            report(f"{name}, run {run + 1}", run_child(args.seconds, args.shape, tree))


if __name__ == "__main__":
    main()
