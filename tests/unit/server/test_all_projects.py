"""Every project's sessions: the index of databases, and listings that merge them newest first."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import stat
from pathlib import Path

import pytest

from harnez.errors import SessionNotFoundError
from harnez.server import Server
from harnez.server.projects import AllProjects, remember_database
from harnez.store.index import DatabaseIndex, project_of
from tests.tui.helpers import seed_session


def _index(tmp_path: Path) -> DatabaseIndex:
    return DatabaseIndex(tmp_path / "state" / "databases.json")


async def _project(root: Path, prompts: list[str], times: list[float]) -> tuple[Path, list[str]]:
    """A project database holding one session per prompt, last active at the given times."""
    database = root / ".harnez" / "harnez.sqlite"
    server = await Server.open(database)
    try:
        ids = [await seed_session(server, root, prompt) for prompt in prompts]
    finally:
        await server.close()
    with sqlite3.connect(database) as conn:
        conn.executemany(
            "UPDATE sessions SET updated_at = ? WHERE id = ?", list(zip(times, ids, strict=True))
        )
    return database, ids


async def _three_projects(tmp_path: Path) -> tuple[DatabaseIndex, dict[str, Path], dict[str, float]]:
    """Three projects whose sessions' activity interleaves; the index knows all three."""
    index = _index(tmp_path)
    layout = {"alpha": [100, 40, 10], "beta": [90, 80, 20, 5], "gamma": [60, 50]}
    databases, times = {}, {}
    for name, moments in layout.items():
        database, ids = await _project(tmp_path / name, [f"{name} chat {m}" for m in moments], moments)
        databases[name] = database
        times.update(zip(ids, moments, strict=True))
        index.remember(database)
    return index, databases, times


def test_the_index_keeps_each_database_once_privately_and_only_paths(tmp_path: Path) -> None:
    index = _index(tmp_path)
    database = tmp_path / "p" / ".harnez" / "harnez.sqlite"
    assert index.remember(database) and not index.remember(database)
    assert [entry.path for entry in index.entries()] == [database]
    assert stat.S_IMODE(index.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(index.path.parent.stat().st_mode) == 0o700
    data = json.loads(index.path.read_text())
    assert set(data) == {"version", "databases"} and set(data["databases"][0]) == {"path", "added_at"}
    assert project_of(database) == tmp_path / "p" and project_of(tmp_path / "x.sqlite") == tmp_path


def test_a_damaged_index_counts_as_empty_and_is_rewritten_whole(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.path.parent.mkdir(parents=True)
    index.path.write_text('{"databases": [{"path": "/half')
    assert index.entries() == []
    assert index.remember(tmp_path / "a.sqlite")
    assert [entry.path for entry in index.entries()] == [tmp_path / "a.sqlite"]


def _remember_many(path: str, first: int) -> None:
    index = DatabaseIndex(Path(path))
    for n in range(first, first + 25):
        index.remember(Path(f"/projects/p{n}/.harnez/harnez.sqlite"))


def test_two_processes_remembering_at_once_lose_nothing(tmp_path: Path) -> None:
    index = _index(tmp_path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_remember_many, args=(str(index.path), first)) for first in (0, 25)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len({entry.path for entry in index.entries()}) == 50


def test_remember_database_uses_the_state_folder_and_reports_an_unwritable_one(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert remember_database(tmp_path / "a.sqlite", {"HARNEZ_STATE_HOME": str(state)}) is None
    assert (state / "databases.json").exists()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    notice = remember_database(tmp_path / "a.sqlite", {"HARNEZ_STATE_HOME": str(blocker / "state")})
    assert notice is not None and "HARNEZ_STATE_HOME" in notice and "across projects" in notice


async def test_pages_across_projects_are_newest_first_and_show_each_session_once(tmp_path: Path) -> None:
    index, databases, times = await _three_projects(tmp_path)
    projects = AllProjects(None, index)
    seen, cursor, pages = [], None, 0
    while True:
        page = await projects.page(None, cursor, limit=2)
        pages += 1
        seen += page.sessions
        assert all(page.databases[r.id] in databases.values() for r in page.sessions)
        cursor = page.next_cursor
        if cursor is None:
            break
    projects.close()
    assert [times[r.id] for r in seen] == sorted(times.values(), reverse=True)
    assert len({r.id for r in seen}) == len(times) == 9 and pages == 5


async def test_the_current_server_is_listed_with_the_others_even_when_not_indexed(tmp_path: Path) -> None:
    index, databases, times = await _three_projects(tmp_path)
    here = tmp_path / "here" / ".harnez" / "harnez.sqlite"
    server = await Server.open(here)
    try:
        mine = await seed_session(server, tmp_path / "here", "a fresh chat about zebras")
        projects = AllProjects(server, index)
        page = await projects.page(None, None, limit=50)
        assert page.sessions[0].id == mine and page.databases[mine] == here.resolve()
        assert len(page.sessions) == 10 and page.next_cursor is None
        found = await projects.page("zebras", None, limit=50)
        assert [r.id for r in found.sessions] == [mine] and "[zebras]" in found.snippets[mine]
        beta = await projects.page("beta", None, limit=50)
        assert {times[r.id] for r in beta.sessions} == {90, 80, 20, 5}
        assert {beta.databases[r.id] for r in beta.sessions} == {databases["beta"]}
        projects.close()
    finally:
        await server.close()


async def test_a_vanished_database_leaves_the_index_quietly(tmp_path: Path) -> None:
    index, databases, _ = await _three_projects(tmp_path)
    moved = databases["gamma"].parent.parent
    moved.rename(tmp_path / "gamma-moved")
    projects = AllProjects(None, index)
    page = await projects.page(None, None, limit=50)
    assert len(page.sessions) == 7 and page.skipped == []
    assert databases["gamma"] not in [entry.path for entry in index.entries()]
    projects.close()


async def test_an_unreadable_database_is_skipped_with_a_reason_and_the_rest_listed(tmp_path: Path) -> None:
    index, databases, _ = await _three_projects(tmp_path)
    databases["beta"].write_bytes(b"this is not SQLite at all" * 100)
    for companion in ("-wal", "-shm"):
        databases["beta"].with_name("harnez.sqlite" + companion).unlink(missing_ok=True)
    projects = AllProjects(None, index)
    page = await projects.page(None, None, limit=50)
    assert len(page.sessions) == 5
    (reason,) = page.skipped
    assert str(databases["beta"]) in reason and "not a Harnez database" in reason
    assert databases["beta"] in [entry.path for entry in index.entries()], "kept: it may be readable later"
    projects.close()


async def test_a_slow_database_costs_a_bounded_time_then_is_skipped(tmp_path: Path) -> None:
    index = _index(tmp_path)
    database, _ = await _project(tmp_path / "big", ["the first"], [1.0])
    with sqlite3.connect(database) as conn:  # enough rows that a full-text page runs many steps
        texts = [(1000 + n, f"common words number {n}") for n in range(20000)]
        conn.executemany(
            "INSERT INTO search_docs (id, session, kind, text) VALUES (?, 1, 'message', ?)", texts
        )
        conn.executemany("INSERT INTO search_fts (rowid, text) VALUES (?, ?)", texts)
    index.remember(database)
    projects = AllProjects(None, index, budget=0.0)
    page = await projects.page("common", None, limit=50)
    assert page.sessions == [] and "took longer than 0 s" in page.skipped[0]
    projects.close()


async def test_sessions_are_located_and_reloaded_in_their_own_database(tmp_path: Path) -> None:
    index, databases, _times = await _three_projects(tmp_path)
    projects = AllProjects(None, index)
    page = await projects.page(None, None, limit=50)
    oldest, second = page.sessions[-1], page.sessions[1]  # beta's sessions active at 5 and at 90
    record, database = await projects.locate(oldest.id[:10])
    assert record.id == oldest.id and database == databases["beta"]
    with pytest.raises(SessionNotFoundError, match="in any project"):
        await projects.locate("f" * 32)
    server = await Server.open(databases["beta"])
    try:
        await server.rename(oldest.id, "Renamed in its own project")
        await server.delete_session(second.id)
    finally:
        await server.close()
    fresh = await projects.reload(page.sessions)
    assert fresh[oldest.id].title == "Renamed in its own project"
    assert second.id not in fresh and len(fresh) == 8
    projects.close()


async def test_full_text_pages_across_projects_reach_every_matching_session(tmp_path: Path) -> None:
    index, _databases, times = await _three_projects(tmp_path)
    projects = AllProjects(None, index)
    reached, cursor = set(), None
    while True:
        page = await projects.page("chat", cursor, limit=2)
        reached |= {record.id for record in page.sessions}
        assert all("[chat]" in page.snippets[record.id] for record in page.sessions)
        cursor = page.next_cursor
        if cursor is None:
            break
    projects.close()
    assert reached == set(times)
    with pytest.raises(ValueError, match="Invalid page cursor"):
        await AllProjects(None, index).page(None, "bm90LWEtY3Vyc29y", 2)
