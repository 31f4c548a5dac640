"""Approval prompts in the TUI, over the real agent and a scripted model on loopback.

Each test drives the app with keys only and checks what the agent did: whether the tool ran, what
the stored `approval-resolved` says, and what the model was told.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.errors import NoWidget
from textual.geometry import Region
from textual.widgets._toast import Toast

from harnez.server.server import Server
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.commands import help_markdown
from harnez.tui.screens import approval
from harnez.tui.screens.approval import ApprovalScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, DiffView, TaskEndBlock, ToolBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.agent.helpers import answer, tool_call, tool_outputs
from tests.tui.helpers import AgentApp, ctrl_c_twice_quits, type_at_once, wait_for


def session_screen(app: HarnezApp) -> SessionScreen:
    return next(screen for screen in app.screen_stack if isinstance(screen, SessionScreen))


def prompt_shown(app: HarnezApp, call_id: str) -> bool:
    """The prompt for `call_id` is armed and drawn whole (a loaded machine can arm it before its parts mount)."""
    screen = app.screen
    return (
        isinstance(screen, ApprovalScreen)
        and screen.request.call_id == call_id
        and screen.armed
        and screen.is_mounted
        and all(widget.is_mounted for widget in screen.walk_children())
    )


def ends(app: HarnezApp) -> list[str]:
    return [block.stop for block in session_screen(app).query(TaskEndBlock)]


async def send(pilot, text: str) -> None:
    await wait_for(pilot, lambda: pilot.app.ready, "session screen")
    pilot.app.screen.query_one(PromptInput).load_text(text)
    await pilot.press("enter")


async def stored(app: HarnezApp, kind: str) -> list[dict[str, Any]]:
    screen = session_screen(app)
    return [e.body.to_payload() for e in await app.server.events_after(screen.session_id) if e.kind == kind]


def text_of(app: HarnezApp) -> str:
    return "\n".join(str(widget.render()) for widget in app.screen.query("Static"))


async def shell_call_prompted(pilot, app) -> None:
    """Send a prompt whose shell call `c1` the scripted model makes, and wait for its approval prompt."""
    await send(pilot, "make a file")
    await wait_for(pilot, lambda: prompt_shown(app, "c1"), "approval prompt")


async def resolution(pilot, app) -> tuple[str, str | None]:
    """The task's approval (verdict, reason), once the task completed."""
    await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
    (resolved,) = await stored(app, "approval-resolved")
    return resolved["verdict"], resolved["reason"]


async def test_allow_once_runs_the_shell_command_and_the_answer_follows(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Wrote out.txt."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        shown = text_of(app)
        assert "$ echo hi > out.txt" in shown and "Shell commands need approval in ask mode." in shown
        assert app.screen.focused is not None, "the prompt takes the keyboard at once"
        assert not (workspace / "out.txt").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "out.txt").read_text() == "hi\n"
        assert [b.text for b in session_screen(app).query(AssistantBlock) if b.display] == ["Wrote out.txt."]
        (resolved,) = await stored(app, "approval-resolved")
        assert (resolved["verdict"], resolved["by"], resolved["reason"]) == ("allow", "user", None)
        assert "Allowed once" in text_of(app)


async def test_enter_allows_once(agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.add(tool_call("write", "w1", path="note.txt", content="hello\n"), answer("Saved."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "write a note")
        await wait_for(pilot, lambda: prompt_shown(app, "w1"), "approval prompt")
        assert "+hello" in app.screen.query_one(DiffView).diff
        await pilot.press("enter")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "note.txt").read_text() == "hello\n"


async def test_keys_typed_as_the_prompt_opens_do_not_allow(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]  # the prompt's clock stands still until the test moves it: no race with a busy machine
    monkeypatch.setattr(approval, "monotonic", lambda: clock[0])
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Done."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "make a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "approval prompt opening")
        assert not app.screen.armed
        await pilot.press("enter", "a", "y")  # typed ahead, meant for the message box
        assert isinstance(app.screen, ApprovalScreen) and app.server.approvals.pending(
            session_screen(app).session_id
        )
        await pilot.press("n", "o", "x")  # "nox…": neither a denial's reason nor a stop of the task
        assert isinstance(app.screen, ApprovalScreen) and not app.screen.asking_reason
        assert app.server.running(session_screen(app).session_id) is not None
        clock[0] += approval.ARM_DELAY + 1
        await wait_for(pilot, lambda: prompt_shown(app, "c1"), "armed prompt")
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "out.txt").exists()


async def test_deny_with_a_reason_skips_the_tool_and_tells_the_model(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Understood."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("n")
        assert app.screen.query_one("#approval-why").has_focus
        await pilot.press(*"not now, ask me later")  # the letters go to the reason, not to y / a / n
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("enter")
        assert await resolution(pilot, app) == ("deny", "not now, ask me later")
        assert not (workspace / "out.txt").exists()
        told = tool_outputs(scripted_model.requests[-1].body)["c1"]
        assert "denied" in told and "not now, ask me later" in told


async def test_a_reason_typed_right_after_n_keeps_every_character(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """`n` moved the focus to the reason input later (`Widget.focus`, once the key had gone through the
    dialog and back to the screen): the letters typed meanwhile were lost. The reason starts with allow
    keys: once `n` is read they are letters of the reason, never an answer."""
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Understood."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        type_at_once(app, "n", *"yay, another nix", "enter")
        assert await resolution(pilot, app) == ("deny", "yay, another nix")
        assert not (workspace / "out.txt").exists()


async def test_esc_typed_right_after_n_goes_back_to_the_choices_at_once(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Esc in the reason moves the focus back at once too: the `y` typed after it allows the call
    (it went to the reason input left behind, and was cleared with it)."""
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Done."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("n")
        type_at_once(app, "escape", "y")
        assert await resolution(pilot, app) == ("allow", None)
        assert (workspace / "out.txt").read_text() == "hi\n"


async def test_esc_denies_without_a_reason_and_the_task_goes_on(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Fine, I will not."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("n", "escape")  # Esc while typing a reason goes back to the choices
        assert isinstance(app.screen, ApprovalScreen) and not app.screen.asking_reason
        await pilot.press("escape")
        assert await resolution(pilot, app) == ("deny", None)
        assert not (workspace / "out.txt").exists()


async def test_allow_for_the_session_covers_the_next_task(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        tool_call("write", "w1", path="a.txt", content="A\n"),
        answer("one"),
        tool_call("write", "w2", path="b.txt", content="B\n"),
        answer("two"),
    )
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "write a")
        await wait_for(pilot, lambda: prompt_shown(app, "w1"), "approval prompt")
        await pilot.press("a")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "first task end")
        await send(pilot, "write b")
        await wait_for(pilot, lambda: ends(app) == ["completed", "completed"], "second task end")
        assert (workspace / "a.txt").read_text() == "A\n" and (workspace / "b.txt").read_text() == "B\n"
        assert [p["call_id"] for p in await stored(app, "approval-required")] == ["w1"]
        (resolved,) = await stored(app, "approval-resolved")
        assert resolved["verdict"] == "allow-session"


async def test_calls_of_one_turn_are_asked_one_after_the_other(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        {
            "reply": [
                {"tool_call": {"name": "shell", "id": "c1", "arguments": {"command": "echo one > one.txt"}}},
                {"tool_call": {"name": "shell", "id": "c2", "arguments": {"command": "echo two > two.txt"}}},
            ]
        },
        answer("Half done."),
    )
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "two files")
        await wait_for(pilot, lambda: prompt_shown(app, "c1"), "first prompt")
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt_shown(app, "c2"), "second prompt")
        await pilot.press("n", "enter")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
        verdicts = [(p["call_id"], p["verdict"]) for p in await stored(app, "approval-resolved")]
        assert verdicts == [("c1", "allow"), ("c2", "deny")]


async def test_x_stops_the_task_from_the_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("never sent"))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("x")
        await wait_for(pilot, lambda: ends(app) == ["cancelled"], "task cancelled")
        assert isinstance(app.screen, SessionScreen)
        assert not (workspace / "out.txt").exists()
        assert app.server.approvals.pending(app.screen.session_id) == []
        assert await stored(app, "approval-resolved") == []


async def test_a_call_stopped_while_it_waits_no_longer_says_it_waits(
    agent_app: AgentApp, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("never sent"))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("x")
        await wait_for(pilot, lambda: ends(app) == ["cancelled"], "task cancelled")
        (block,) = app.screen.query(ToolBlock)
        states = [str(s.render()) for s in block.query(".tool-state")]
        assert states[-1] == "No result: the task was cancelled."
        first = app.screen
        await app.open_session(first.session_id)  # drawn again from the stored events: the same
        await wait_for(pilot, lambda: app.screen is not first and app.screen.query(TaskEndBlock), "reopened")
        (block,) = app.screen.query(ToolBlock)
        assert str(block.query(".tool-state").last().render()) == "No result: the task was cancelled."


def fully_shown(app: HarnezApp, selector: str) -> bool:
    """Whether the widget is drawn whole on the screen, not clipped by its dialog or the terminal."""
    widget = app.screen.query_one(selector)
    geometry = app.screen.find_widget(widget)
    return bool(geometry.region) and geometry.clip.contains_region(geometry.region)


async def test_a_long_diff_leaves_the_keys_and_the_reason_input_in_view_on_a_small_terminal(
    agent_app: AgentApp, scripted_model: ScriptedModel
) -> None:
    content = "".join(f"line {n} of a long new file\n" for n in range(60))
    scripted_model.add(tool_call("write", "w1", path="long.txt", content=content), answer("done"))
    app = agent_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "write a long file")
        await wait_for(pilot, lambda: prompt_shown(app, "w1"), "approval prompt")
        await pilot.pause()
        assert fully_shown(app, "#approval-keys")
        await pilot.press("end")  # the body scrolls within what is left: its end shows above the keys
        await pilot.pause()
        body, keys = app.screen.query_one("#approval-body"), app.screen.query_one("#approval-keys")
        assert body.region.bottom <= keys.region.y
        await pilot.press("n")
        await pilot.pause()
        why = app.screen.query_one("#approval-why")
        assert fully_shown(app, "#approval-why") and fully_shown(app, "#approval-keys")
        app.screen.query_one("#approval-dialog").scroll_end(animate=False)  # the mouse wheel's way
        await pilot.pause()
        assert body.region.bottom <= why.region.y
        await pilot.press(*"too long", "enter")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task ends")


def _toasts_in_view(app: HarnezApp) -> list[Region]:
    """Where the current screen's toasts are drawn (hidden ones and those not laid out left out)."""
    regions = []
    for toast in app.screen.query(Toast):
        try:
            geometry = app.screen.find_widget(toast)
        except NoWidget:
            continue
        if (region := geometry.region.intersection(geometry.clip)).area:
            regions.append(region)
    return regions


@pytest.mark.parametrize("size", [(60, 20), (120, 40)])
async def test_notices_never_cover_the_approval_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, size: tuple[int, int]
) -> None:
    """At 60x20 a start-up notice ('.harnez made private') covered the top of the prompt, its title and
    command: toasts go above the dialog when there is room for them there (a large terminal) and wait
    for the prompt to close otherwise, still listed by Ctrl+N."""
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Wrote out.txt."))
    app = agent_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.notify("Made .harnez private (mode 700): sessions keep what you type.", timeout=30)
        await shell_call_prompted(pilot, app)
        for _ in range(5):  # every frame of the prompt's first moments, not only the settled one
            dialog = app.screen.query_one("#approval-dialog").region
            assert not any(region.overlaps(dialog) for region in _toasts_in_view(app))
            await pilot.pause(0.05)
        if size == (120, 40):
            assert _toasts_in_view(app), "a large terminal shows the notice above the prompt"
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        await wait_for(pilot, lambda: _toasts_in_view(app), "the notice on the session screen")


async def test_a_task_cancelled_elsewhere_closes_the_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("never sent"))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await app.server.cancel(session_screen(app).session_id)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "prompt withdrawn")
        await wait_for(pilot, lambda: ends(app) == ["cancelled"], "task cancelled")
        assert not (workspace / "out.txt").exists()


async def test_an_answer_given_elsewhere_closes_the_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("done"))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        app.server.answer_approval(session_screen(app).session_id, "c1", "allow")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "prompt withdrawn")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "out.txt").read_text() == "hi\n"


async def test_read_only_mode_denies_a_write_by_rule_without_a_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("write", "w1", path="a.txt", content="A\n"), answer("I cannot write."))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        await pilot.press("shift+tab", "shift+tab")
        assert app.permission_mode == "read-only"
        await send(pilot, "write a")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert not (workspace / "a.txt").exists()
        assert await stored(app, "approval-required") == []
        assert "read-only mode" in tool_outputs(scripted_model.requests[-1].body)["w1"]


async def test_accept_edits_runs_a_write_at_once_but_the_shell_still_asks(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        tool_call("write", "w1", path="a.txt", content="A\n"),
        tool_call("shell", "c1", command="echo hi > out.txt"),
        answer("Both done."),
    )
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        await pilot.press("shift+tab")
        assert app.permission_mode == "accept-edits"
        await send(pilot, "write, then run")
        await wait_for(pilot, lambda: prompt_shown(app, "c1"), "shell prompt")
        assert (workspace / "a.txt").read_text() == "A\n"
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "out.txt").read_text() == "hi\n"
        assert [p["call_id"] for p in await stored(app, "approval-required")] == ["c1"]


async def test_a_session_opened_while_a_call_waits_shows_its_prompt(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Resumed and done."))

    async def ask_before_the_app_opens(server: Server) -> None:
        session_id = server.create_session(workspace).id
        await server.submit(session_id, "make a file")
        async for event in server.subscribe(session_id):
            if event.kind == "approval-required":
                return

    app = agent_app(ask_before_the_app_opens, continue_latest=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: prompt_shown(app, "c1"), "approval prompt on opening")
        await pilot.press("y")
        await wait_for(pilot, lambda: "completed" in ends(app), "task end")
        assert (workspace / "out.txt").read_text() == "hi\n"


async def test_reopening_a_session_after_its_calls_were_answered_asks_nothing(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("done"))
    app = agent_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await shell_call_prompted(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        session_id = app.screen.session_id
        await app.open_session(session_id)
        await wait_for(pilot, lambda: ends(app) == ["completed"] and app.screen.is_mounted, "reopened")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)


def test_help_lists_the_approval_prompt_keys() -> None:
    text = help_markdown()
    assert "# Approval prompt" in text
    for key in ("| y, Enter |", "| a |", "| n |", "| Esc | Deny without a reason", "| x |"):
        assert key in text


async def test_ctrl_c_on_the_approval_prompt_says_a_second_one_quits_and_the_second_quits(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Ctrl+C on the prompt did nothing at all: no notice, no quit (Textual's copy binding, with
    nothing selected, left it to a Textual default that names a quit key only when one is bound)."""
    scripted_model.add(tool_call("shell", "c1", command="echo hi > out.txt"), answer("Done."))
    app = agent_app()
    async with app.run_test(size=(100, 40), notifications=True) as pilot:
        await shell_call_prompted(pilot, app)
        await ctrl_c_twice_quits(pilot, ApprovalScreen)
    assert not (workspace / "out.txt").exists()
