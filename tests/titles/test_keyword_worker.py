"""Keyword titles come from a worker process: the same titles, and a worker that fails costs only keywords."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

import pytest
from title_support import EXCERPT, first_prompt, open_server, settings_for, title_of, wait_until

from harnez.titles.keywords import keyword_title
from harnez.titles.worker import KeywordWorker, TitleWorkerError

TABLE = json.loads(
    (Path(__file__).parents[1] / "unit" / "titles" / "expected_titles.json").read_text(encoding="utf-8")
)

HANG = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)"
"""A worker that writes its pid to the file named by its argument, then never answers."""


def python(code: str, *args: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code, *args)


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_worker_gives_the_titles_yake_gives_in_this_process() -> None:
    worker = KeywordWorker()
    try:
        titles = [await worker.title(case["prompt"]) for case in TABLE]
    finally:
        await worker.close()
    assert titles == [keyword_title(case["prompt"]) for case in TABLE]
    assert titles == [case["title"] for case in TABLE]


async def test_one_worker_serves_the_titles_that_follow_and_stops_when_idle() -> None:
    worker = KeywordWorker(idle=0.5)
    await worker.title("Fix the WAL checkpoint race")
    first = worker.pid
    assert first is not None
    await worker.title("Speed up the picker's title filter")
    assert worker.pid == first, "YAKE is imported once, not per title"
    await asyncio.sleep(1.5)
    assert worker.pid is None and not is_running(first)
    assert await worker.title("hello") == "hello"
    assert worker.pid not in (None, first)
    await worker.close()


async def test_a_crashing_worker_says_how_it_ended() -> None:
    worker = KeywordWorker(command=python("import sys; sys.exit('yake is broken here')"))
    with pytest.raises(TitleWorkerError, match="exited with status 1: yake is broken here"):
        await worker.title("Fix the WAL checkpoint race")


async def test_a_worker_answering_nonsense_is_a_failure() -> None:
    worker = KeywordWorker(command=python("print('[1, 2]')"))
    with pytest.raises(TitleWorkerError, match=r"answered b'\[1, 2\]\\n', not a title"):
        await worker.title("Fix the WAL checkpoint race")


async def test_a_hanging_worker_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    worker = KeywordWorker(command=python(HANG, str(pid_file)), timeout=2)
    with pytest.raises(TitleWorkerError, match="no title within 2 s and was stopped"):
        await worker.title("Fix the WAL checkpoint race")
    assert not is_running(int(pid_file.read_text()))


async def test_a_failed_worker_leaves_the_excerpt_and_a_log_line(
    db_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    server.titles.keyword_worker = KeywordWorker(command=python("import os; os.abort()"))
    with caplog.at_level(logging.WARNING, logger="harnez.titles.policy"):
        session_id = await first_prompt(server, workspace)
        await server.wait_for_titles(20)
    assert await title_of(server, session_id) == (EXCERPT, "excerpt")
    [record] = [r for r in caplog.records if r.name == "harnez.titles.policy"]
    assert f"keyword title of session {session_id} failed" in record.getMessage()
    assert "exited with status -6" in record.getMessage()
    await server.close()


async def test_closing_the_server_stops_a_worker_still_naming(
    db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "worker.pid"
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    server.titles.keyword_worker = KeywordWorker(command=python(HANG, str(pid_file)))
    session_id = await first_prompt(server, workspace)

    async def started() -> bool:
        return pid_file.exists() and pid_file.read_text() != ""

    await wait_until(started, timeout=20)
    pid = int(pid_file.read_text())
    assert is_running(pid)
    await server.close()
    assert not is_running(pid)
    # cut short, the naming leaves the excerpt (test_title_cut_short.py), never a half-made title
    assert (await _title_after_reopen(db_path, session_id)) == (EXCERPT, "excerpt")


async def test_closing_the_server_stops_the_worker_kept_after_a_title(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    session_id = await first_prompt(server, workspace)
    await server.wait_for_titles(20)
    assert await title_of(server, session_id) == ("WAL checkpoint races — group commit", "keywords")
    pid = server.titles.keyword_worker.pid
    assert pid is not None and is_running(pid)
    await server.close()
    assert not is_running(pid)


async def _title_after_reopen(db_path: Path, session_id: str) -> tuple[str | None, str | None]:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    try:
        return await title_of(server, session_id)
    finally:
        await server.close()
