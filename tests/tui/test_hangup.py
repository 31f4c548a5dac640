"""`SignalClose`: a terminal that no longer answers is a hang-up, a file on stdin is not, and only the
first signal closes (with 128 + its number)."""

from __future__ import annotations

import asyncio
import os
import pty
import signal
from pathlib import Path
from types import SimpleNamespace

from harnez.tui import hangup
from harnez.tui.hangup import SignalClose


def _closer() -> tuple[SignalClose, list[int], list[int], SimpleNamespace]:
    closed: list[int] = []
    ended: list[int] = []

    async def close(code: int) -> None:
        closed.append(code)

    driver = SimpleNamespace(fileno=None, write=print, flush=print)
    return SignalClose(close, lambda: driver, end=ended.append), closed, ended, driver


async def test_a_terminal_that_stopped_answering_is_a_hang_up_and_closes_once(monkeypatch) -> None:
    monkeypatch.setattr(hangup, "CLOSE_WITHIN", 0.05)
    closing, closed, ended, driver = _closer()
    master, slave = pty.openpty()
    try:
        driver.fileno = slave
        closing.check_terminal()
        assert closing.received is None  # an open terminal answers
        os.close(master)
        closing.check_terminal()
        closing.check_terminal()
        await asyncio.sleep(0.2)
    finally:
        os.close(slave)
    assert closing.received == signal.SIGHUP and closed == [129]
    assert driver.write is not print and driver.write("gone") is None  # nothing reaches the terminal
    assert ended == [129]  # the deadline was armed: a close that hangs cannot keep the process alive


async def test_stdin_from_a_file_is_no_hang_up(tmp_path: Path) -> None:
    closing, closed, _, driver = _closer()
    with (tmp_path / "input.txt").open("w") as file:
        driver.fileno = file.fileno()
        closing.check_terminal()
    await asyncio.sleep(0)
    assert closing.received is None and closed == []
