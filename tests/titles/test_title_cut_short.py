"""Naming cut short: the process quits or dies before a session's first prompt is named.

Naming runs once (the first prompt's flag is persisted before it starts), so a session whose naming
never ended would stay untitled for good, listed under its folder's name. It gets the excerpt of its
first prompt instead, as when the keyword worker fails: only the keywords are lost.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from title_support import EXCERPT, GatedWork, first_prompt, open_server, settings_for, title_of

from harnez.server import Server
from harnez.server.server import NAMING_GRACE

CRASH_WRITER = Path(__file__).parents[1] / "unit" / "store" / "crash_writer.py"
"""Streams an answer into its session's first task (prompt "stream until killed") until killed."""


async def test_a_server_closed_before_the_first_answer_ends_leaves_the_excerpt_as_the_title(
    db_path: Path, workspace: Path
) -> None:
    # The person quits while the first answer streams: the task is cancelled, naming with it.
    server = await open_server(db_path, settings_for("keywords/yake", {}), work=GatedWork())
    session_id = await first_prompt(server, workspace)
    await server.close()
    server = await Server.open(db_path)
    try:
        assert await title_of(server, session_id) == (EXCERPT, "excerpt")
    finally:
        await server.close()


async def test_a_title_the_session_has_by_then_is_kept(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}), work=GatedWork())
    session_id = await first_prompt(server, workspace)
    await server.rename(session_id, "Checkpoint races")
    await server.close()
    server = await Server.open(db_path)
    try:
        assert await title_of(server, session_id) == ("Checkpoint races", "user")
    finally:
        await server.close()


async def test_with_titles_off_a_closed_server_names_nothing(db_path: Path, workspace: Path) -> None:
    settings = settings_for("keywords/yake", {}, generated=False)
    server = await open_server(db_path, settings, work=GatedWork())
    session_id = await first_prompt(server, workspace)
    await server.close()
    server = await Server.open(db_path, settings)
    try:
        assert await title_of(server, session_id) == (None, None)
    finally:
        await server.close()


def killed_mid_answer(db_path: Path, workspace: Path) -> str:
    """Run the crash writer until its task has streamed a while, SIGKILL it; its session id."""
    writer = subprocess.Popen(
        [sys.executable, str(CRASH_WRITER), str(db_path), str(workspace)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    session, seen, deadline = "", 0, time.monotonic() + 30
    while seen < 50 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if line.startswith("session "):
            session = line.split()[1]
        elif line.strip():
            seen += 1
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(10)
    assert session and seen >= 50
    return session


async def test_a_session_whose_process_was_killed_mid_answer_is_named_by_its_excerpt_on_the_next_open(
    db_path: Path, workspace: Path
) -> None:
    session_id = killed_mid_answer(db_path, workspace)
    server = await Server.open(db_path)  # closes the dead process's task as interrupted
    try:
        record = await server.get_session(session_id)
        assert record.status == "interrupted"
        assert (record.title, record.title_source) == ("stream until killed", "excerpt")
        changed = [e for e in await server.events_after(session_id) if e.kind == "title-changed"]
        assert [e.body.title for e in changed] == ["stream until killed"]  # front ends hear of it
    finally:
        await server.close()


async def test_with_titles_off_a_killed_process_leaves_its_session_untitled(
    db_path: Path, workspace: Path
) -> None:
    session_id = killed_mid_answer(db_path, workspace)
    server = await Server.open(db_path, settings_for("keywords/yake", {}, generated=False))
    try:
        assert await title_of(server, session_id) == (None, None)
    finally:
        await server.close()


async def test_a_session_whose_process_died_between_its_answer_and_its_title_is_named_on_a_later_open(
    db_path: Path, workspace: Path
) -> None:
    """Killed after the first task ended, before the keyword worker stored its title: no task was left
    running for an opening to close, and the session stayed untitled for good. One idle past the
    grace is named by its excerpt; one just active is left to the process that may still name it."""
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    sessions = [await first_prompt(server, workspace) for _ in range(2)]
    for session_id in sessions:
        await server.wait(session_id)
    await server.wait_for_titles(30)
    await server.close()
    with sqlite3.connect(db_path) as conn:  # as the kill left them: naming begun, no title stored
        for session_id, idle in zip(sessions, (NAMING_GRACE + 60, 1.0), strict=True):
            conn.execute(
                "UPDATE sessions SET title = NULL, title_source = NULL, updated_at = ? WHERE id = ?",
                (time.time() - idle, session_id),
            )
    server = await Server.open(db_path)
    try:
        assert await title_of(server, sessions[0]) == (EXCERPT, "excerpt")
        assert await title_of(server, sessions[1]) == (None, None)
    finally:
        await server.close()
