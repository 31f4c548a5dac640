"""`!command` lines in the TUI: run in the workspace, shown as a block, never sent to the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.content import Content
from textual.widgets import Collapsible, Static

from harnez.agent.work import AgentWork
from harnez.errors import HarnezError
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.widgets.blocks import LiveTail, RunningShell, ShellBlock, TaskEndBlock, ToolBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from harnez.tui.widgets.terminal import terminal_content
from tests.agent.helpers import answer, make_settings, tool_call
from tests.tui.helpers import wait_for
from tests.unit.test_text import ATTACKS

WAIT_FOR_GO = "for i in $(seq 600); do [ -e go ] && break; sleep 0.05; done"
"""Shell that waits (up to 30 s) until the test creates `go` in the workspace: the command is still
running while the test looks at its first line, however slow the machine."""


async def _send(app, pilot, text: str) -> None:
    app.screen.query_one(PromptInput).load_text(text)
    await pilot.press("enter")


async def test_a_shell_line_shows_its_output_and_the_model_never_sees_it(
    make_app, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(answer("Nothing to add."))
    app = make_app(work=AgentWork(make_settings(scripted_model)))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "!echo shell-hi-77 > seen.txt; cat seen.txt")
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        block = app.screen.query_one(ShellBlock)
        assert block.command == "echo shell-hi-77 > seen.txt; cat seen.txt"
        assert block.output == "shell-hi-77" and block.exit_code == 0
        assert "shell-hi-77" in str(block.query(Static)[-1].render())
        assert (workspace / "seen.txt").exists()
        assert scripted_model.requests == []
        await _send(app, pilot, "what next?")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
    (request,) = scripted_model.requests
    body = json.dumps(request.body)
    assert "what next?" in body and "shell-hi-77" not in body


async def test_two_bangs_share_the_output_with_the_model(make_app, scripted_model: ScriptedModel) -> None:
    scripted_model.add(answer("I see it."))
    app = make_app(work=AgentWork(make_settings(scripted_model)))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "!!echo shared-out-55")
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        assert app.screen.query_one(ShellBlock).command == "echo shared-out-55"
        await _send(app, pilot, "explain")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        prompt = app.screen.query_one(PromptInput)
        assert "!!echo shared-out-55" in prompt.prompt_history
    (request,) = scripted_model.requests
    assert "shared-out-55" in json.dumps(request.body)


async def test_a_failing_command_is_marked_and_long_output_starts_collapsed(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "!seq 1 30; exit 4")
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        block = app.screen.query_one(ShellBlock)
        assert block.exit_code == 4 and block.has_class("-error")
        assert "exit 4" in str(block.query(Static).first().render())
        (output,) = block.query(Collapsible)
        assert output.collapsed and output.title == "Output (30 lines)"


async def test_read_only_mode_refuses_a_shell_line_and_says_why(make_app, workspace: Path) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("shift+tab", "shift+tab")
        assert app.permission_mode == "read-only"
        await _send(app, pilot, "!touch made.txt")
        await wait_for(
            pilot,
            lambda: any(
                "Read-only mode runs no shell commands" in str(n.message) for n in app._notifications
            ),
            "the refusal",
        )
        assert not (workspace / "made.txt").exists()
        assert app.server.draft(app.screen.session_id) is not None


async def test_esc_stops_a_running_shell_line_and_keeps_its_output(make_app, workspace: Path) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "!echo begun; touch started; sleep 30")
        await wait_for(pilot, lambda: (workspace / "started").exists(), "the command starts")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.state == "command running", "the status line saying so")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        block = app.screen.query_one(ShellBlock)
        assert block.output == "begun" and "cancelled" in str(block.query(Static).first().render())
        await wait_for(pilot, lambda: status.state == "idle", "the status line idle again")


async def test_a_reopened_session_shows_its_shell_lines(make_app, workspace: Path) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        first = app.screen
        session_id = first.session_id
        await app.server.run_shell(session_id, "echo stored-line")
        await app.open_session(session_id)
        await wait_for(
            pilot,
            lambda: app.screen is not first and app.screen.query(ShellBlock),
            "the stored shell block on the reopened screen",
        )
        assert app.screen.query_one(ShellBlock).output == "stored-line"


async def test_shell_lines_are_in_the_prompt_history_of_a_reopened_session(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        first = app.screen
        await app.server.run_shell(first.session_id, "echo from-history")
        await app.open_session(first.session_id)
        await wait_for(pilot, lambda: app.screen is not first and app.screen.query(ShellBlock), "reopened")
        await pilot.press("up")
        assert app.screen.query_one(PromptInput).text == "!echo from-history"


async def test_a_long_shell_line_shows_its_output_while_it_runs(
    make_app, scripted_model: ScriptedModel, workspace: Path
) -> None:
    app = make_app(work=AgentWork(make_settings(scripted_model)))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, f"!echo first-out-31; {WAIT_FOR_GO}; echo second-out-32")
        await wait_for(
            pilot,
            lambda: any("first-out-31" in str(b.tail.render()) for b in app.screen.query(RunningShell)),
            "the first line, live",
        )
        assert not app.screen.query(ShellBlock)  # still running
        (workspace / "go").touch()
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        await wait_for(pilot, lambda: not app.screen.query(RunningShell), "the live block gone")
        assert app.screen.query_one(ShellBlock).output == "first-out-31\nsecond-out-32"


def _shell_call_app(make_app, scripted_model: ScriptedModel, command: str):
    """An app whose model runs `command` with the shell tool (allowed), then answers."""
    scripted_model.add(tool_call("shell", "c1", command=command), answer("Ran it."))
    settings = make_settings(scripted_model, permissions={"tools": {"shell": "allow"}})
    return make_app(work=AgentWork(settings, approve="allow"))


async def test_a_tool_calls_command_shows_its_output_while_it_runs(
    make_app, scripted_model: ScriptedModel, workspace: Path
) -> None:
    app = _shell_call_app(make_app, scripted_model, f"echo live-tool-41; {WAIT_FOR_GO}; echo live-tool-42")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "run the thing")

        def live() -> str:
            return " ".join(str(t.render()) for t in app.screen.query("ToolBlock LiveTail"))

        await wait_for(pilot, lambda: "live-tool-41" in live(), "the first line under the call")
        assert "live-tool-42" not in live()
        (workspace / "go").touch()
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        block = app.screen.query_one(ToolBlock)
        assert block.has_result and not block.query(LiveTail)  # the result took its place


def test_the_live_tail_shows_the_last_lines_without_terminal_codes() -> None:
    tail = LiveTail()
    tail.add("".join(f"line {n}\n" for n in range(20)))
    tail.add("\x1b[32mgreen\x1b[0m\ndownload 10%\rdownload 55%\rdownload 90%")
    shown = tail.view().plain.split("\n")
    assert shown == [*(f"line {n}" for n in range(14, 20)), "green", "download 90%"]


COLOURED = (
    r"printf '\033[31mred-word\033[0m plain\033[2J\033]0;retitled\007\033[Hstill\n';"
    f" {WAIT_FOR_GO}; printf 'step 1\\rstep 2\\r\\033[1;32mdone-word\\033[0m\\n'"
)
"""A command that colours its output, clears the screen, retitles the terminal and homes the cursor,
waits, then rewrites a progress line and colours its last state."""


def _coloured(content: Content, word: str) -> bool:
    """Whether `word` in the content is drawn in a colour of its own (not the block's)."""
    start = content.plain.index(word)
    return any(
        span.start <= start and span.end >= start + len(word) and getattr(span.style, "foreground", None)
        for span in content.spans
    )


async def test_a_shell_lines_colours_show_live_and_at_its_end_and_its_other_codes_never(
    make_app, workspace: Path
) -> None:
    """The live view and the final block show the same text, coloured as in a terminal: the final
    block used to show every escape (`\\x1b[31m`), while the live view dropped them."""
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "!" + COLOURED)
        await wait_for(pilot, lambda: app.screen.query(RunningShell), "the command running")
        tail = app.screen.query_one(RunningShell).tail
        await wait_for(pilot, lambda: "still" in str(tail.render()), "the first line, live")
        live = tail.visual
        assert isinstance(live, Content)
        (workspace / "go").touch()
        await wait_for(pilot, lambda: app.screen.query(ShellBlock), "the shell block")
        block = app.screen.query_one(ShellBlock)
        final = block.query(Static)[-1].visual
        assert isinstance(final, Content)
        assert final.plain == "red-word plainstill\ndone-word"
        assert final.plain.startswith(live.plain)
        for content in (live, final):
            assert "\x1b" not in content.plain and "[31m" not in content.plain
            assert "retitled" not in content.plain and "[2J" not in content.plain
            assert _coloured(content, "red-word") and not _coloured(content, "plain")
        assert _coloured(final, "done-word")
        (stored,) = [
            e for e in await app.server.events_after(app.screen.session_id, 0) if e.kind == "shell-line"
        ]
        assert stored.body.output.startswith("\x1b[31mred-word\x1b[0m plain\x1b[2J")  # kept as written


@pytest.mark.parametrize("attack", [name for name in ATTACKS if "\r" not in ATTACKS[name]])
def test_a_commands_output_never_holds_a_character_a_terminal_acts_on(attack: str) -> None:
    """(A carriage return rewrites its line, as in a terminal: the live tail test shows it.)"""
    shown = terminal_content(f"\x1b[32mbefore\x1b[0m {ATTACKS[attack]} after").plain
    assert all(ch.isprintable() or ch in "\n\t" for ch in shown), repr(shown)
    assert shown.startswith("before ") and shown.endswith(" after")


async def test_a_tool_calls_coloured_output_shows_its_colours_not_its_codes(
    make_app, scripted_model: ScriptedModel
) -> None:
    app = _shell_call_app(make_app, scripted_model, r"printf '\033[33mwarn-word\033[0m then \033[2Jplain\n'")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await _send(app, pilot, "run the thing")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        result = app.screen.query_one(ToolBlock).query(Static)[-1].visual
        assert isinstance(result, Content) and result.plain.startswith("warn-word then plain\n")
        assert _coloured(result, "warn-word") and not _coloured(result, "plain")
    assert "\\u001b[33mwarn-word" in json.dumps(scripted_model.requests[-1].body)  # the model reads it as is


async def test_a_part_added_while_a_tool_block_mounts_is_shown() -> None:
    """Between its `compose` and the end of its mount a block is not `is_mounted`: a state, a result
    or a command's first lines added then must still show (they were kept but never mounted)."""
    from textual.app import App, ComposeResult

    class Probe(ToolBlock):
        def on_mount(self) -> None:  # composed, not yet `is_mounted`
            self.show_state("said while mounting")
            self.show_live("first line\n")

    class Ended(ToolBlock):
        def on_mount(self) -> None:
            self.show_live("partial\n")
            self.show_result("done", {}, False)  # the command ended before the block's mount did

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Probe("c1", "shell", {"command": "ls"})
            yield Ended("c2", "shell", {"command": "true"})

    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert [str(w.render()) for w in app.query("ToolBlock .tool-state")] == ["said while mounting"]
        assert [t.view().plain for t in app.query(LiveTail)] == ["first line"]  # none left under c2


async def test_leaving_a_session_while_its_command_runs_is_refused_whichever_way(
    make_app, db_path: Path, workspace: Path
) -> None:
    """/new while a `!command` ran (on a screen that is not the first one shown) stopped the command
    and the app crashed: the command's worker, cancelled with its screen, updated the status line of
    a screen no longer there (NoMatches). /new and /resume now wait for it like for a task; a session
    opened another way (a delegate panel, /parent, the picker's Enter: all `open_session`) stopped the
    command unsaid: it waits for it too, the command runs on, and its line is stored once it ends."""
    from tests.tui.helpers import seed_database

    (other,) = await seed_database(db_path, workspace, [("hello", None)])
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        first = app.screen
        await _send(app, pilot, "/new")
        await wait_for(pilot, lambda: app.screen is not first and app.ready, "a second session")
        await _send(app, pilot, f"!{WAIT_FOR_GO}")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.state == "command running", "the command runs")
        await _send(app, pilot, "/new")
        await wait_for(
            pilot, lambda: any("A command is running" in str(n.message) for n in app._notifications)
        )
        assert app.screen.query_one(PromptInput).text == "/new"

        shown = app.screen
        with pytest.raises(HarnezError, match="A command is running: Esc stops it"):
            await app.open_session(other)  # the picker's Enter
        await shown._open_linked(other)  # a delegate panel's click, /parent
        await pilot.pause(0.3)
        assert app.screen is shown and status.state == "command running"
        notices = [str(n.message) for n in app._notifications]
        assert sum("A command is running" in notice for notice in notices) == 2, notices
        (workspace / "go").touch()
        await wait_for(pilot, lambda: status.state == "idle", "the command ends")
        lines = [e for e in await app.server.events_after(shown.session_id) if e.kind == "shell-line"]
        assert len(lines) == 1 and lines[0].body.to_payload()["exit_code"] == 0
        await app.open_session(other)
        await wait_for(pilot, lambda: getattr(app.screen, "session_id", None) == other, "the other one")
        await pilot.pause(0.3)
        assert app.is_running and app.return_code is None
