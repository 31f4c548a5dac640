"""Benchmark what a session's first keyword title costs the event loop: in a thread, or in the worker.

A fixed piece of pure-Python work runs on the loop in 1–2 ms slices (what the TUI and the server do
for a prompt: build requests, parse deltas, render) while the first keyword title of a fresh
interpreter is made — YAKE's import included, as when a script sends its second prompt the moment
the first task ends. Three kinds of run alternate, each in a fresh interpreter:

- `alone`: the work with no title being made (the reference);
- `thread`: beside `keyword_title_async` (YAKE in a thread of this interpreter, as before #17's point 1);
- `worker`: beside `KeywordWorker.title` (YAKE in its own process, what the server does now).

The figure is the work's wall time, and its ratio to `alone` in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROMPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group commit"
SLICES = 150
KINDS = ("alone", "thread", "worker")


def one_slice() -> int:
    """About a millisecond or two of pure Python on an idle core."""
    return sum(i * i for i in range(20_000))


async def loop_work() -> float:
    """Seconds the loop takes for SLICES slices, yielding between them."""
    start = time.perf_counter()
    for _ in range(SLICES):
        one_slice()
        await asyncio.sleep(0)
    return time.perf_counter() - start


async def child(kind: str) -> float:
    """The loop work's wall time beside the title of `kind` (started just before it)."""
    sys.path.insert(0, str(REPO))
    from harnez.titles.keywords import keyword_title_async
    from harnez.titles.worker import KeywordWorker

    worker = KeywordWorker()
    naming = None
    if kind == "thread":
        naming = asyncio.ensure_future(keyword_title_async(PROMPT))
    elif kind == "worker":
        naming = asyncio.ensure_future(worker.title(PROMPT))
    await asyncio.sleep(0)
    elapsed = await loop_work()
    if naming is not None:
        await naming
    await worker.close()
    return elapsed


def run(kind: str) -> float:
    """One fresh interpreter's figure."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind], capture_output=True, text=True, check=True
    )
    return float(json.loads(done.stdout)["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="runs of each kind (default 8)")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"seconds": asyncio.run(child(args.child))}))
        return
    figures: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for index in range(args.runs):
        for kind in KINDS[index % 3 :] + KINDS[: index % 3]:
            figures[kind].append(run(kind))
    alone = statistics.median(figures["alone"])
    print(f"loop work of {SLICES} slices beside a session's first keyword title, {args.runs} runs each:")
    for kind in KINDS:
        median = statistics.median(figures[kind])
        print(f"  {kind:7} median {median * 1000:.0f} ms, {median / alone:.2f}× alone")


if __name__ == "__main__":
    main()
