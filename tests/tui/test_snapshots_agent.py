"""The real agent over the scripted model (loopback): a streamed answer, an approved edit's diff."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.server import server as server_module
from harnez.server.server import Server
from harnez.settings import ProviderSettings, Settings
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.screens.approval import ApprovalScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import shows_a_title, wait_for

SCRIPT = [
    {
        "reply": [
            {"reasoning": "An f-string reads better."},
            {"text": "I'll update `greet` in `app.py`."},
            {
                "tool_call": {
                    "name": "edit",
                    "id": "call_1",
                    "arguments": {
                        "path": "app.py",
                        "old_string": 'return "hi " + name',
                        "new_string": 'return f"Hi {name}!"',
                    },
                }
            },
        ],
        "usage": {"input": 1840, "output": 96},
    },
    {
        "reply": [
            {
                "text": "Done. `greet` now returns an f-string:\n\n```python\n>>> greet(\"Ada\")\n'Hi Ada!'\n```"
            }
        ],
        "usage": {"input": 2010, "output": 58},
    },
]


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr(server_module, "new_session_id", lambda: f"{next(counter):02x}c0ffee" + "0" * 24)


def test_an_approved_edit_and_the_streamed_answer(
    snap_compare, db_path: Path, workspace: Path, scripted_model: ScriptedModel
) -> None:
    scripted_model.add(*SCRIPT)
    (workspace / "app.py").write_text('def greet(name):\n    return "hi " + name\n')
    settings = Settings(
        providers={
            "local": ProviderSettings(wire="openai-chat", base_url=scripted_model.base_url("openai-chat"))
        },
        model="local/qwen3-coder",
    )

    async def open_server() -> Server:
        return await Server.open(db_path, settings, AgentWork(settings, approve="ask"))

    app = HarnezApp(open_server, workspace, settings)

    async def run(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        prompt = app.screen.query_one(PromptInput)
        prompt.cursor_blink = False  # the run takes longer than a blink: keep the cursor's state fixed
        prompt.load_text("Make greet() friendlier")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.armed, "approval")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the answer")
        await wait_for(pilot, lambda: shows_a_title(app), "the session's title")
        await pilot.pause()
        assert 'return f"Hi {name}!"' in (workspace / "app.py").read_text()

    assert snap_compare(app, terminal_size=(100, 40), run_before=run)
