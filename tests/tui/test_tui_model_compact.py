"""`/model` and `/compact` in the session screen, with the real agent over the scripted model (loopback)."""

from __future__ import annotations

import json

from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.screens.model_picker import ModelPickerScreen
from harnez.tui.widgets.blocks import NoticeBlock, TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from tests.agent.helpers import answer
from tests.tui.helpers import wait_for


async def type_line(pilot, text: str) -> None:
    pilot.app.screen.query_one(PromptInput).load_text(text)
    await pilot.press("enter")


def ends(app: HarnezApp) -> list[TaskEndBlock]:
    return list(app.screen.query(TaskEndBlock))


async def test_model_with_an_argument_switches_the_next_task(
    agent_app, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(answer("first"), answer("second"))
    app = agent_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_line(pilot, "hello")
        await wait_for(pilot, lambda: len(ends(app)) == 1, "first task")
        await type_line(pilot, "/model anth/claude-sonnet-4-5:high")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: status.model == "anth/claude-sonnet-4-5:high", "status shows the model")
        await type_line(pilot, "again")
        await wait_for(pilot, lambda: len(ends(app)) == 2, "second task")
        session_id = app.screen.session_id
        record = await app.server.get_session(session_id)
        kinds = [e.kind for e in await app.server.events_after(session_id)]
    assert record.model == "anth/claude-sonnet-4-5:high"
    assert "model-changed" in kinds
    second = scripted_model.requests[-1]
    assert second.path.endswith("/messages")  # the anthropic wire served the second task
    body = second.body
    assert body["model"] == "claude-sonnet-4-5" and body["thinking"]["type"] == "enabled"


async def test_model_rejects_an_unconfigured_provider_and_keeps_the_model(agent_app) -> None:
    app = agent_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        before = app.screen.query_one(StatusLine).model
        await type_line(pilot, "/model nowhere/some-model")
        await wait_for(
            pilot, lambda: any("Unknown provider 'nowhere'" in n.message for n in app._notifications)
        )
        assert app.screen.query_one(StatusLine).model == before
        assert app.server.draft(app.screen.session_id).model == "chat/test-model"  # unchanged, unsaved


async def test_model_without_an_argument_opens_a_picker(agent_app) -> None:
    app = agent_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_line(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "model picker")
        picker = app.screen
        assert picker.choices[0] == "chat/test-model"
        await pilot.press(*"anth/", "enter")  # filter, then the highlighted match
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelPickerScreen))
        assert app.screen.query_one(StatusLine).model.startswith("anth/")
        await type_line(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "model picker again")
        await pilot.press(*"chat/test-model", "tab")
        await pilot.press(*":high", "enter")  # a typed thinking level that no row lists
        await wait_for(pilot, lambda: app.screen.query_one(StatusLine).model == "chat/test-model:high")
        await type_line(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "model picker, cancel")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelPickerScreen))
        assert app.screen.query_one(StatusLine).model == "chat/test-model:high"


async def test_compact_summarises_through_the_model_and_the_next_task_sees_the_summary(
    agent_app, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(
        answer("We renamed util.py to helpers.py."), answer("SUMMARY-OF-WORK-42"), answer("ok")
    )
    app = agent_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_line(pilot, "rename util.py")
        await wait_for(pilot, lambda: len(ends(app)) == 1, "first task")
        await type_line(pilot, "/compact")
        await wait_for(pilot, lambda: len(ends(app)) == 2, "compaction task")
        session_id = app.screen.session_id
        compacted = [e for e in await app.server.events_after(session_id) if e.kind == "compacted"]
        assert compacted and compacted[0].body.summarised is True
        assert any("compacted" in str(block.render()) for block in app.screen.query(NoticeBlock))
        await type_line(pilot, "what next?")
        await wait_for(pilot, lambda: len(ends(app)) == 3, "task after compaction")
    last = scripted_model.requests[-1].body
    sent = json.dumps(last["messages"])
    assert "SUMMARY-OF-WORK-42" in sent and "/compact" not in sent


async def test_compact_is_refused_before_any_conversation(agent_app) -> None:
    app = agent_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_line(pilot, "/compact")
        await wait_for(pilot, lambda: any("Nothing to compact" in n.message for n in app._notifications))
        assert app.server.draft(app.screen.session_id) is not None  # still unsaved: no picker entry
        assert (await app.server.list_sessions()).sessions == []
