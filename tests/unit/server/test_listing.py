"""Session listings: the title filter, ids in a full-text query, and the read-only early listing."""

from __future__ import annotations

import shutil
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.server.listing import EarlyListing
from harnez.store.migrate import migrate, migrations_dir


async def _seed(server: Server, workspace: Path, prompt: str, title: str | None = None) -> str:
    draft = server.create_session(workspace, model="local/qwen")
    await server.append(draft.id, Event(ev.UserMessage(text=prompt, mode="prompt"), search_text=prompt))
    if title:
        await server.rename(draft.id, title)
    return draft.id


async def test_the_title_filter_matches_titles_workspaces_and_id_prefixes_without_snippets(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    zebra = await _seed(server, workspace, "move the tables", title="Zebra migration")
    other = await _seed(server, workspace, "the zebra crossing", title="Docs pass")
    try:
        page = await server.list_sessions("zebra", workspace, full_text=False)
        assert [r.id for r in page.sessions] == [zebra] and page.snippets == {}
        by_id = await server.list_sessions(other[:6], workspace, full_text=False)
        assert [r.id for r in by_id.sessions] == [other]
        found = await server.list_sessions("zebra", workspace)
        assert {r.id for r in found.sessions} == {zebra, other} and "[zebra]" in found.snippets[other]
    finally:
        await server.close()


async def test_a_full_text_query_that_is_an_id_prefix_lists_that_session_first(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    wanted = await _seed(server, workspace, "an ordinary chat")
    await _seed(server, workspace, f"the log mentions {wanted[:8]} somewhere")
    try:
        page = await server.list_sessions(wanted[:8], workspace)
        assert page.sessions[0].id == wanted and len(page.sessions) == 2
        later = await server.list_sessions(wanted[:8], workspace, full_text=False)
        assert [r.id for r in later.sessions] == [wanted]
    finally:
        await server.close()


async def test_the_early_listing_reads_what_the_server_lists(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path)
    ids = [await _seed(server, workspace, f"chat {n} about zebras") for n in range(3)]
    expected = await server.list_sessions("zebras", workspace)
    await server.close()
    early = EarlyListing.of(db_path)
    assert early is not None and early.database == db_path
    try:
        assert [r.id for r in (await early.list_sessions(None, workspace)).sessions] == ids[::-1]
        found = await early.list_sessions("zebras", workspace)
        assert found.sessions == expected.sessions and found.snippets == expected.snippets
        assert set(await early.reload_sessions(found.sessions)) == set(ids)
    finally:
        early.close()


def test_no_early_listing_of_a_missing_database_or_one_that_needs_migrating(tmp_path: Path) -> None:
    assert EarlyListing.of(tmp_path / "absent.sqlite") is None
    first_only = tmp_path / "migrations"
    first_only.mkdir()
    first = sorted(migrations_dir().glob("0001_*.sql"))[0]
    shutil.copy(first, first_only / first.name)
    old = tmp_path / "old.sqlite"
    migrate(old, first_only)
    assert EarlyListing.of(old) is None
    assert not (tmp_path / "absent.sqlite").exists()


async def test_a_title_landing_between_two_pages_does_not_move_its_session(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    oldest, middle, newest = [await _seed(server, workspace, f"chat {n}") for n in range(3)]
    try:
        first = await server.list_sessions("", workspace, limit=2)
        assert [r.id for r in first.sessions] == [newest, middle]
        await server.rename(oldest, "Named after the first page")
        await server.append(oldest, Event(ev.WarningEvent(code="title-failed", message="Model unreachable.")))
        second = await server.list_sessions("", workspace, limit=2, cursor=first.next_cursor)
        assert [r.id for r in second.sessions] == [oldest] and second.next_cursor is None
        await server.append(oldest, Event(ev.UserMessage(text="back again", mode="prompt")))
        assert (await server.list_sessions("", workspace, limit=1)).sessions[0].id == oldest
    finally:
        await server.close()
