"""Benchmark the read tool on large files: time per call, peak memory, and event-loop stalls.

(a) a 4 Mi-line file (68 MiB) read at its first and at its last line, against the floor of reading
    the same bytes in 1 MiB pieces and counting newlines (what any reader must do for `total_lines`);
(b) a 300 MiB file of one line: the peak RSS of a fresh process before and after reading it, and the
    growth against the size of the line (a reader that holds the line grows by more than the line:
    604 MiB before the read streamed);
(c) the worst lateness of a 1 ms asyncio ticker while (a)'s last-line read runs (the read is in a
    worker thread, so it should stay near one tick).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harnez.tools import ToolContext, ToolRegistry  # noqa: E402  (after the path set-up)

MIB = 1024 * 1024
LINES = 4 * MIB
TICK = 0.001

_CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
from harnez.tools import ToolContext, ToolRegistry
registry = ToolRegistry()
args = registry.validate("read", {"path": sys.argv[2]})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
asyncio.run(registry.execute(registry.get("read"), args, ToolContext(Path(sys.argv[1]))))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"before_kib": before, "after_kib": after}))
"""
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
"""A fresh interpreter starts the child: ru_maxrss starts from the peak of the process forked from."""


async def read_seconds(folder: Path, offset: int) -> float:
    registry = ToolRegistry()
    args = registry.validate("read", {"path": "lines.txt", "offset": offset})
    start = time.perf_counter()
    result = await registry.execute(registry.get("read"), args, ToolContext(folder))
    elapsed = time.perf_counter() - start
    assert not result.is_error and result.details["total_lines"] == LINES, result.content[:200]
    return elapsed


def floor_seconds(path: Path) -> float:
    """Read the file in 1 MiB pieces and count its newlines: the least a line-counting reader does."""
    start = time.perf_counter()
    count = 0
    with path.open("rb") as handle:
        while chunk := handle.read(MIB):
            count += chunk.count(b"\n")
    assert count == LINES
    return time.perf_counter() - start


async def worst_stall(folder: Path) -> float:
    done, worst = asyncio.Event(), 0.0

    async def ticker() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while not done.is_set():
            expected = loop.time() + TICK
            await asyncio.sleep(TICK)
            worst = max(worst, loop.time() - expected)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    await read_seconds(folder, LINES - 1)
    done.set()
    await ticking
    return worst


def one_line_peaks_mib(folder: Path, size_mib: int) -> tuple[float, float]:
    """The child's peak RSS before and after reading a one-line file of `size_mib` MiB."""
    path = folder / "one-line.txt"
    with path.open("wb") as handle:
        for _ in range(size_mib):
            handle.write(b"x" * MIB)
        handle.write(b"\n")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, sys.executable, "-c", _CHILD, str(folder), path.name],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
    finally:
        path.unlink()
    report = json.loads(done.stdout)
    return report["before_kib"] / 1024, report["after_kib"] / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--one-line-mib", type=int, default=300)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-read-"))
    try:
        (folder / "lines.txt").write_bytes(b"0123456789abcdef\n" * LINES)
        floor = statistics.median(floor_seconds(folder / "lines.txt") for _ in range(options.runs))
        for label, offset in (("first line", 1), ("last line", LINES - 1)):
            runs = [asyncio.run(read_seconds(folder, offset)) for _ in range(options.runs)]
            median = statistics.median(runs)
            print(
                f"(a) read at the {label} of 4 Mi lines (68 MiB): median {median * 1000:.0f} ms; "
                f"floor (read + count newlines) {floor * 1000:.0f} ms; ratio {median / floor:.2f}"
            )
        stall = asyncio.run(worst_stall(folder))
        print(f"(c) worst 1 ms-ticker lateness during the last-line read: {stall * 1000:.1f} ms")
        before, after = one_line_peaks_mib(folder, options.one_line_mib)
        print(
            f"(b) a fresh process reading a {options.one_line_mib} MiB one-line file: peak RSS {before:.1f} MiB "
            f"before the read, {after:.1f} MiB after; growth / line size {(after - before) / options.one_line_mib:.3f}"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
