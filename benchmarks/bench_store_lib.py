"""Shared helpers of the storage benchmarks: timing, percentiles, reporting, raw sqlite3 references."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / ".data"
sys.path.insert(0, str(REPO))
os.environ.setdefault("HARNEZ_HOME", tempfile.mkdtemp(prefix="harnez-bench-home-"))

MS = 1000.0


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary_ms(values: list[float]) -> str:
    """p50 / p95 / max of durations given in seconds, printed in milliseconds."""
    return (
        f"p50 {percentile(values, 50) * MS:.2f} ms, p95 {percentile(values, 95) * MS:.2f} ms, "
        f"max {max(values) * MS:.2f} ms"
    )


def verdict(ok: bool) -> str:
    """PASS or MISS, for the target column."""
    return "PASS" if ok else "MISS"


def report(label: str, figure: str, target: str, ok: bool, ratio: str) -> None:
    """One result line: what, measured, target, and the ratio to the same-run reference."""
    print(f"  {label}: {figure}  [target {target}: {verdict(ok)}]  ratio {ratio}")


async def timed_runs(function: Callable[[], Awaitable[Any]], runs: int, warmup: int = 2) -> list[float]:
    """Seconds taken by each of `runs` awaits of function() (after a warm-up)."""
    for _ in range(warmup):
        await function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await function()
        times.append(time.perf_counter() - start)
    return times


def timed_sync(function: Callable[[], Any], runs: int, warmup: int = 2) -> list[float]:
    """Seconds taken by each of `runs` calls of function() (after a warm-up)."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def raw_connect(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection with the pragmas Harnez uses (WAL, synchronous NORMAL)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def dumps(payload: dict[str, Any]) -> str:
    """JSON as the event log writes it."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def machine_note() -> str:
    """CPU count, load, Python and SQLite versions: the context of every figure."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} cores, load {load:.1f}, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {time.strftime('%Y-%m-%d')}"
    )


def header(title: str) -> None:
    """The benchmark's title and machine note."""
    print(f"{title}\n  machine: {machine_note()}")


def median(values: list[float]) -> float:
    """The median."""
    return statistics.median(values)


def run(main: Callable[[], Awaitable[None]]) -> None:
    """Run an async benchmark entry point."""
    asyncio.run(main())
