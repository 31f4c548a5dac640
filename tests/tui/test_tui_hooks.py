"""The app asks once before a project's hooks run, and the transcript shows answers and hook runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.agent.work import AgentWork
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.settings import HookCommand, HookSettings, Settings, load_settings
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.screens.hook_trust import HookTrustDialog
from harnez.tui.widgets.answers import AnswerBlock
from harnez.tui.widgets.blocks import NoticeBlock, TaskEndBlock, ToolBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.agent.helpers import make_settings
from tests.tui.helpers import ctrl_c_twice_quits, wait_for


@pytest.fixture
async def agent_app(db_path: Path, workspace: Path) -> AsyncIterator[Callable[[Settings], HarnezApp]]:
    """Apps over a real server whose work is the agent, with the given settings."""
    opened: list[Server] = []

    def build(settings: Settings) -> HarnezApp:
        async def open_server() -> Server:
            opened.append(await Server.open(db_path, settings, AgentWork(settings, approve="ask")))
            return opened[-1]

        return HarnezApp(open_server, workspace, settings)

    yield build
    for server in opened:
        await server.close()


def project_hooks(workspace: Path, scripted_model: ScriptedModel, hooks: dict) -> Settings:
    """The workspace's project file defines these hooks; its settings, loaded as the CLI loads them."""
    providers = {"chat": {"wire": "openai-chat", "base_url": scripted_model.base_url("openai-chat")}}
    (workspace / ".harnez").mkdir(exist_ok=True)
    (workspace / ".harnez" / "settings.json").write_text(
        json.dumps({"providers": providers, "model": "chat/test-model", "hooks": hooks})
    )
    return load_settings(workspace)


async def send(pilot, text: str) -> None:
    pilot.app.screen.query_one(PromptInput).load_text(text)
    await pilot.press("enter")


def trust_modal_shown(app) -> bool:
    """The trust modal is the screen, composed, with "Not now" focused (pushed is not yet composed)."""
    focused = app.focused
    return isinstance(app.screen, HookTrustDialog) and focused is not None and focused.id == "no"


async def test_untrusted_project_hooks_are_shown_in_a_modal_and_run_once_trusted(
    agent_app, workspace: Path, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    ran = tmp_path / "hook-ran"
    settings = project_hooks(workspace, scripted_model, {"stop": [{"command": f"touch {ran}"}]})
    scripted_model.add({"reply": [{"text": "done"}]})
    app = agent_app(settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: trust_modal_shown(app), "the trust modal")
        listed = str(app.screen.query_one("#hook-commands").render())
        assert listed == f"stop: touch {ran}"
        assert not ran.exists()
        await pilot.press("t")
        await wait_for(pilot, lambda: not isinstance(app.screen, HookTrustDialog), "the modal closes")
        assert app.server.untrusted_hooks(workspace) is None
        await send(pilot, "go")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        assert ran.exists()
        notices = [str(n.render()) for n in app.screen.query(NoticeBlock)]
        assert any(n.startswith(f"⚓ stop hook `touch {ran}` allowed") for n in notices)


async def test_ctrl_c_on_the_trust_modal_says_a_second_one_quits_and_the_second_quits(
    agent_app, workspace: Path, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    """Ctrl+C there did nothing at all (Textual's Screen binds it to copy), where everywhere else a
    second press quits; the hooks stay untrusted."""
    settings = project_hooks(workspace, scripted_model, {"stop": [{"command": f"touch {tmp_path / 'x'}"}]})
    app = agent_app(settings)
    async with app.run_test(size=(100, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: trust_modal_shown(app), "the trust modal")
        await ctrl_c_twice_quits(pilot, HookTrustDialog)


async def test_not_now_keeps_the_hooks_off_and_the_task_says_so(
    agent_app, workspace: Path, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    ran = tmp_path / "hook-ran"
    settings = project_hooks(workspace, scripted_model, {"prompt_submit": [{"command": f"touch {ran}"}]})
    scripted_model.add({"reply": [{"text": "done"}]})
    app = agent_app(settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: trust_modal_shown(app), "the trust modal")
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, HookTrustDialog), "the modal closes")
        await send(pilot, "go")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        assert not ran.exists() and app.server.untrusted_hooks(workspace) is not None
        notices = [str(n.render()) for n in app.screen.query(NoticeBlock)]
        assert any("are not trusted yet, so they did not run" in n for n in notices)


async def test_a_stop_hook_that_sends_the_task_back_shows_in_the_transcript(
    agent_app, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    mark = tmp_path / "mark"
    hook = f"[ -e {mark} ] && exit 0; touch {mark}; echo 'add a test first' >&2; exit 2"
    guard = HookCommand(command='echo \'{"decision": "block", "reason": "not today"}\'', tools=["shell"])
    settings = make_settings(scripted_model).model_copy(
        update={"hooks": HookSettings(stop=[HookCommand(command=hook)], pre_tool=[guard])}
    )
    scripted_model.add(
        {"reply": [{"text": "Done."}]},
        {"reply": [{"tool_call": {"name": "shell", "id": "c1", "arguments": {"command": "ls"}}}]},
        {"reply": [{"text": "Test added."}]},
    )
    app = agent_app(settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "fix it")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        notices = [str(n.render()) for n in app.screen.query(NoticeBlock)]
        assert any(
            "stop hook `" in n and "sent the task back" in n and "add a test first" in n for n in notices
        )
        tool = app.screen.query_one(ToolBlock)
        states = [str(s.render()) for s in tool.query(".tool-state")]
        assert any("pre_tool hook" in s and "denied the call" in s and "not today" in s for s in states)
        assert app.screen.query_one(TaskEndBlock).stop == "completed"


async def answers_and_failures(run: TaskRun) -> TaskOutcome:
    """Work emitting the other answer and hook events, as the agent does."""
    run.emit(ev.AnswerNudged(message="use the answer tool", forced=True))
    run.emit(ev.Answered(call_id="a1", answer={"verdict": "pass", "failures": 0}))
    run.emit(ev.StopHookExhausted(limit=3, command="make test", reason="1 test fails"))
    await run.emit_now(
        ev.HookFailed(
            hook="stop", command="make lint", message="The stop hook `make lint` failed.", exit_code=2
        )
    )
    return TaskOutcome("failed", 1, "The stop hook `make lint` failed.")


async def test_answers_nudges_and_failed_hooks_render_as_their_own_blocks(make_app) -> None:
    app = make_app(answers_and_failures)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "verdict?")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task ends")
        (block,) = app.screen.query(AnswerBlock)
        assert block.answer == {"verdict": "pass", "failures": 0}
        assert '"verdict": "pass"' in str(block.query("Static").last().render())
        notices = {str(n.render()): n for n in app.screen.query(NoticeBlock)}
        assert any(text.startswith("↻ The model ended without an answer") for text in notices)
        exhausted = [
            n for text, n in notices.items() if "blocked again after sending the task back 3" in text
        ]
        assert exhausted and exhausted[0].has_class("-warning")
        failed = notices["✗ The stop hook `make lint` failed."]
        assert failed.has_class("-error")
