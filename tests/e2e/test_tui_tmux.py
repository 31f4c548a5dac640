"""The real `harnez` in a real terminal (tmux): prompt, approval, answer, SIGKILL mid-stream, --continue."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnez.store.payloads import loads
from harnez.store.tasks import pid_alive
from tests.agent.helpers import answer, tool_call
from tests.e2e.helpers import HARNEZ, SECRET, HeadlessWorkspace

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A private tmux server: start programs in sessions, type into them, read their screens."""

    def __init__(self, workspace: HeadlessWorkspace, config: Path) -> None:
        self.socket = f"harnez-e2e-{uuid.uuid4().hex[:8]}"
        self.workspace = workspace
        # Panes stay (dead) after their program exits, from the start: its exit status stays readable.
        config.write_text("set-option -g remain-on-exit on\n")
        self.config = config

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.config), *args],
            capture_output=True,
            text=True,
            timeout=20,
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def start(self, name: str, *argv: str, print_status: bool = False) -> None:
        """Run `harnez ARGV` in a new 120×40 session (kept on screen after it exits).

        With `print_status`, a shell runs it and prints `exit status N` afterwards (tmux's own
        `pane_dead_status` is sometimes empty when the pty closes before the process is collected).
        """
        env = [
            f"-e{key}={value}"
            for key, value in self.workspace.env.items()
            if key.startswith(("HARNEZ", "PATH", "HOME", "LANG", "LC_"))
        ]
        command = ["env", "-u", "COLUMNS", "-u", "LINES", str(HARNEZ), *argv]
        if print_status:
            command = ["sh", "-c", '"$@"; echo "exit status $?"', "sh", *command]
        self.tmux(
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(self.workspace.path),
            *env,
            *command,
        )

    def screen(self, name: str) -> str:
        """What the pane shows, with its scrollback (lines printed after the app left the screen)."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", name)

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", name, *keys)

    def type(self, name: str, text: str) -> None:
        self.tmux("send-keys", "-t", name, "-l", text)

    def pid(self, name: str) -> int:
        return int(self.tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())

    def exited(self, name: str, timeout: float = 15) -> str:
        """Wait until the pane's program has exited (tmux's `pane_dead`; its "Pane is dead" line is not
        part of what capture-pane reads); what the pane shows then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.tmux("display-message", "-p", "-t", name, "#{pane_dead}").strip() == "1":
                return self.screen(name)
            time.sleep(0.1)
        raise AssertionError(f"The program never exited. The screen was:\n{self.screen(name)}")

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
def terminal(headless: HeadlessWorkspace, tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(headless, tmp_path / "tmux.conf")
    yield term
    term.close()


def test_prompt_approve_answer_kill_mid_stream_and_continue(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    model = headless.model
    model.add(
        tool_call("shell", "call_1", command="echo tmux-ok > out.txt"),
        answer("Wrote out.txt for you."),
        {
            "reply": [{"text": "STREAMED-PART-ONE and the rest never arrives"}],
            "hold": "never",
            "hold_after_chunks": 2,
            "usage": {"input": 10, "output": 5},
        },
    )

    terminal.start("first")
    terminal.wait("first", lambda s: "mode: ask" in s, "the session screen")
    terminal.type("first", "Create out.txt please")
    terminal.keys("first", "Enter")
    terminal.wait(
        "first", lambda s: "echo tmux-ok > out.txt" in s and "allow" in s.lower(), "the approval prompt"
    )
    time.sleep(0.6)  # the prompt ignores allow keys for its first 0.4 s (a typing-ahead guard)
    terminal.keys("first", "y")
    terminal.wait("first", lambda s: "Wrote out.txt for you." in s, "the answer")
    assert (headless.path / "out.txt").read_text().strip() == "tmux-ok"

    terminal.type("first", "Now stream something long")
    terminal.keys("first", "Enter")
    terminal.wait("first", lambda s: "STREAMED-PART-ONE" in s, "the streamed start of the answer")
    killed = terminal.pid("first")
    os.kill(killed, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(killed) and time.monotonic() < deadline:  # the signal is delivered asynchronously
        time.sleep(0.05)

    terminal.start("second", "--continue")
    shown = terminal.wait(
        "second",
        lambda s: "Interrupted" in s and "STREAMED-PART-ONE" in s,
        "the conversation with the interrupted task",
    )
    assert "Wrote out.txt for you." in shown or "Create out.txt please" in shown
    terminal.keys("second", "C-q")
    left = terminal.exited("second")
    assert "mode: ask" not in left  # the full screen gave the terminal back (the resume line may stay)

    with sqlite3.connect(headless.database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        states = [row[0] for row in db.execute("SELECT state FROM tasks ORDER BY id")]
        rows = db.execute("SELECT kind, payload FROM events").fetchall()
    everything = "".join(
        f"{kind} {json.dumps(loads(payload), ensure_ascii=False)}" for kind, payload in rows
    ).encode()
    assert states == ["completed", "interrupted"]
    assert SECRET.encode() not in everything


def test_a_prompt_typed_as_harnez_starts_is_kept_and_sent(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    headless.model.add(answer("Typed before the screen was there, and answered."))
    terminal.start("early")
    terminal.type("early", "typed at once")  # while Python still imports: before any frame
    terminal.keys("early", "Enter")
    shown = terminal.wait("early", lambda s: "answered." in s, "the answer to the early prompt")
    assert "typed at once" in shown
    terminal.keys("early", "C-q")


def test_an_unknown_session_id_or_bad_settings_exit_2_with_one_line(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    terminal.start("unknown", "--resume", "feedface", print_status=True)
    shown = terminal.wait("unknown", lambda s: "exit status" in s, "the exit")
    (line,) = [row for row in shown.splitlines() if row.startswith("harnez: ")]
    assert "No session" in line and "feedface" in line
    assert "exit status 2" in shown

    (headless.path / ".harnez" / "settings.json").write_text('{"retry": {"max_attempts": "many"}}')
    terminal.start("settings", print_status=True)
    shown = terminal.wait("settings", lambda s: "exit status" in s, "the exit")
    (line,) = [row for row in shown.splitlines() if row.startswith("harnez: ")]
    assert "settings.json" in line and "retry.max_attempts" in line
    assert "exit status 2" in shown


HELD = {
    "reply": [{"text": "STREAMED-PART-ONE and the rest never arrives"}],
    "hold": "never",
    "hold_after_chunks": 2,
    "usage": {"input": 10, "output": 5},
}


def _streaming(terminal: Terminal, name: str, print_status: bool = False) -> int:
    """Start harnez in `name`, send a prompt whose answer stops after its first words; its pid."""
    terminal.start(name, print_status=print_status)
    terminal.wait(name, lambda s: "mode: ask" in s, "the session screen")
    terminal.type(name, "Stream something long")
    terminal.keys(name, "Enter")
    terminal.wait(name, lambda s: "STREAMED-PART-ONE" in s, "the streamed start of the answer")
    if not print_status:
        return terminal.pid(name)
    shell = terminal.pid(name)
    children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
    return int(children[0])


def _closed_cleanly(database: Path, pid: int) -> list[str]:
    """Wait for the process to end; the tasks' states, once no -wal or -shm file is left."""
    deadline = time.monotonic() + 20
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid), "harnez did not end after the signal"
    assert not database.with_name(database.name + "-wal").exists()  # closed, not killed
    with sqlite3.connect(database) as db:
        text = "".join(json.dumps(loads(payload)) for (payload,) in db.execute("SELECT payload FROM events"))
        assert "STREAMED-PART-ONE" in text  # the words streamed before the signal are kept
        return [row[0] for row in db.execute("SELECT state FROM tasks ORDER BY id")]


def test_a_closed_terminal_cancels_the_task_commits_and_closes_the_database(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    headless.model.add(HELD)
    pid = _streaming(terminal, "closing")
    terminal.tmux("kill-session", "-t", "closing")  # the terminal goes away: SIGHUP
    assert _closed_cleanly(headless.database, pid) == ["cancelled"]


def test_sigterm_closes_like_ctrl_q_and_exits_143_with_the_terminal_restored(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    headless.model.add(HELD)
    pid = _streaming(terminal, "term", print_status=True)
    os.kill(pid, signal.SIGTERM)
    assert _closed_cleanly(headless.database, pid) == ["cancelled"]
    shown = terminal.wait("term", lambda s: "exit status" in s, "the exit")
    assert "exit status 143" in shown and "STREAMED-PART-ONE" not in shown  # left the app's screen
