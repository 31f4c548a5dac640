"""The real `harnez` in a real terminal (tmux): prompt, approval, answer, SIGKILL mid-stream, --continue."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.agent.helpers import answer, tool_call
from tests.e2e.helpers import HARNEZ, SECRET, HeadlessWorkspace

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A private tmux server: start programs in sessions, type into them, read their screens."""

    def __init__(self, workspace: HeadlessWorkspace) -> None:
        self.socket = f"harnez-e2e-{uuid.uuid4().hex[:8]}"
        self.workspace = workspace

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20)
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def start(self, name: str, *argv: str) -> None:
        """Run `harnez ARGV` in a new 120×40 session (kept on screen after it exits)."""
        env = [f"-e{key}={value}" for key, value in self.workspace.env.items()
               if key.startswith(("HARNEZ", "PATH", "HOME", "LANG", "LC_"))]
        self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(self.workspace.path),
                  *env, "env", "-u", "COLUMNS", "-u", "LINES", str(HARNEZ), *argv)
        self.tmux("set-option", "-t", name, "remain-on-exit", "on")

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", name)

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", name, *keys)

    def type(self, name: str, text: str) -> None:
        self.tmux("send-keys", "-t", name, "-l", text)

    def pid(self, name: str) -> int:
        return int(self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())

    def wait(self, name: str, found: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """Poll the screen until `found(screen)` (a bound on waiting, not a timing assertion)."""
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.screen(name)
            if found(shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"Never showed {what}. The screen was:\n{shown}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20)


@pytest.fixture
def terminal(headless: HeadlessWorkspace) -> Iterator[Terminal]:
    term = Terminal(headless)
    yield term
    term.close()


def test_prompt_approve_answer_kill_mid_stream_and_continue(terminal: Terminal, headless: HeadlessWorkspace) -> None:
    model = headless.model
    model.add(tool_call("shell", "call_1", command="echo tmux-ok > out.txt"),
              answer("Wrote out.txt for you."),
              {"reply": [{"text": "STREAMED-PART-ONE and the rest never arrives"}], "hold": "never",
               "hold_after_chunks": 2, "usage": {"input": 10, "output": 5}})

    terminal.start("first")
    terminal.wait("first", lambda s: "mode: ask" in s, "the session screen")
    terminal.type("first", "Create out.txt please")
    terminal.keys("first", "Enter")
    terminal.wait("first", lambda s: "echo tmux-ok > out.txt" in s and "allow" in s.lower(), "the approval prompt")
    time.sleep(0.6)  # the prompt ignores allow keys for its first 0.4 s (a typing-ahead guard)
    terminal.keys("first", "y")
    terminal.wait("first", lambda s: "Wrote out.txt for you." in s, "the answer")
    assert (headless.path / "out.txt").read_text().strip() == "tmux-ok"

    terminal.type("first", "Now stream something long")
    terminal.keys("first", "Enter")
    terminal.wait("first", lambda s: "STREAMED-PART-ONE" in s, "the streamed start of the answer")
    os.kill(terminal.pid("first"), signal.SIGKILL)

    terminal.start("second", "--continue")
    shown = terminal.wait("second", lambda s: "Interrupted" in s and "STREAMED-PART-ONE" in s,
                          "the conversation with the interrupted task")
    assert "Wrote out.txt for you." in shown or "Create out.txt please" in shown
    terminal.keys("second", "C-q")
    terminal.wait("second", lambda s: "Pane is dead" in s or "harnez" not in s, "a clean exit", timeout=15)

    with sqlite3.connect(headless.database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        states = [row[0] for row in db.execute("SELECT state FROM tasks ORDER BY id")]
        everything = b"".join(bytes(str(row), "utf-8") for row in db.execute("SELECT * FROM events"))
    assert states == ["completed", "interrupted"]
    assert SECRET.encode() not in everything
