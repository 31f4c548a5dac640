"""The real app in tmux: `--session-dir` with `--resume`, and `--resume` where there is no database."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import HeadlessWorkspace
from tests.e2e.test_tui_tmux import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def terminal(headless: HeadlessWorkspace, tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(headless, tmp_path / "tmux.conf")
    yield term
    term.close()


def test_the_picker_reads_the_session_dir_and_opens_its_session(
    terminal: Terminal, headless: HeadlessWorkspace, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    headless.model.add({"reply": [{"text": "Kept in the chosen store."}]})
    done = headless.harnez("run", "remember where you are kept", "--session-dir", str(store))
    assert done.returncode == 0, done.stderr
    terminal.start("picker", "--session-dir", str(store), "--resume", print_status=True)
    terminal.wait(
        "picker", lambda s: "remember where you are kept" in s.lower() or "Remember" in s, "the session row"
    )
    terminal.keys("picker", "Enter")
    terminal.wait("picker", lambda s: "Kept in the chosen store." in s, "the opened session")
    terminal.keys("picker", "C-q")
    # The shell says how it ended: tmux itself can miss a pane's end when the pty closes first.
    terminal.wait("picker", lambda s: "exit status 0" in s, "a clean exit", timeout=15)
    assert not headless.database.exists(), "the workspace's own database was never created"


def test_resume_where_there_is_no_database_offers_a_new_session_and_creates_nothing(
    terminal: Terminal, headless: HeadlessWorkspace
) -> None:
    terminal.start("empty", "--resume", print_status=True)
    shown = terminal.wait(
        "empty", lambda s: "No saved session in this workspace yet" in s, "the empty picker"
    )
    assert "Enter: start a new session" in shown
    terminal.keys("empty", "Escape")
    shown = terminal.wait("empty", lambda s: "exit status" in s, "the exit")
    assert "exit status 0" in shown
    assert not headless.database.exists()
