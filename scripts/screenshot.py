"""Make docs/screenshot.svg: the real app, agent and scripted model, after an approved edit.

    .venv/bin/python scripts/screenshot.py [docs/screenshot.svg]

Runs in-process with Textual's headless driver: a workspace in a temporary folder, settings pointing
at the scripted model (loopback), a prompt, an approval answered with `y`, the streamed answer.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from harnez.agent.work import AgentWork
from harnez.server.server import Server
from harnez.settings import ProviderSettings, Settings
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.screens.approval import ApprovalScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput

SOURCE = 'def greet(name):\n    return "hi " + name\n'
SCRIPT = [
    {
        "reply": [
            {"reasoning": "The greeting should use an f-string and a capital letter."},
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
                "text": "Done. `greet` now returns an f-string:\n\n```python\n>>> greet(\"Ada\")\n'Hi Ada!'\n```\n\n"
                "Run `pytest -q` to check the tests still pass."
            }
        ],
        "usage": {"input": 2010, "output": 58},
    },
]


async def until(pilot, condition, what: str) -> None:
    for _ in range(1000):
        if condition():
            return
        await pilot.pause(0.01)
    raise SystemExit(f"screenshot: never happened: {what}")


async def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as folder, ScriptedModel(SCRIPT) as model:
        workspace = Path(folder) / "greeter"
        workspace.mkdir()
        (workspace / "app.py").write_text(SOURCE)
        settings = Settings(
            providers={"local": ProviderSettings(wire="openai-chat", base_url=model.base_url("openai-chat"))},
            model="local/qwen3-coder",
        )

        async def open_server() -> Server:
            return await Server.open(
                Path(folder) / "harnez.sqlite", settings, AgentWork(settings, approve="ask")
            )

        app = HarnezApp(open_server, workspace, settings)
        async with app.run_test(size=(100, 34)) as pilot:
            await until(pilot, lambda: app.ready, "the session screen")
            app.screen.query_one(PromptInput).load_text("Make greet() friendlier")
            await pilot.press("enter")
            await until(
                pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.armed, "approval"
            )
            await pilot.press("y")
            await until(pilot, lambda: app.screen.query(TaskEndBlock), "the answer")
            await pilot.pause(0.3)
            target.write_text(app.export_screenshot(title="harnez"))
            await app.quit_harnez()
    print(f"wrote {target}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.svg")))
