"""Prompt completion: `/` commands and `@` workspace files in a menu above the prompt."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.screens.dialogs import HelpScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.completion import (
    Candidate,
    CompletionMenu,
    Token,
    command_candidates,
    file_candidates,
    scan_workspace,
    token_at,
)
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import GatedWork, answer_work, wait_for


def _files(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "main.py").write_text("print('main')\n")
    for ignored in (".git", "node_modules", "__pycache__", ".venv", ".harnez"):
        (workspace / ignored).mkdir()
        (workspace / ignored / "hidden.py").write_text("")


def _parts(app) -> tuple[PromptInput, CompletionMenu]:
    return app.screen.query_one(PromptInput), app.screen.query_one(CompletionMenu)


def test_the_word_at_the_cursor_decides_what_is_completed() -> None:
    assert token_at("/ses", 0, 4).kind == "command"
    assert token_at("/ses", 1, 4) is None  # a `/` on a later line is text
    assert token_at("see /tmp", 0, 8) is None  # only at the very start of the prompt
    file = token_at("look at @src/a please", 0, 14)
    assert (file.kind, file.start, file.end, file.query) == ("file", 8, 14, "src/a")
    assert token_at("mail me@host", 0, 12) is None


def test_commands_and_files_are_ranked_prefix_first() -> None:
    assert [c.value for c in command_candidates("s")] == ["/session-name", "/resume"]
    assert command_candidates("")[0].value == "/session-name"
    files = ["docs/app.md", "src/app.py", "apple.txt", "tests/test_a_p_p.py"]
    assert [c.value for c in file_candidates(files, "app")] == [
        "@apple.txt",
        "@src/app.py",
        "@docs/app.md",
        "@tests/test_a_p_p.py",
    ]


def test_the_scan_skips_ignored_folders_and_stops_at_its_limit(workspace: Path) -> None:
    _files(workspace)
    assert scan_workspace(workspace) == ["main.py", "src/app.py"]
    assert scan_workspace(workspace, limit=1) == ["main.py"]


def test_outside_git_the_scan_honours_the_workspace_gitignore(workspace: Path) -> None:
    _files(workspace)
    (workspace / ".gitignore").write_text("*.log\ngenerated/\n")
    (workspace / "debug.log").write_text("")
    (workspace / "generated").mkdir()
    (workspace / "generated" / "table.py").write_text("")
    assert scan_workspace(workspace) == [".gitignore", "main.py", "src/app.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_work_tree_the_scan_follows_gitignore(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.js").write_text("x")
    (workspace / "run.log").write_text("x")
    (workspace / "src").mkdir()
    (workspace / "src" / "new_module.py").write_text("x")  # untracked, not ignored
    (workspace / "tracked.py").write_text("x")
    subprocess.run(["git", "-C", str(workspace), "add", "tracked.py"], check=True)
    assert scan_workspace(workspace) == [".gitignore", "src/new_module.py", "tracked.py"]


async def test_slash_and_tab_complete_a_command_name(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        await pilot.press("/", "s", "e", "s")
        await wait_for(pilot, lambda: menu.is_open, "the menu opens")
        assert [c.value for c in menu.candidates] == ["/session-name"]
        await pilot.press("tab")
        assert prompt.text == "/session-name "
        await wait_for(pilot, lambda: not menu.is_open, "the menu closes")
        assert app.screen.focused is prompt


async def test_up_and_down_move_in_the_open_menu_and_enter_accepts(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        await pilot.press("/")
        await wait_for(pilot, lambda: menu.is_open, "the menu opens")
        await pilot.press("down", "down", "up")
        assert menu.chosen is not None and menu.chosen.value == "/new"
        await pilot.press("enter")
        assert prompt.text == "/new "
        assert await app.server.events_after(app.screen.session_id) == []


async def test_enter_on_a_complete_command_runs_it(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        _, menu = _parts(app)
        await pilot.press("/", "h", "e", "l", "p")
        await wait_for(pilot, lambda: menu.is_open, "the menu opens")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help opens")


async def test_at_lists_the_workspace_files_and_accepting_inserts_the_path(make_app, workspace: Path) -> None:
    _files(workspace)
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        await pilot.press("l", "o", "o", "k", "space", "@")
        await wait_for(pilot, lambda: menu.is_open, "the menu lists files")
        assert sorted(c.value for c in menu.candidates) == ["@main.py", "@src/app.py"]
        await pilot.press("a", "p")
        await wait_for(
            pilot,
            lambda: [c.value for c in menu.candidates] == ["@src/app.py", "@main.py"],
            "the list narrows: prefix of the name first, then fuzzy",
        )
        await pilot.press("tab")
        assert prompt.text == "look @src/app.py "
        await pilot.press("o", "k", "enter")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the prompt is sent")
        (sent, *_) = await app.server.events_after(app.screen.session_id)
        assert sent.body.text == "look @src/app.py ok"


async def test_a_path_with_spaces_is_completed_in_quotes(make_app, workspace: Path) -> None:
    (workspace / "My Notes").mkdir()
    (workspace / "My Notes" / "to do.md").write_text("buy milk")
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        await pilot.press("@", "m", "y")
        await wait_for(pilot, lambda: menu.is_open, "the menu lists the file")
        assert [c.value for c in menu.candidates] == ['@"My Notes/to do.md"']
        await pilot.press("tab")
        assert prompt.text == '@"My Notes/to do.md" '
        prompt.load_text('read @"My No')  # typed inside the quotes, space included
        prompt.move_cursor((0, len('read @"My No')))
        await wait_for(pilot, lambda: menu.is_open, "the quoted word is completed")
        await pilot.press("tab")
        assert prompt.text == 'read @"My Notes/to do.md" '


def test_a_quoted_path_being_typed_spans_its_spaces() -> None:
    assert token_at('see @"My No', 0, 11) == Token("file", 0, 4, 11, "My No")
    assert token_at('see @"My No" more', 0, 11) == Token("file", 0, 4, 12, "My No")
    assert token_at('see @"My Notes.md" mo', 0, 21) is None  # closed: the next word is no path
    assert file_candidates(["a b/c.md", "plain.md"], "")[0] == Candidate('@"a b/c.md"')


async def test_esc_closes_the_menu_without_cancelling_then_cancels(make_app) -> None:
    work = GatedWork()
    app = make_app(work=work)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        prompt.load_text("start")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.server.running(app.screen.session_id) is not None, "a task runs")
        await pilot.press("/", "h")
        await wait_for(pilot, lambda: menu.is_open, "the menu opens")
        await pilot.press("escape")
        assert not menu.is_open and prompt.text == "/h"
        await pilot.pause()
        assert app.server.running(app.screen.session_id) is not None
        await pilot.press("e")
        await wait_for(pilot, lambda: menu.is_open, "typing opens the menu again")
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        assert app.screen.query_one(TaskEndBlock).stop == "cancelled"


async def test_enter_with_the_menu_closed_sends(make_app, workspace: Path) -> None:
    _files(workspace)
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        await pilot.press("@", "m")
        await wait_for(pilot, lambda: menu.is_open, "the menu opens")
        await pilot.press("escape", "enter")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the prompt is sent")
        (sent, *_) = await app.server.events_after(app.screen.session_id)
        assert sent.body.text == "@m" and prompt.text == ""


async def test_a_history_entry_opens_no_menu_so_up_keeps_walking(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        prompt.remember("first")
        prompt.remember("/new")
        await pilot.press("up")
        assert prompt.text == "/new"
        await pilot.pause()
        assert not menu.is_open
        await pilot.press("up")
        assert prompt.text == "first"


def _app_at(db_path: Path, workspace: Path) -> HarnezApp:
    async def open_server() -> Server:
        return await Server.open(db_path, work=answer_work)

    return HarnezApp(open_server, workspace, None)


def test_snapshot_of_the_command_menu_above_the_prompt(snap_compare, db_path: Path, workspace: Path) -> None:
    app = _app_at(db_path, workspace)

    async def type_slash(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("/")
        await wait_for(pilot, lambda: app.screen.query_one(CompletionMenu).is_open, "the menu opens")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 20), run_before=type_slash)


def test_snapshot_of_the_file_menu(snap_compare, db_path: Path, workspace: Path) -> None:
    _files(workspace)
    app = _app_at(db_path, workspace)

    async def type_at(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("r", "e", "a", "d", "space", "@", "p", "y")
        await wait_for(pilot, lambda: len(app.screen.query_one(CompletionMenu).candidates) == 2, "two files")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 20), run_before=type_at)


async def test_enter_that_arrives_before_the_texts_change_runs_what_was_typed(make_app) -> None:
    """Keys sent in one write (a fast typist, a busy app) are handled before the text's change
    messages: Enter must not accept a completion of the word as it was a few keys ago."""
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt, menu = _parts(app)
        prompt.load_text("/e")
        prompt.move_cursor((0, 2))
        await wait_for(pilot, lambda: menu.is_open, "the menu lists commands with an e")
        prompt.insert("xit")  # its change message is still queued when Enter comes
        handled = prompt._menu_key("enter")
        assert not handled and prompt.text == "/exit"  # Enter goes on to send `/exit` as typed
