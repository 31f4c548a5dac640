"""A terminal that closes without a SIGHUP: Harnez, in a pty that is not its controlling terminal,
notices within seconds and closes as on Ctrl+Q (it read end-of-file in a loop, forever, before)."""

from __future__ import annotations

import os
import select
import sqlite3
import time

from harnez.store.tasks import pid_alive
from tests.e2e.helpers import HeadlessWorkspace, harnez_in_pty


def _read_until(master: int, text: bytes, seconds: float = 30) -> None:
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            seen += os.read(master, 65536)
            if text in seen:
                return
    raise AssertionError(f"never showed {text!r}")


def test_a_pty_closed_without_a_hang_up_signal_ends_harnez_cleanly(headless: HeadlessWorkspace) -> None:
    headless.model.add(
        {
            "reply": [{"text": "STREAMED-PART-ONE and the rest never arrives"}],
            "hold": "never",
            "hold_after_chunks": 2,
        }
    )
    # A new session and no TIOCSCTTY: the pty is not its controlling terminal, so no SIGHUP comes.
    process, master = harnez_in_pty(headless)
    try:
        _read_until(master, b"mode:")
        time.sleep(0.5)
        os.write(master, b"Stream something long\r")
        _read_until(master, b"STREAMED-PART-ONE")
        os.close(master)
        deadline = time.monotonic() + 20
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() == 129, "harnez did not end once its terminal was gone"
    finally:
        if process.poll() is None:
            process.kill()
    assert not pid_alive(process.pid)
    assert not headless.database.with_name("harnez.sqlite-wal").exists()
    with sqlite3.connect(headless.database) as db:
        assert [row[0] for row in db.execute("SELECT state FROM tasks")] == ["cancelled"]
    headless.model.release("never")
