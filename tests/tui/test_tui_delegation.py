"""A delegation in the TUI, over the real agent and a scripted model: the delegate call's block shows the
sub-agent and opens its child session; the child's approvals are asked on the parent's screen; the
child's session names its parent, which /parent opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.notices import short_text
from harnez.tui.screens.approval import ApprovalScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, ToolBlock
from harnez.tui.widgets.delegation import DelegationPanel
from harnez.tui.widgets.origin import OriginLine
from tests.agent.agents_support import delegate, only_child, reviewer
from tests.agent.helpers import answer, tool_call
from tests.tui.helpers import AgentApp, wait_for
from tests.tui.test_tui_approvals import (
    ends,
    prompt_shown,
    send,
    session_screen,
    text_of,
)
from tests.tui.test_tui_import_links import shown, type_command


def panels(app) -> list[DelegationPanel]:
    return list(session_screen(app).query(DelegationPanel))


async def test_the_delegate_block_shows_the_sub_agent_and_its_button_opens_the_child(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    reviewer(workspace)
    scripted_model.add(
        delegate("d1", "reviewer", "Review a.py"),
        answer("a.py looks fine."),
        answer("The reviewer says a.py looks fine."),
    )
    app = agent_app()
    async with app.run_test(size=(110, 40)) as pilot:
        await send(pilot, "review the code")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        parent = session_screen(app).session_id
        child = await only_child(app.server, parent)
        (panel,) = panels(app)
        assert (panel.agent, panel.child, panel.stop) == ("reviewer", child, "completed")
        (block,) = [b for b in session_screen(app).query(ToolBlock) if b.tool_name == "delegate"]
        assert panel.parent is block
        shown = text_of(app)
        assert f"↳ sub-agent reviewer in session {child[:12]}" in shown and "tools: read, grep" in shown
        assert "✓ completed after 1 turn · 120 in / 20 out tokens" in shown
        await pilot.click(panel.query_one("Button"))
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == child,
            "the child session on screen",
        )
        await wait_for(
            pilot,
            lambda: [b.text for b in app.screen.query(AssistantBlock) if b.display] == ["a.py looks fine."],
            "answer",
        )


async def test_a_childs_approval_is_asked_on_the_parents_screen(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    reviewer(workspace, tools="shell")
    scripted_model.add(
        delegate("d1", "reviewer", "Make the file"),
        tool_call("shell", "s1", command="echo hi > out.txt"),
        answer("Made out.txt."),
        answer("The reviewer made out.txt."),
    )
    app = agent_app()
    async with app.run_test(size=(110, 40)) as pilot:
        await send(pilot, "make a file")
        await wait_for(pilot, lambda: prompt_shown(app, "d1/s1"), "the child's approval prompt")
        assert "Sub-agent reviewer: " in text_of(app) and not (workspace / "out.txt").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        assert (workspace / "out.txt").read_text() == "hi\n"
        assert panels(app)[0].stop == "completed"
        # The copy of the child's approval drew a block the parent's end marked 'No result: the task
        # ended (completed)' although the command had run (its result is in the child's session).
        shown = text_of(app)
        assert "Allowed once" in shown and "No result" not in shown


async def test_a_sub_agents_session_names_its_parent_and_parent_opens_it(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Imported sub-agent sessions said whose they were; Harnez's own sub-agents' sessions said nothing,
    and /parent refused ("names no session it came from")."""
    reviewer(workspace)
    scripted_model.add(delegate("d1", "reviewer", "Review a.py"), answer("Fine."), answer("It is fine."))
    app = agent_app()
    async with app.run_test(size=(140, 30)) as pilot:
        await send(pilot, "review the code")
        await wait_for(pilot, lambda: ends(app) == ["completed"], "task end")
        parent = session_screen(app).session_id
        await app.server.rename(parent, "Code review")
        assert await shown(pilot, app, parent) == ""  # the parent came from nowhere
        child = await only_child(app.server, parent)
        await app.open_session(child)
        line = await shown(pilot, app, child)
        assert line == f"Sub-agent reviewer of «Code review» ({parent[:8]}) · /parent opens it"
        await type_command(pilot, "/parent")
        assert await shown(pilot, app, parent) == ""
        await app.open_session(child)
        await shown(pilot, app, child)
        await pilot.click(OriginLine)
        await shown(pilot, app, parent)


async def child_opened_from_the_panel(pilot, prompt: str, first_screen: bool) -> SessionScreen:
    """Send `prompt` (whose task delegates), then open the child session from the delegate call's
    panel; the parent's screen. Unless `first_screen`, the parent is a second session (`/new`), whose
    screen the child's replaces (the first one stays beneath)."""
    app = pilot.app
    if not first_screen:
        first = session_screen(app)
        await send(pilot, "/new")
        await wait_for(pilot, lambda: app.screen is not first and app.ready, "a second session")
    await send(pilot, prompt)
    await wait_for(pilot, lambda: app.screen.query(DelegationPanel), "the delegate call's panel")
    parent = app.screen
    await pilot.click(parent.query_one(DelegationPanel).query_one("Button"))
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen is not parent)
    return parent


@pytest.mark.parametrize("first_screen", [False, True])
async def test_a_childs_approval_is_asked_once_on_its_own_screen_opened_from_the_panel(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path, first_screen: bool
) -> None:
    """The child's session opened from the parent's panel while the child worked: its call said
    'Waiting for approval' and no prompt came, as it waits under the parent's session, whose screen
    the child's had replaced (a parent that is not the first screen shown). Once, and only once, when
    the parent's screen stays beneath (the first one shown)."""
    reviewer(workspace, tools="shell")
    held = tool_call("shell", "s1", command="echo hi > out.txt") | {"hold": "gate"}
    scripted_model.add(
        delegate("d1", "reviewer", "Make the file"),
        held,
        answer("Made out.txt."),
        answer("The reviewer made out.txt."),
    )
    app = agent_app()
    async with app.run_test(size=(110, 40)) as pilot:
        await child_opened_from_the_panel(pilot, "make a file", first_screen)
        child = app.screen
        scripted_model.release("gate")
        await wait_for(pilot, lambda: prompt_shown(app, "s1") or prompt_shown(app, "d1/s1"), "a prompt")
        await pilot.pause(0.2)
        assert sum(isinstance(screen, ApprovalScreen) for screen in app.screen_stack) == 1
        await pilot.press("y")
        await wait_for(pilot, lambda: (workspace / "out.txt").exists(), "the command ran")
        assert app.screen is child


def script_review_then_mark(scripted_model: ScriptedModel, workspace: Path) -> None:
    """The reviewer answers once the test releases `gate`; then the parent's shell call `c1` asks."""
    reviewer(workspace)
    scripted_model.add(
        delegate("d1", "reviewer", "Review a.py"),
        answer("a.py looks fine.", hold="gate"),
        tool_call("shell", "c1", command="echo done > done.txt"),
        answer("Done."),
    )


def unasked_said(app) -> bool:
    """Whether a toast says a call waits for approval in a session no screen shows."""
    return any("waits for your approval" in str(n.message) for n in app._notifications)


async def parents_call_said(pilot, scripted_model: ScriptedModel) -> SessionScreen:
    """With the child's screen shown over the parent's, the parent's call `c1` waits and a notice says
    so; returns the parent's screen."""
    parent = await child_opened_from_the_panel(pilot, "review, then mark it done", first_screen=False)
    scripted_model.release("gate")
    await wait_for(pilot, lambda: unasked_said(pilot.app), "the notice")
    return parent


async def test_a_call_waiting_in_a_session_no_screen_shows_is_said(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The person opened the sub-agent's session from the parent's panel; once the child had answered,
    the parent's next call waited for approval under the parent's session, whose screen the child's
    had replaced: nothing said so, and the task waited for nobody. A notice says where it waits;
    /parent opens it and asks."""
    script_review_then_mark(scripted_model, workspace)
    app = agent_app()
    async with app.run_test(size=(110, 40), notifications=True) as pilot:
        parent = await parents_call_said(pilot, scripted_model)
        (notice,) = [n for n in app._notifications if "waits for your approval" in str(n.message)]
        assert f"({parent.session_id[:8]})" in str(notice.message) and short_text(str(notice.message)) is None
        await type_command(pilot, "/parent")
        await wait_for(pilot, lambda: prompt_shown(app, "c1"), "the parent's prompt")
        await wait_for(pilot, lambda: not unasked_said(app), "the notice taken down once the screen asks")
        await pilot.press("y")
        await wait_for(pilot, lambda: (workspace / "done.txt").exists(), "the command ran")


async def test_the_notice_of_an_unasked_call_goes_once_the_call_is_answered(
    agent_app: AgentApp, scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The notice that a call waits in a session no screen shows stayed its whole minute after the call
    was answered (here by another front end, as `harnez attach` or the UHP server would): it goes."""
    script_review_then_mark(scripted_model, workspace)
    app = agent_app()
    async with app.run_test(size=(110, 40), notifications=True) as pilot:
        parent = await parents_call_said(pilot, scripted_model)
        app.server.approvals.answer(parent.session_id, "c1", "allow")
        await wait_for(pilot, lambda: (workspace / "done.txt").exists(), "the command ran")
        await wait_for(pilot, lambda: not unasked_said(app), "the notice taken down")
        assert any("waits for your approval" in n.text for n in app.notices)  # Ctrl+N still lists it
