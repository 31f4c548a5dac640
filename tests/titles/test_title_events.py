"""Title changes are `title-changed` events carrying their source, so front ends update live."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from title_support import (
    EXCERPT,
    KEY_ENV,
    first_prompt,
    open_server,
    provider,
    settings_for,
    wait_for_requests,
)

from harnez.events import StoredEvent
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-events-test-key")


async def _title_changes(server: Server, session_id: str, count: int) -> list[dict[str, object]]:
    """Follow the session live until `count` title changes arrived."""
    seen: list[dict[str, object]] = []
    event: StoredEvent
    async for event in server.subscribe(session_id):
        if event.kind == "title-changed":
            seen.append(event.body.to_payload())
            if len(seen) == count:
                return seen
    return seen


async def test_a_subscriber_sees_the_excerpt_the_model_title_and_the_rename_live(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}], "hold": "reply"})
    server = await open_server(db_path, settings_for("model/local/m", {"local": provider(scripted_model)}))
    session_id = await first_prompt(server, workspace)
    watcher = asyncio.create_task(_title_changes(server, session_id, 3))
    await wait_for_requests(scripted_model, 1)
    scripted_model.release("reply")
    await server.titles.wait_idle()
    await server.rename(session_id, "  my   name ")
    changes = await asyncio.wait_for(watcher, 10)
    assert changes == [
        {"title": EXCERPT, "source": "excerpt"},
        {"title": "Flaky WAL test", "source": "model"},
        {"title": "my name", "source": "user"},
    ]
    await server.close()


async def test_a_keyword_title_arrives_as_an_event(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    session_id = await first_prompt(server, workspace)
    changes = await asyncio.wait_for(_title_changes(server, session_id, 1), 10)
    assert changes == [{"title": "WAL checkpoint races — group commit", "source": "keywords"}]
    await server.close()
