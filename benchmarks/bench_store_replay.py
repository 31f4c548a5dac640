"""Benchmark replay after a cursor: EventLog.read_after and Server.subscribe against raw sqlite3 + json.loads."""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

import bench_store_lib as lib

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.store.payloads import loads
from harnez.store.sessions import new_session_id

TOTAL = 100_000
SMALL = 1_000


def events(count: int) -> list[Event]:
    """A realistic mix: deltas of 40-200 characters, some tool results, usage records."""
    out = []
    for i in range(count):
        if i % 50 == 49:
            out.append(
                Event(
                    ev.ToolCompleted(
                        call_id=f"c{i}",
                        name="read",
                        content="line of code\n" * 40,
                        details={"lines": 40},
                        is_error=False,
                    ),
                    task=1,
                )
            )
        elif i % 25 == 24:
            out.append(Event(ev.Usage(input=12000, output=300, cache_read=9000), task=1))
        else:
            out.append(
                Event(ev.TextDelta(text=("the replay reads every event " * 7)[: 40 + i % 160]), task=1)
            )
    return out


async def build(path: Path) -> tuple[Server, str, int]:
    """A server with one stored session of TOTAL events."""
    server = await Server.open(path)
    record = await server.store.sessions.insert(new_session_id(), "/bench/replay", None)
    await server.store.events.append_many(record.num, record.id, events(TOTAL))
    return server, record.id, record.num


def raw_read(conn: sqlite3.Connection, num: int, after: int) -> list[tuple]:
    """The reference: the same SELECT through sqlite3, payloads decoded (the deltas of a turn that has
    not ended, as all of these are, wait in live_deltas: docs/storage.md, "Footprint")."""
    rows = conn.execute(
        "SELECT seq, task, kind, payload, time FROM events WHERE session = ? AND seq > ? UNION ALL "
        "SELECT seq, task, kind, payload, time FROM live_deltas WHERE session = ? AND seq > ? ORDER BY seq",
        (num, after, num, after),
    ).fetchall()
    return [(r[0], r[1], r[2], loads(r[3]), r[4]) for r in rows]


async def subscribe_until(server: Server, session_id: str, after: int, count: int) -> None:
    """Receive `count` events from Server.subscribe, then stop."""
    received = 0
    stream = server.subscribe(session_id, after)
    async for _ in stream:
        received += 1
        if received == count:
            break
    await stream.aclose()


async def measure(server: Server, sid: str, num: int, conn: sqlite3.Connection, size: int, runs: int) -> None:
    """p50/p95 of read_after and subscribe for `size` events after a cursor, and the raw reference."""
    after = TOTAL - size
    log = server.store.events
    read = await lib.timed_runs(lambda: log.read_after(num, sid, after), runs)
    sub = await lib.timed_runs(lambda: subscribe_until(server, sid, after, size), runs)
    raw = lib.timed_sync(lambda: raw_read(conn, num, after), runs)
    target, limit = ("≤ 10 ms p95", 0.010) if size == SMALL else ("≤ 1 s", 1.0)
    print(f"replay of {size:,} events after cursor {after:,} ({runs} runs)")
    for label, times in (("EventLog.read_after", read), ("Server.subscribe", sub)):
        lib.report(
            label,
            lib.summary_ms(times),
            target,
            lib.percentile(times, 95) <= limit,
            f"p95 {lib.percentile(times, 95) / lib.percentile(raw, 95):.2f}× raw sqlite3 + json.loads "
            f"(p95 {lib.percentile(raw, 95) * 1000:.2f} ms)",
        )


async def main() -> None:
    """Build a 100k-event session, then time both replays."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50, help="runs of the 1,000-event replay")
    parser.add_argument("--big-runs", type=int, default=5, help="runs of the 100,000-event replay")
    args = parser.parse_args()
    lib.header("Replay after a cursor (SPEC §10: 1,000 events ≤ 10 ms p95; 100,000 events ≤ 1 s)")
    with tempfile.TemporaryDirectory(prefix="harnez-bench-replay-") as tmp:
        path = Path(tmp) / "replay.db"
        start = time.perf_counter()
        server, sid, num = await build(path)
        print(f"  built {TOTAL:,} events in {time.perf_counter() - start:.1f} s")
        conn = sqlite3.connect(path)
        await measure(server, sid, num, conn, SMALL, args.runs)
        await measure(server, sid, num, conn, TOTAL, args.big_runs)
        conn.close()
        await server.close()


if __name__ == "__main__":
    lib.run(main)
