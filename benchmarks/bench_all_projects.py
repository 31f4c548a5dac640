"""Benchmark listings across projects (`harnez sessions --all`, the picker's Ctrl+T) against the
single-project listing measured in the same run; and what the index of databases costs an open.

Builds `--projects` databases of `--sessions` sessions each (three workspaces per project, a
full-text document per session), indexes them, opens the first as "this project" through
`Server.open`, then times first pages: this workspace and this project (the reference: what
`harnez sessions` and the picker read without the index) against every project through
`AllProjects`, warm (the picker keeps one) and cold (a new one per call, as `harnez sessions --all`
makes: the index read and every connection opened). Paging checks every session is reached once.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import bench_store_lib as lib

from harnez.server import Server
from harnez.server.projects import AllProjects, remember_database
from harnez.store.index import DatabaseIndex

RARE = "zebra garden kernel lambda"
WORDS = (
    "migration",
    "zebra",
    "cursor",
    "window",
    "release",
    "parser",
    "socket",
    "banana",
    "kernel",
    "picker",
    "theme",
    "commit",
    "harness",
    "token",
    "stream",
    "lambda",
    "vector",
    "garden",
)


async def build(root: Path, projects: int, sessions: int, seed: int = 7) -> list[Path]:
    """Project databases with the real schema (Server.open), rows written by raw sqlite3."""
    rng = random.Random(seed)
    databases = []
    now = time.time()
    for p in range(projects):
        project = root / f"project-{p:02d}"
        database = project / ".harnez" / "harnez.sqlite"
        server = await Server.open(database)
        await server.close()
        conn = lib.raw_connect(database)
        rows, docs = [], []
        for n in range(sessions):
            num = n + 1
            workspace = str(project / ("", "src", "docs")[n % 3]).rstrip("/")
            moment = now - rng.uniform(0, 90 * 86400)
            rows.append(
                (
                    num,
                    f"{p:02x}{n:06x}".ljust(32, "0"),
                    workspace,
                    f"{rng.choice(WORDS)} chat {n}",
                    "keywords",
                    "chat/model",
                    "completed",
                    moment,
                    moment,
                )
            )
            docs.append((num, "message", " ".join(rng.choice(WORDS) for _ in range(12))))
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO sessions (num, id, workspace, title, title_source, model, status, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany("INSERT INTO search_docs (session, kind, text) VALUES (?, ?, ?)", docs)
        conn.execute("INSERT INTO search_fts (rowid, text) SELECT id, text FROM search_docs")
        conn.execute("COMMIT")
        conn.close()
        databases.append(database)
    return databases


async def first_pages(server: Server, index: DatabaseIndex, workspace: Path, runs: int) -> None:
    """First pages of 50: this workspace, this project, every project (warm and cold)."""
    here = await lib.timed_runs(lambda: server.list_sessions(None, workspace, None, 50), runs)
    project = await lib.timed_runs(lambda: server.list_sessions(None, None, None, 50), runs)
    warm_projects = AllProjects(server, index)
    warm = await lib.timed_runs(lambda: warm_projects.page(None, None, 50), runs)

    async def cold_page() -> None:
        projects = AllProjects(server, index)
        try:
            await projects.page(None, None, 50)
        finally:
            projects.close()

    cold = await lib.timed_runs(cold_page, runs)
    reference = lib.percentile(here, 95)
    lib.report(
        "this workspace, first page (reference: `harnez sessions`, the picker)",
        lib.summary_ms(here),
        "—",
        True,
        "1.00×",
    )
    lib.report(
        "this project, first page",
        lib.summary_ms(project),
        "—",
        True,
        f"p95 {lib.percentile(project, 95) / reference:.2f}× this workspace",
    )
    for label, times in (
        ("every project, first page, warm (picker)", warm),
        ("every project, first page, cold (`sessions --all`)", cold),
    ):
        p95 = lib.percentile(times, 95)
        lib.report(
            label,
            lib.summary_ms(times),
            "≤ 100 ms p95",
            p95 <= 0.1,
            f"p50 {lib.median(times) / lib.median(here):.1f}×, p95 {p95 / reference:.1f}× this workspace",
        )
    for term in ("zebra", "zebra garden kernel"):
        single = await lib.timed_runs(lambda: server.list_sessions(term, None, None, 50), runs)
        every = await lib.timed_runs(lambda: warm_projects.page(term, None, 50), runs)
        p95 = lib.percentile(every, 95)
        lib.report(
            f"full text '{term}', every project (warm)",
            lib.summary_ms(every),
            "≤ 150 ms p95",
            p95 <= 0.15,
            f"p50 {lib.median(every) / lib.median(single):.1f}×, p95 {p95 / lib.percentile(single, 95):.1f}× "
            f"this project (p95 {lib.percentile(single, 95) * 1000:.2f} ms)",
        )
    warm_projects.close()


async def paging(server: Server, index: DatabaseIndex, expected: int, query: str | None = None) -> None:
    """Follow next_cursor across every project: each (matching) session reached exactly once."""
    projects = AllProjects(server, index)
    seen: list[str] = []
    cursor, pages, times = None, 0, []
    while True:
        start = time.perf_counter()
        page = await projects.page(query, cursor, 50)
        times.append(time.perf_counter() - start)
        seen += [record.id for record in page.sessions]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    projects.close()
    ok = len(set(seen)) == expected and (query is not None or len(seen) == expected)
    what = f"sessions matching '{query}'" if query else "sessions"
    print(
        f"  paging every project: {len(set(seen))} of {expected} {what} in {pages} pages, "
        f"{lib.summary_ms(times)} per page  [every one reached: {lib.verdict(ok)}]"
    )


def matching(databases: list[Path], query: str) -> int:
    """How many sessions match every word of `query`, counted by raw sqlite3 in every database."""
    words = " AND ".join(f'"{word}"' for word in query.split())
    total = 0
    for database in databases:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            total += conn.execute(
                "SELECT COUNT(DISTINCT d.session) FROM search_fts JOIN search_docs d "
                "ON d.id = search_fts.rowid WHERE search_fts MATCH ?",
                (words,),
            ).fetchone()[0]
    return total


async def index_cost(database: Path, runs: int) -> None:
    """What opening a project's database pays for the index (a read, no write, once it is indexed),
    against opening the database itself."""
    times = lib.timed_sync(lambda: remember_database(database), runs * 4)

    async def open_and_close() -> None:
        server = await Server.open(database)
        await server.close()

    opens = await lib.timed_runs(open_and_close, max(runs // 5, 5))
    p95, opened = lib.percentile(times, 95), lib.percentile(opens, 50)
    lib.report(
        "remember_database on open, already indexed",
        f"p95 {p95 * 1e6:.0f} µs",
        "≤ 1 ms",
        p95 <= 0.001,
        f"{p95 / opened * 100:.2f} % of Server.open + close (p50 {opened * 1000:.1f} ms)",
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=12)
    parser.add_argument("--sessions", type=int, default=2000, help="per project")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    lib.header(
        f"Listings across {args.projects} projects of {args.sessions:,} sessions each "
        "(SPEC §10 picker targets; the index must not slow the current project's listing)"
    )
    root = Path(tempfile.mkdtemp(prefix="harnez-bench-projects-"))
    started = time.perf_counter()
    databases = await build(root, args.projects, args.sessions)
    print(f"  built in {time.perf_counter() - started:.1f} s under {root}")
    index = DatabaseIndex(root / "state" / "databases.json")
    for database in databases:
        index.remember(database)
    server = await Server.open(databases[0])
    try:
        await first_pages(server, index, databases[0].parent.parent / "src", args.runs)
        await paging(server, index, args.projects * args.sessions)
        await paging(server, index, matching(databases, RARE), RARE)
        await server.close()
        await index_cost(databases[0], args.runs)
    finally:
        await server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    lib.run(main)
