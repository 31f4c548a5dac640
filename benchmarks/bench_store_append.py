"""Benchmark event appends: sustained streaming rate, the loss window (append to commit), and bulk import."""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import bench_store_lib as lib

from harnez import events as ev
from harnez.events import Event
from harnez.store import Store
from harnez.store.events import FLUSH_INTERVAL
from harnez.store.sessions import new_session_id

DELTA = "the parser now keeps "  # ~20 characters, like a streamed text delta
BURST = 20
TICK = 0.001
BULK_EVENTS = 100_000


@dataclass
class Stream:
    """What one streaming run observed."""

    appended: int = 0
    seconds: float = 0.0
    window: float = 0.0
    committed_in_window: int = 0
    windows: list[float] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Committed events per second."""
        return self.appended / self.seconds

    @property
    def rate_in_window(self) -> float:
        """Events committed per second while the producer was still appending."""
        return self.committed_in_window / self.window

    @property
    def mean_batch(self) -> float:
        """Events per group commit."""
        return sum(self.batches) / max(len(self.batches), 1)


async def open_session(path: Path, stream: Stream) -> tuple[Store, int, str]:
    """A fresh store that counts its commits, and one session in it."""
    store = await Store.open(path, on_commit=lambda events: stream.batches.append(len(events)))
    record = await store.sessions.insert(new_session_id(), "/bench/append", None)
    return store, record.num, record.id


def append_one(store: Store, num: int, sid: str, stream: Stream) -> None:
    """Append one delta and record its append-to-commit time when its future resolves."""
    start = time.perf_counter()
    future = store.events.append(num, sid, Event(ev.TextDelta(text=DELTA), task=1))
    future.add_done_callback(lambda _: stream.windows.append(time.perf_counter() - start))


async def stream_run(path: Path, seconds: float, rate: float | None) -> Stream:
    """Append deltas for `seconds`: as fast as possible (rate None, yielding every BURST) or paced."""
    stream = Stream()
    store, num, sid = await open_session(path, stream)
    stream.batches.clear()
    start = time.perf_counter()
    while (now := time.perf_counter()) - start < seconds:
        due = BURST if rate is None else int((now - start) * rate) - stream.appended
        for _ in range(due):
            append_one(store, num, sid, stream)
        stream.appended += max(due, 0)
        await store.events.backpressure()  # a producer that never idles must call it
        await asyncio.sleep(0 if rate is None else TICK)
    stream.window = time.perf_counter() - start
    stream.committed_in_window = sum(stream.batches)
    await store.events.flush()
    await asyncio.sleep(0)  # let the last done-callbacks run
    stream.seconds = time.perf_counter() - start
    await store.close()
    return stream


def raw_batched_rate(path: Path, total: int, batch: int) -> tuple[float, float]:
    """Raw sqlite3: the same rows in transactions of `batch`; (events/s, mean seconds per commit)."""
    conn = lib.raw_connect(path)
    conn.execute(
        "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES (?, '/raw', 0, 0)",
        (new_session_id(),),
    )
    num = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
    seq, commits = 0, []
    start = time.perf_counter()
    while seq < total:
        t = time.perf_counter()
        rows = [
            (num, seq + i + 1, 1, "text-delta", lib.dumps({"text": DELTA}), time.time()) for i in range(batch)
        ]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)", rows
        )
        conn.execute("UPDATE sessions SET updated_at = ? WHERE num = ?", (time.time(), num))
        conn.execute("COMMIT")
        commits.append(time.perf_counter() - t)
        seq += batch
    elapsed = time.perf_counter() - start
    conn.close()
    return seq / elapsed, sum(commits) / len(commits)


def bulk_events(count: int) -> list[Event]:
    """Text deltas of 20 to 200 characters."""
    rng = random.Random(7)
    words = [
        "the",
        "parser",
        "keeps",
        "every",
        "cursor",
        "page",
        "event",
        "store",
        "session",
        "wire",
        "token",
        "stream",
    ]
    texts = [" ".join(rng.choices(words, k=rng.randint(4, 35)))[:200] for _ in range(500)]
    return [Event(ev.TextDelta(text=texts[i % 500]), task=1) for i in range(count)]


async def bulk_harnez(path: Path, events: list[Event]) -> float:
    """Seconds for EventLog.append_many of every event into a fresh session."""
    store = await Store.open(path)
    record = await store.sessions.insert(new_session_id(), "/bench/bulk", None)
    start = time.perf_counter()
    stored = await store.events.append_many(record.num, record.id, events)
    elapsed = time.perf_counter() - start
    assert len(stored) == len(events) and stored[-1].seq == len(events)
    await store.close()
    return elapsed


async def bulk_raw(path: Path, events: list[Event]) -> float:
    """Seconds for raw sqlite3 executemany of the same rows (JSON encoding included), one transaction."""
    await (await Store.open(path)).close()  # the same schema, made by the real code
    conn = lib.raw_connect(path)
    conn.execute(
        "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES (?, '/raw', 0, 0)",
        (new_session_id(),),
    )
    num = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
    start = time.perf_counter()
    now = time.time()
    rows = [
        (num, i, e.task, e.kind, lib.dumps(e.body.to_payload()), now) for i, e in enumerate(events, start=1)
    ]
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)", rows
    )
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


async def sustained_and_window(folder: Path, seconds: float) -> None:
    """(a) the saturated rate and (b) the loss window, saturated and paced."""
    saturated = await stream_run(folder / "saturated.db", seconds, None)
    raw_rate, _ = raw_batched_rate(
        folder / "saturated.db", saturated.appended, max(int(saturated.mean_batch), 1)
    )
    print(
        f"(a) sustained append, a producer appending {len(DELTA)}-char deltas as fast as it can "
        f"(yielding every {BURST}) for {seconds:.0f} s: {saturated.appended} appended, "
        f"{saturated.committed_in_window} committed within the {seconds:.0f} s, {len(saturated.batches)} "
        f"group commits, mean {saturated.mean_batch:.0f} events each"
    )
    lib.report(
        "committed while producing",
        f"{saturated.rate_in_window:,.0f} events/s",
        "≥ 5,000/s",
        saturated.rate_in_window >= 5000,
        f"{saturated.rate_in_window / raw_rate:.2f}× raw sqlite3 in commits of the same size "
        f"({raw_rate:,.0f}/s)",
    )
    print(
        f"  appended and drained (until the last commit): {saturated.rate:,.0f} events/s "
        f"({saturated.rate / raw_rate:.2f}× raw)"
    )
    print(f"  loss window while saturated: {lib.summary_ms(saturated.windows)}")
    print(
        f"(b) loss window, append() to commit (future resolved), group commit every {FLUSH_INTERVAL * 1000:.0f} ms"
    )
    for rate in (200, 5000, 20000):
        paced = await stream_run(folder / f"paced{rate}.db", seconds, rate)
        _, commit = raw_batched_rate(folder / f"paced{rate}.db", 2000, max(int(paced.mean_batch), 1))
        floor = FLUSH_INTERVAL + commit
        p95 = lib.percentile(paced.windows, 95)
        lib.report(
            f"paced at {rate}/s (got {paced.rate:,.0f}/s, {paced.mean_batch:.0f}/commit)",
            lib.summary_ms(paced.windows),
            "≤ 50 ms",
            max(paced.windows) <= 0.05,
            f"p95 {p95 / floor:.2f}× the floor (interval + raw commit of that size = {floor * 1000:.1f} ms)",
        )


async def bulk(folder: Path, runs: int) -> None:
    """(c) append_many of BULK_EVENTS against raw executemany, best of `runs` each."""
    events = bulk_events(BULK_EVENTS)
    ours = [await bulk_harnez(folder / f"bulk{i}.db", events) for i in range(runs)]
    raw = [await bulk_raw(folder / f"raw{i}.db", events) for i in range(runs)]
    ours_rate, raw_rate = BULK_EVENTS / min(ours), BULK_EVENTS / min(raw)
    print(f"(c) bulk: append_many of {BULK_EVENTS:,} deltas (20-200 chars) in one go, best of {runs}")
    lib.report(
        "rate",
        f"{ours_rate:,.0f} events/s ({min(ours):.2f} s)",
        "≥ 50,000/s and ≥ 0.5× raw",
        ours_rate >= 50_000 and ours_rate >= 0.5 * raw_rate,
        f"{ours_rate / raw_rate:.2f}× raw sqlite3 executemany ({raw_rate:,.0f}/s, {min(raw):.2f} s)",
    )


async def main() -> None:
    """Run the three append benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each streaming run")
    parser.add_argument("--runs", type=int, default=3, help="bulk runs (the best is kept)")
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=None,
        help="sys.setswitchinterval (seconds) to try against the GIL convoy",
    )
    args = parser.parse_args()
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    lib.header(
        "Event append (SPEC §10: loss window ≤ 50 ms; ≥ 5,000/s sustained; bulk ≥ 50,000/s, ≥ 0.5× raw)"
    )
    with tempfile.TemporaryDirectory(prefix="harnez-bench-append-") as tmp:
        await sustained_and_window(Path(tmp), args.seconds)
        await bulk(Path(tmp), args.runs)


if __name__ == "__main__":
    lib.run(main)
