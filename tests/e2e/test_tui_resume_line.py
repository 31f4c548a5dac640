"""After the full-screen app quits, one line on the restored terminal says how to open the session
again (`harnez --resume <id8>`), as Claude Code and Codex print theirs; a session never stored
(no prompt sent) gets none."""

from __future__ import annotations

import os
import sqlite3
import time

from tests.e2e.helpers import HeadlessWorkspace, harnez_in_pty, pty_output

LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"


def _read(master: int, until: bytes | None, seconds: float = 30) -> bytes:
    """What the pty shows until `until` appears (or, with None, until the process closes it)."""
    seen = pty_output(master, until, seconds)
    if until is not None and until not in seen:
        raise AssertionError(f"never showed {until!r}: {seen[-400:]!r}")
    return seen


def _run_in_pty(headless: HeadlessWorkspace, prompt: str | None, *argv: str) -> bytes:
    """Start `harnez ARGV` in a pty, send `prompt` (if any) and wait for its answer, quit with Ctrl+Q;
    what the terminal showed after the app left the alternate screen."""
    process, master = harnez_in_pty(headless, *argv)
    try:
        _read(master, b"mode:")
        time.sleep(0.5)
        if prompt is not None:
            os.write(master, prompt.encode() + b"\r")
            _read(master, b"ANSWER-SHOWN")
        os.write(master, b"\x11")  # Ctrl+Q
        rest = _read(master, None)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    assert LEAVE_ALTERNATE_SCREEN in rest
    return rest.rsplit(LEAVE_ALTERNATE_SCREEN, 1)[1]


def test_quitting_a_stored_session_prints_how_to_resume_it(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "ANSWER-SHOWN"}]})
    after = _run_in_pty(headless, "Say something")
    with sqlite3.connect(headless.database) as db:
        (session_id,) = db.execute("SELECT id FROM sessions").fetchone()
    assert f"Resume this session with: harnez --resume {session_id[:8]}".encode() in after
    opened = headless.harnez("sessions", "show", session_id[:8])
    assert opened.returncode == 0, opened.stderr


def test_quitting_a_session_never_stored_prints_no_resume_line(headless: HeadlessWorkspace) -> None:
    after = _run_in_pty(headless, None)
    assert b"Resume this session" not in after


def test_a_session_kept_in_a_session_dir_is_resumed_with_it(headless: HeadlessWorkspace, tmp_path) -> None:
    # `--resume <id8>` alone looks in this project's database, not in the folder the session is kept in
    kept = tmp_path / "kept sessions"
    headless.model.add({"reply": [{"text": "ANSWER-SHOWN"}]})
    after = _run_in_pty(headless, "Say something", "--session-dir", str(kept))
    with sqlite3.connect(kept / "harnez.sqlite") as db:
        (session_id,) = db.execute("SELECT id FROM sessions").fetchone()
    line = f"Resume this session with: harnez --resume {session_id[:8]} --session-dir '{kept}'"
    assert line.encode() in after
    opened = headless.harnez("sessions", "show", session_id[:8], "--session-dir", str(kept))
    assert opened.returncode == 0, opened.stderr
