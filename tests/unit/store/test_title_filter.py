"""The title filter: the trigram index (version 9) gives exactly the rows of the LIKE walk it replaces,
on databases that have the index and on version-8 ones read without migrating."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from harnez.store import titlefilter
from harnez.store.db import Database
from harnez.store.migrate import migrate, migrations_dir
from harnez.store.readonly import ReadOnlyDatabase
from harnez.store.sessions import SessionTable, new_session_id

TITLES = [
    "Zebra migration",
    "zebra crossing in the docs",
    "ZEBRA STRIPES",
    "Straße räumen",
    "Ünïcode café naïve",
    "ÜNÏCODE CAFÉ",
    "50% done_with a\\backslash",
    'a "quoted" title',
    "emoji 🦓 here",
    "fix the flaky test in tests/unit/store/test_folding.py for good this time",
    None,
    "ab",
]
WORKSPACES = ["/home/dev/src/proj-alpha", "/home/dev/src/Projekt-Über", "/srv/zebra-tools"]
FILTERS = [
    "z",
    "Z",
    "ze",
    "zeb",
    "ZEBRA",
    "bra m",
    "straße",
    "STRASSE",
    "ünï",
    "ÜNÏ",
    "café",
    "CAFÉ",
    "über",
    "Über",
    "%",
    "50%",
    "_",
    "done_w",
    "a\\b",
    '"quoted"',
    "🦓",
    "oji 🦓 h",
    "flaky test in tests/unit/store/test_folding",
    "proj-",
    "/home/dev",
    "zebra-tools",
    "qqxqzz",
    "ab",
    "abc",
    "b",
    "on",
    "ON",
    "ee",
    "E",
    "y.",
    "ß",
]


def _expected(path: Path, text: str, workspace: str | None) -> list[str]:
    """The ids the filter gave before the index: LIKE over every session of the scope, newest first."""
    like = "%" + titlefilter.escaped(text) + "%"
    sql = (
        "SELECT id FROM sessions WHERE (title LIKE ? ESCAPE '\\' OR workspace LIKE ? ESCAPE '\\' "
        "OR id LIKE ? ESCAPE '\\')"
    )
    params = [like, like, titlefilter.escaped(text.lower()) + "%"]
    if workspace is not None:
        sql, params = sql + " AND workspace = ?", [*params, workspace]
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute(sql + " ORDER BY updated_at DESC, num DESC", params)]
    finally:
        conn.close()


async def _filtered(sessions: SessionTable, text: str, workspace: str | None) -> list[str]:
    """Every id the filter lists, page after page (three to a page, so cursors are crossed)."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await sessions.page(workspace, cursor, limit=3, title_filter=text)
        ids += [record.id for record in page.sessions]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


async def _fill(sessions: SessionTable) -> list[str]:
    """Sessions of every title in every workspace; some renamed, one deleted (the index follows)."""
    ids = []
    for n, title in enumerate(TITLES * 2):
        session_id = new_session_id()
        record = await sessions.insert(session_id, WORKSPACES[n % len(WORKSPACES)], "local/m", title)
        ids.append(session_id)
        if n % 5 == 0:
            await sessions.set_title(record.num, f"Renamed zebra {n}", "user")
        if n == 7:
            await sessions.delete(record.num)
    return ids


def _filters(ids: list[str]) -> list[str]:
    """FILTERS and id prefixes, in lower and upper case."""
    return [*FILTERS, ids[3][:1], ids[3][:5], ids[4][:6].upper(), ids[5]]


async def _assert_same_as_the_walk(sessions: SessionTable, path: Path, texts: list[str]) -> None:
    for workspace in [None, *WORKSPACES]:
        for text in texts:
            assert await _filtered(sessions, text, workspace) == _expected(path, text, workspace), (
                text,
                workspace,
            )


@pytest.mark.parametrize(
    ("candidates", "terms"), [(titlefilter.CANDIDATES_MAX, titlefilter.TERMS_MAX), (3, 2)]
)
async def test_the_indexed_filter_lists_what_the_like_walk_listed(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, candidates: int, terms: int
) -> None:
    monkeypatch.setattr(titlefilter, "CANDIDATES_MAX", candidates)
    monkeypatch.setattr(titlefilter, "TERMS_MAX", terms)
    db = await Database.open(db_path)
    try:
        sessions = SessionTable(db)
        ids = await _fill(sessions)
        await _assert_same_as_the_walk(sessions, db_path, _filters(ids))
    finally:
        await db.close()


async def test_a_rare_text_is_looked_up_in_the_index(db_path: Path) -> None:
    db = await Database.open(db_path)
    try:
        await _fill(SessionTable(db))
        narrowing = titlefilter.TitleFilter(db)
        assert "session_titles" in (await narrowing.condition("flaky", WORKSPACES[0]))[0]
        assert "session_titles" in (await narrowing.condition("naïve", None))[0]
        assert "session_titles" in (await narrowing.condition("fl", WORKSPACES[0]))[0]
        assert "session_titles" in (await narrowing.condition("N", WORKSPACES[0]))[0]
        assert "session_titles" not in (await narrowing.condition("ß", WORKSPACES[0]))[0]
        # The workspace contains the text: every session of it matches, newest first is the answer.
        assert "session_titles" not in (await narrowing.condition("alpha", WORKSPACES[0]))[0]
        assert "session_titles" not in (await narrowing.condition("Projekt", None))[0]
    finally:
        await db.close()


async def test_a_version_8_database_is_filtered_without_the_index_and_migrating_fills_it(
    tmp_path: Path, db_path: Path
) -> None:
    eight = tmp_path / "eight"
    eight.mkdir()
    for migration in sorted(migrations_dir().glob("000[1-8]_*.sql")):
        shutil.copy(migration, eight / migration.name)
    db = await Database.open(db_path, eight)
    try:
        ids = await _fill(SessionTable(db))
    finally:
        await db.close()
    reader = ReadOnlyDatabase(db_path)
    try:
        assert "session_titles" not in (await titlefilter.TitleFilter(reader).condition("flaky", None))[0]
        await _assert_same_as_the_walk(reader.sessions, db_path, _filters(ids))
    finally:
        reader.close()
    migrate(db_path)
    db = await Database.open(db_path)
    try:
        assert "session_titles" in (await titlefilter.TitleFilter(db).condition("flaky", None))[0]
        await _assert_same_as_the_walk(SessionTable(db), db_path, _filters(ids))
    finally:
        await db.close()
    reader = ReadOnlyDatabase(db_path)  # the index read through a read-only connection, as across projects
    try:
        assert "session_titles" in (await titlefilter.TitleFilter(reader).condition("fl", None))[0]
        await _assert_same_as_the_walk(reader.sessions, db_path, _filters(ids))
    finally:
        reader.close()
