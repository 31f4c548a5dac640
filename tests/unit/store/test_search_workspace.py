"""Full text in one workspace: a small workspace's documents gathered first give the same pages as the join."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.store import search
from harnez.store.search import SearchHit, workspace_scope

WORDS = ["parser", "that", "zebra", "the"]


async def _seeded(db_path: Path, tmp_path: Path) -> tuple[Server, list[str]]:
    """Sessions in three workspaces, their prompts written in turns so their documents interleave."""
    server = await Server.open(db_path)
    workspaces = []
    for name in ("big", "small", "other"):
        folder = tmp_path / name
        folder.mkdir()
        workspaces.append(str(folder.resolve()))
    drafts = [server.create_session(Path(workspaces[n % 3]), model="local/qwen") for n in range(12)]
    for turn in range(4):
        for n, draft in enumerate(drafts):
            prompt = f"turn {turn}: {WORDS[(n + turn) % len(WORDS)]} and that {'zebra' if n % 5 == 0 else ''}"
            await server.append(draft.id, Event(ev.UserMessage(text=prompt), search_text=prompt))
    return server, workspaces


async def _pages(server: Server, text: str, workspace: str) -> list[tuple[list[SearchHit], str | None]]:
    """Every page of a search in a workspace, two sessions and at most three matches a page."""
    pages, cursor = [], None
    while True:
        page = await server.store.search.search(text, workspace, cursor, limit=2, scan=3)
        pages.append((page.hits, page.next_cursor))
        cursor = page.next_cursor
        if cursor is None:
            return pages


def test_a_workspace_of_few_sessions_is_checked_by_its_documents_ids() -> None:
    assert "search_docs" in workspace_scope("/w", search.SMALL_WORKSPACE)[0]
    assert "search_docs" not in workspace_scope("/w", search.SMALL_WORKSPACE + 1)[0]


async def test_gathering_a_workspaces_documents_first_pages_as_the_join_does(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, workspaces = await _seeded(db_path, tmp_path)
    try:
        for text in ("that", "zebra", "the", "pars", "turn 2"):
            for workspace in workspaces:
                monkeypatch.setattr(search, "SMALL_WORKSPACE", 0)
                joined = await _pages(server, text, workspace)
                monkeypatch.setattr(search, "SMALL_WORKSPACE", 10_000)
                gathered = await _pages(server, text, workspace)
                assert gathered == joined, (text, workspace)
                sessions = {hit.session_num for hits, _ in joined for hit in hits}
                assert sessions, (text, workspace)
                in_workspace = await server.store.sessions.by_nums(sorted(sessions))
                assert {r.workspace for r in in_workspace.values()} == {workspace}
    finally:
        await server.close()
