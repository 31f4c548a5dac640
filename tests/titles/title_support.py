"""Shared set-up of the naming tests: settings over the scripted model, a real server, event helpers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from harnez.events import StoredEvent
from harnez.server import Server, TaskOutcome, TaskRun
from harnez.settings import ProviderSettings, SessionSettings, Settings, TitleSettings, WireName
from harnez.testing.scripted_model import ScriptedModel
from harnez.titles.model import make_model_titler

KEY_ENV = "HARNEZ_TITLE_TEST_KEY"
PROMPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group commit"
EXCERPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group…"
"""The prompt cut to 80 characters at a space, with an ellipsis."""


async def done_work(run: TaskRun) -> TaskOutcome:
    """A task that completes at once (the agent loop is not under test here)."""
    return TaskOutcome("completed", 1)


class GatedWork:
    """A task that runs until `open()` is called, so prompts can be queued or steer it."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    def open(self) -> None:
        self.gate.set()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        await self.gate.wait()
        return TaskOutcome("completed", 1)


def provider(
    model: ScriptedModel,
    wire: WireName = "openai-chat",
    key_env: str | None = KEY_ENV,
    base_url: str | None = None,
) -> ProviderSettings:
    """A provider served by the scripted model."""
    return ProviderSettings(wire=wire, base_url=base_url or model.base_url(wire), api_key_env=key_env)


def settings_for(
    source: str, providers: dict[str, ProviderSettings], generated: bool = True, model: str | None = None
) -> Settings:
    """Settings with a title source and providers; no files, no environment."""
    title = TitleSettings(generated=generated, source=source)
    return Settings(session=SessionSettings(title=title), providers=providers, model=model)


async def open_server(db_path: Path, settings: Settings, work: Any = done_work) -> Server:
    """A real server over a temp database, with model titles reaching the wires."""
    server = await Server.open(db_path, settings, work=work)

    async def session_model(session_id: str) -> str | None:
        return (await server.get_session(session_id)).model

    server.set_model_titler(make_model_titler(settings, session_model))
    return server


async def first_prompt(
    server: Server, workspace: Path, prompt: str = PROMPT, model: str | None = None
) -> str:
    """Open a session, send its first prompt; returns the session id (naming still runs)."""
    draft = server.create_session(workspace, model=model)
    await server.submit(draft.id, prompt)
    return draft.id


async def title_of(server: Server, session_id: str) -> tuple[str | None, str | None]:
    """The stored (title, source)."""
    record = await server.get_session(session_id)
    return record.title, record.title_source


async def events_of(server: Server, session_id: str, kind: str) -> list[dict[str, Any]]:
    """The payloads of the stored events of one kind."""
    await server.store.events.flush()
    stored: list[StoredEvent] = await server.events_after(session_id)
    return [e.body.to_payload() for e in stored if e.kind == kind]


async def wait_until(condition: Any, timeout: float = 10.0) -> None:
    """Poll an async condition until it holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


async def wait_for_requests(model: ScriptedModel, count: int) -> None:
    """Until the scripted model has received `count` requests."""

    async def received() -> bool:
        return len(model.requests) >= count

    await wait_until(received)
