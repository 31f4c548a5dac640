"""A person's rename wins over a model title request in flight, whatever the ordering."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from title_support import (
    KEY_ENV,
    events_of,
    first_prompt,
    open_server,
    provider,
    settings_for,
    title_of,
    wait_until,
)

from harnez.server import Server
from harnez.settings import ModelRef
from harnez.testing.scripted_model import ScriptedModel
from harnez.titles.model import make_model_titler

SOURCE = "model/local/small-model"
MINE = "my own name"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-race-test-key")


@pytest.fixture
async def server(scripted_model: ScriptedModel, db_path: Path) -> Server:
    opened = await open_server(db_path, settings_for(SOURCE, {"local": provider(scripted_model)}))
    yield opened
    await opened.close()


async def _assert_rename_won(server: Server, session_id: str, renamed_as_draft: bool = False) -> None:
    """The stored title and the last `title-changed` event (what a live TUI shows) are the person's.

    A draft's title is saved with its row, before any event exists: then no title event at all.
    """
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == (MINE, "user")
    changes = await events_of(server, session_id, "title-changed")
    if renamed_as_draft:
        assert changes == []
    else:
        assert changes[-1] == {"title": MINE, "source": "user"}


async def _excerpt_stored(server: Server, session_id: str) -> None:
    async def stored() -> bool:
        return (await title_of(server, session_id))[1] == "excerpt"

    await wait_until(stored)


async def test_rename_before_the_first_prompt_sends_no_naming_request(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    await server.rename(draft.id, MINE)
    await server.submit(draft.id, "Fix the flaky WAL test")
    await _assert_rename_won(server, draft.id, renamed_as_draft=True)
    assert scripted_model.requests == []
    assert await events_of(server, draft.id, "warning") == []


async def test_rename_of_a_stored_session_before_naming_starts(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    await server.persist(draft.id)
    await server.rename(draft.id, MINE)
    await server.submit(draft.id, "Fix the flaky WAL test")
    await _assert_rename_won(server, draft.id)
    assert scripted_model.requests == []


async def test_rename_between_the_fallback_and_the_reply(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Model title"}], "hold": "reply"})
    session_id = await first_prompt(server, workspace)
    await _excerpt_stored(server, session_id)
    await server.rename(session_id, MINE)
    scripted_model.release("reply")
    await _assert_rename_won(server, session_id)
    assert len(scripted_model.requests) == 1


async def test_rename_while_the_reply_is_streaming(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add(
        {"reply": [{"text": "Model title from a slow stream"}], "hold": "mid", "hold_after_chunks": 2}
    )
    session_id = await first_prompt(server, workspace)
    await _excerpt_stored(server, session_id)
    await server.rename(session_id, MINE)
    scripted_model.release("mid")
    await _assert_rename_won(server, session_id)


async def test_rename_after_the_reply_arrived_but_before_it_is_saved(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Model title"}]})
    real = make_model_titler(server.settings)
    replies: list[str] = []

    async def rename_as_the_reply_lands(ref: ModelRef, prompt: str, *, session_id: str | None = None) -> str:
        reply = await real(ref, prompt, session_id=session_id)
        assert session_id is not None
        await server.rename(session_id, MINE)
        replies.append(reply)
        return reply

    server.set_model_titler(rename_as_the_reply_lands)
    session_id = await first_prompt(server, workspace)
    await _assert_rename_won(server, session_id)
    assert replies == ["Model title"]


async def test_rename_after_the_model_title_was_saved(
    server: Server, scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Model title"}]})
    session_id = await first_prompt(server, workspace)
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == ("Model title", "model")
    await server.rename(session_id, MINE)
    await _assert_rename_won(server, session_id)


@pytest.mark.parametrize("yields", list(range(0, 40, 3)))
async def test_rename_racing_the_release_at_every_step(
    server: Server, scripted_model: ScriptedModel, workspace: Path, yields: int
) -> None:
    """The rename starts `yields` loop turns after the reply is released: any interleaving."""
    scripted_model.add({"reply": [{"text": "Model title"}], "hold": "reply"})
    session_id = await first_prompt(server, workspace)
    await _excerpt_stored(server, session_id)
    scripted_model.release("reply")
    for _ in range(yields):
        await asyncio.sleep(0)
    await server.rename(session_id, MINE)
    await _assert_rename_won(server, session_id)
