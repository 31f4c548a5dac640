"""Benchmark the resume picker's queries on 10k sessions / 1M events: first page, title filter, full text, paging."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import bench_store_lib as lib
import generate_data

from harnez.server import Server
from harnez.store.search import SCAN_LIMIT, fts_query

PAGE_SQL = (
    "SELECT num, id, workspace, title, title_source, naming_used, model, status, created_at, updated_at "
    "FROM sessions {where} ORDER BY updated_at DESC, num DESC LIMIT 51"
)
FTS_SQL = (
    "SELECT d.id, d.session, d.kind FROM search_fts "
    "JOIN search_docs d ON d.id = search_fts.rowid {join} WHERE search_fts MATCH ? {where} "
    "ORDER BY search_fts.rowid DESC LIMIT ?"
)


def raw_page(conn: sqlite3.Connection, workspace: str | None) -> list:
    """The first page's SQL through plain sqlite3."""
    if workspace is None:
        return conn.execute(PAGE_SQL.format(where="")).fetchall()
    return conn.execute(PAGE_SQL.format(where="WHERE workspace = ?"), (workspace,)).fetchall()


def raw_title(conn: sqlite3.Connection, text: str, workspace: str | None = None) -> list:
    """The title filter's SQL before its index (a LIKE walk newest first) through plain sqlite3."""
    like = f"%{text}%"
    where = "WHERE (title LIKE ? ESCAPE '\\' OR workspace LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')"
    params = [like, like, text + "%"]
    if workspace is not None:
        where, params = where + " AND workspace = ?", [*params, workspace]
    return conn.execute(PAGE_SQL.format(where=where), params).fetchall()


def raw_fts(conn: sqlite3.Connection, text: str, workspace: str | None) -> list:
    """The full-text page's SQL through plain sqlite3."""
    if workspace is None:
        return conn.execute(FTS_SQL.format(join="", where=""), (fts_query(text), SCAN_LIMIT)).fetchall()
    return conn.execute(
        FTS_SQL.format(join="JOIN sessions s ON s.num = d.session", where="AND s.workspace = ?"),
        (fts_query(text), workspace, SCAN_LIMIT),
    ).fetchall()


async def compare(
    label: str, call, reference, runs: int, target: str, limit: float, round_trip: float
) -> None:
    """Time call() and reference() `runs` times; report p50/p95/max and the ratios."""
    ours = await lib.timed_runs(call, runs)
    raw = lib.timed_sync(reference, runs)
    p95, raw95 = lib.percentile(ours, 95), lib.percentile(raw, 95)
    lib.report(
        label,
        lib.summary_ms(ours),
        target,
        p95 <= limit,
        f"p95 {p95 / raw95:.1f}× raw sqlite3 ({raw95 * 1000:.2f} ms), "
        f"{p95 / round_trip:.0f}× an aiosqlite round trip",
    )


async def keystrokes(
    server: Server, word: str, full_text: bool, rounds: int, workspace: Path | None = None
) -> list[float]:
    """Seconds per keystroke while typing `word` into the filter, `rounds` times."""
    times: list[float] = []
    for _ in range(rounds):
        for end in range(1, len(word) + 1):
            typed = word[:end]
            times += await lib.timed_runs(
                lambda: server.list_sessions(typed, workspace, full_text=full_text), 1, 0
            )
    return times


async def page_all(server: Server, text: str, workspace: Path | None) -> tuple[set[str], int, list[float]]:
    """Follow next_cursor to the end: the session ids reached, the pages, and seconds per page."""
    seen: set[str] = set()
    cursor, pages, times = None, 0, []
    while True:
        timed: list = []

        async def one() -> None:
            timed.append(await server.list_sessions(text, workspace, cursor))

        times += await lib.timed_runs(one, 1, 0)
        page = timed[0]
        pages += 1
        seen |= {s.id for s in page.sessions}
        cursor = page.next_cursor
        if cursor is None:
            return seen, pages, times


def expected_sessions(conn: sqlite3.Connection, text: str, workspace: str | None) -> set[str]:
    """Every session with a matching document, found without paging."""
    sql = (
        "SELECT DISTINCT s.id FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid "
        "JOIN sessions s ON s.num = d.session WHERE search_fts MATCH ?"
    )
    params: list = [fts_query(text)]
    if workspace is not None:
        sql += " AND s.workspace = ?"
        params.append(workspace)
    return {r[0] for r in conn.execute(sql, params)}


async def main() -> None:
    """Open the generated database through Server.open and time the picker's queries."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    path, meta = generate_data.ensure(args.sessions, args.events)
    lib.header(
        f"Resume picker on {args.sessions:,} sessions / {args.events:,} events "
        f"(SPEC §10: first page ≤ 100 ms p95, filter ≤ 30 ms p95, full text ≤ 150 ms p95)"
    )
    print(f"  terms: {meta}")
    server = await Server.open(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        await run_all(server, conn, meta, args.runs)
    finally:
        conn.close()
        await server.close()


async def run_all(server: Server, conn: sqlite3.Connection, meta: dict, runs: int) -> None:
    """Every picker figure."""
    db = server.store.db
    trip = lib.percentile(await lib.timed_runs(lambda: db.fetchone("SELECT 1"), runs * 4), 95)
    raw_trip = lib.percentile(lib.timed_sync(lambda: conn.execute("SELECT 1").fetchone(), runs * 4), 95)
    print(
        f"  reference: SELECT 1 round trip p95 {trip * 1e6:.0f} µs via aiosqlite, "
        f"{raw_trip * 1e6:.0f} µs via sqlite3"
    )
    big, small = Path(meta["workspace_big"]), Path(meta["workspace_small"])
    await compare(
        "first page, 50 rows",
        lambda: server.list_sessions(),
        lambda: raw_page(conn, None),
        runs,
        "≤ 100 ms p95",
        0.1,
        trip,
    )
    await compare(
        "first page, one workspace",
        lambda: server.list_sessions(workspace=big),
        lambda: raw_page(conn, str(big)),
        runs,
        "≤ 100 ms p95",
        0.1,
        trip,
    )
    await title_filter(server, conn, meta, runs, trip)
    for term in (meta["common"], meta["rare"]):
        for ws in (None, big, small):
            where = f", workspace {ws.name}" if ws else ""
            await compare(
                f"full text '{term}'{where}",
                lambda: server.list_sessions(term, ws),
                lambda: raw_fts(conn, term, str(ws) if ws else None),
                runs,
                "≤ 150 ms p95",
                0.15,
                trip,
            )
    typed = await keystrokes(server, meta["common"], True, max(runs // 10, 3))
    lib.report(
        f"full text per keystroke typing '{meta['common']}' (prefix queries)",
        lib.summary_ms(typed),
        "≤ 150 ms p95",
        lib.percentile(typed, 95) <= 0.15,
        f"p95 {lib.percentile(typed, 95) / trip:.0f}× a round trip",
    )
    await paging(server, conn, meta["rare"], None)
    await paging(server, conn, meta["rare"], big)
    await paging(server, conn, medium_term(conn), None)


def medium_term(conn: sqlite3.Connection) -> str:
    """A term in a few hundred documents: its matches span several pages."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, search_fts, row)")
    return conn.execute(
        "SELECT term FROM temp.vocab WHERE doc BETWEEN 300 AND 600 AND length(term) >= 8 "
        "ORDER BY doc, term LIMIT 1"
    ).fetchone()[0]


async def title_filter(server: Server, conn: sqlite3.Connection, meta: dict, runs: int, trip: float) -> None:
    """Per-keystroke title filter, typing a title word and a word that matches nothing, over every
    session and in the biggest workspace (the picker's default scope)."""
    word = meta["title_word"]
    for workspace in (None, Path(meta["workspace_big"])):
        for typed_word in (word, "qqxqzz"):
            times = await keystrokes(server, typed_word, False, max(runs // len(typed_word), 3), workspace)
            ws = str(workspace) if workspace else None
            raw = lib.timed_sync(lambda: raw_title(conn, typed_word, ws), runs)
            p95 = lib.percentile(times, 95)
            where = f", workspace {workspace.name}" if workspace else ""
            lib.report(
                f"title filter per keystroke typing '{typed_word}'{where}",
                lib.summary_ms(times),
                "≤ 30 ms p95",
                p95 <= 0.03,
                f"p95 {p95 / lib.percentile(raw, 95):.1f}× the LIKE walk of the whole word in raw sqlite3 "
                f"({lib.percentile(raw, 95) * 1000:.2f} ms), {p95 / trip:.0f}× a round trip",
            )


async def paging(server: Server, conn: sqlite3.Connection, term: str, workspace: Path | None) -> None:
    """Every session matching a term is reached by following next_cursor."""
    reached, pages, times = await page_all(server, term, workspace)
    expected = expected_sessions(conn, term, str(workspace) if workspace else None)
    where = f" in workspace {workspace.name}" if workspace else ""
    ok = reached == expected
    print(
        f"  paging '{term}'{where}: {len(reached)} of {len(expected)} matching sessions reached in {pages} "
        f"page(s), {lib.summary_ms(times)} per page  [every session reachable: {lib.verdict(ok)}]"
    )


if __name__ == "__main__":
    lib.run(main)
