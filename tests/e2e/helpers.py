"""End-to-end helpers: the real `harnez` executable in a workspace wired to the scripted model."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel

SECRET = "sk-test-PLANTED-e2e-0123456789abcdef"
HARNEZ = Path(sys.executable).with_name("harnez")


@dataclass
class HeadlessWorkspace:
    """A workspace whose project settings point providers of every wire at the scripted model."""

    path: Path
    model: ScriptedModel
    env: dict[str, str]

    @property
    def database(self) -> Path:
        return self.path / ".harnez" / "harnez.sqlite"

    def harnez(
        self, *args: str, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run `harnez ARGS` here and wait for it."""
        return subprocess.run(
            [str(HARNEZ), *args],
            cwd=self.path,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start `harnez ARGS` here with pipes."""
        return subprocess.Popen(
            [str(HARNEZ), *args],
            cwd=self.path,
            env=self.env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )


def harnez_in_pty(headless: HeadlessWorkspace, *argv: str) -> tuple[subprocess.Popen[bytes], int]:
    """`harnez` (the full-screen app) in a 120×40 pty, in a new session without TIOCSCTTY: the pty is
    not its controlling terminal, so no SIGHUP comes when it closes. The process and the pty's master
    side (the caller closes it)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [str(HARNEZ), *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=headless.path,
        env={**headless.env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    return process, master


def pty_output(master: int, until: bytes | None, seconds: float = 30) -> bytes:
    """What the pty shows until `until` appears, every writer closes it, or `seconds` pass."""
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the pty
                chunk = b""
            if not chunk:
                break
            seen += chunk
            if until is not None and until in seen:
                break
    return seen


def json_lines(text: str) -> list[dict]:
    """Parse JSON Lines, one object per non-empty line (failing loudly on a bad line)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def finished(events: list[dict]) -> dict:
    """The task's `finished` event of a run's output (session notices such as a title may follow it)."""
    (end,) = [e for e in events if e["kind"] == "finished"]
    return end
