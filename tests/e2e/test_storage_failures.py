"""A full disk or a lock held too long ends the run promptly and loudly; nothing vanishes silently."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.errors import StoreWriteError
from harnez.server import Server
from harnez.store import db as store_db
from harnez.store import events as store_events
from tests.agent.helpers import answer, make_settings
from tests.e2e.helpers import HeadlessWorkspace

SMALL_DISK = Path(__file__).with_name("small_disk.py")
_LETTERS = random.Random(2500)
LONG_ANSWER = " ".join("".join(_LETTERS.choices(string.ascii_lowercase, k=8)) for _ in range(2500))
"""Random words: stored deltas are compressed, and numbered words compressed into too few pages to
fill a disk that may grow by six."""


def _slow_answer(**turn: object) -> dict:
    return {"reply": [{"text": LONG_ANSWER}], "delay_per_chunk": 0.0005, **turn}


def _assert_clear_failure(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert any("could not save" in line and "disk is full" in line and "intact" in line for line in lines)
    assert "Traceback" not in result.stderr and "never retrieved" not in result.stderr


def test_a_full_disk_mid_task_ends_the_run_with_one_clear_message(headless: HeadlessWorkspace) -> None:
    headless.model.add(answer("first answer"), _slow_answer())
    assert headless.harnez("run", "--input", "hello").returncode == 0
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(SMALL_DISK), "6", "run", "--resume", "latest", "--input", "write a long answer"],
        cwd=headless.path,
        env=headless.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - began < 30
    _assert_clear_failure(result)
    with contextlib.closing(sqlite3.connect(headless.database)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    newest = json.loads(headless.harnez("sessions", "--json").stdout.splitlines()[0])["id"]
    shown = headless.harnez("sessions", "show", newest)  # the session stays openable
    assert shown.returncode == 0 and "first answer" in shown.stdout


@contextlib.contextmanager
def _tmpfs(folder: Path, size_kb: int) -> Iterator[None]:
    folder.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small tmpfs needs root (the injected full disk above covers the same path)")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.mark.parametrize("size_kb", [150, 260, 400])  # full while migrating, at the first prompt, mid-answer
def test_a_real_full_disk_ends_the_run_with_one_clear_message(
    headless: HeadlessWorkspace, tmp_path: Path, size_kb: int
) -> None:
    disk = tmp_path / "disk"
    with _tmpfs(disk, size_kb):
        headless.model.add(_slow_answer())
        env = {**headless.env, "HARNEZ_DATABASE_PATH": str(disk / "harnez.sqlite")}
        result = subprocess.run(
            [sys.executable, "-m", "harnez", "run", "--input", "write a long answer"],
            cwd=headless.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if "Migration" in result.stderr:  # could not even create the tables: nothing ran (exit 2)
            assert result.returncode == 2 and "disk is full" in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        else:
            _assert_clear_failure(result)


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0.2 s busy timeout and 2 s of retries, so lock tests take seconds."""
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(store_events, "BUSY_RETRY_FOR", 2.0)


def _hold_write_lock(path: Path, seconds: float, holding: threading.Event) -> threading.Thread:
    def hold() -> None:
        conn = sqlite3.connect(path, isolation_level=None, timeout=10)
        conn.execute("BEGIN IMMEDIATE")
        holding.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


async def _stream_with_lock(scripted_model, db_path: Path, workspace: Path, hold: float):  # type: ignore[no-untyped-def]
    scripted_model.add(answer("ready"), {"reply": [{"text": LONG_ANSWER}], "delay_per_chunk": 0.001})
    settings = make_settings(scripted_model)
    server = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    session = server.create_session(workspace).id
    await server.submit(session, "warm up")
    await server.wait(session)
    holding = threading.Event()
    await server.submit(session, "a long answer")
    await asyncio.sleep(0.3)
    locker = _hold_write_lock(db_path, hold, holding)
    return server, session, locker


async def test_a_batch_that_meets_a_held_lock_is_retried_and_nothing_is_lost(
    scripted_model, db_path: Path, workspace: Path, short_waits: None
) -> None:
    server, session, locker = await _stream_with_lock(scripted_model, db_path, workspace, hold=1.0)
    try:
        outcome = await server.wait(session)
        events = await server.events_after(session)
    finally:
        await server.close()
        locker.join()
    assert outcome is not None and outcome.stop == "completed"
    last_task = max(e.task for e in events if e.task is not None)
    text = "".join(e.body.text for e in events if e.kind == "text-delta" and e.task == last_task)
    assert text == LONG_ANSWER
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_a_lock_held_past_the_retries_fails_the_task_loudly(
    scripted_model, db_path: Path, workspace: Path, short_waits: None
) -> None:
    server, session, locker = await _stream_with_lock(scripted_model, db_path, workspace, hold=4.0)
    try:
        with pytest.raises(StoreWriteError, match="locked"):
            await server.wait(session)
        with pytest.raises(StoreWriteError):
            async for _ in server.subscribe(session):
                pass
    finally:
        await server.close()
        locker.join()
