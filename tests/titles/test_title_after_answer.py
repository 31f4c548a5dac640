"""Naming waits for the first answer: it never competes with the words the person waits for."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from title_support import (
    KEY_ENV,
    PROMPT,
    first_prompt,
    open_server,
    provider,
    settings_for,
    title_of,
    wait_until,
)

from harnez import events as ev
from harnez.errors import HarnezError
from harnez.server import Server, TaskOutcome, TaskRun
from harnez.settings import ModelRef
from harnez.testing.scripted_model import ScriptedModel

KEYWORD_TITLE = "WAL checkpoint races — group commit"
NAMING_CHANCE = 1.0
"""Seconds the answer is held open, giving naming every chance to start early if it could."""


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-after-answer-test-key")


class AnswerThenTools:
    """A task whose first answer completes only when `naming_seen` is set or NAMING_CHANCE passed, then
    keeps running (tool calls, say) until `end` is set."""

    def __init__(self) -> None:
        self.naming_seen = asyncio.Event()
        self.named_before_answer: bool | None = None
        self.end = asyncio.Event()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        run.emit(ev.TextDelta(text="Looking into the WAL checkpoint."))
        try:
            await asyncio.wait_for(self.naming_seen.wait(), NAMING_CHANCE)
        except TimeoutError:
            pass
        self.named_before_answer = self.naming_seen.is_set()
        run.emit(ev.TurnCompleted(turn=1, stop_reason="tool_use"))
        await self.end.wait()
        return TaskOutcome("completed", 2)

    async def finish(self, server: Server, session_id: str) -> None:
        """Let the task end, then close the server."""
        self.end.set()
        await server.wait(session_id)
        await server.close()


async def test_a_model_title_is_asked_for_only_once_the_first_answer_is_complete(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "WAL checkpoint race"}]})
    work = AnswerThenTools()
    server = await open_server(
        db_path, settings_for("model/local/small-model", {"local": provider(scripted_model)}), work
    )
    asked = server.titles.model_titler
    assert asked is not None

    async def titler(ref: ModelRef, prompt: str, *, session_id: str | None = None) -> str:
        work.naming_seen.set()
        return await asked(ref, prompt, session_id=session_id)

    server.set_model_titler(titler)
    session_id = await first_prompt(server, workspace)

    async def named() -> bool:
        return (await title_of(server, session_id)) == ("WAL checkpoint race", "model")

    await wait_until(named)
    assert work.named_before_answer is False
    assert server.running(session_id) is not None  # named while the task still runs its tools
    await work.finish(server, session_id)


async def test_a_keyword_title_follows_the_first_answer_while_the_task_goes_on(
    db_path: Path, workspace: Path
) -> None:
    work = AnswerThenTools()
    server = await open_server(db_path, settings_for("keywords/yake", {}), work)
    session_id = await first_prompt(server, workspace)

    async def named() -> bool:
        return (await title_of(server, session_id)) == (KEYWORD_TITLE, "keywords")

    await wait_until(named)
    assert server.running(session_id) is not None
    await server.store.events.flush()
    seqs = {event.kind: event.seq for event in await server.events_after(session_id)}
    assert seqs["title-changed"] > seqs["turn-completed"]  # named after the answer, not beside it
    await work.finish(server, session_id)


async def test_a_task_that_fails_before_any_answer_still_names_its_session(
    db_path: Path, workspace: Path
) -> None:
    async def refused(run: TaskRun) -> TaskOutcome:
        raise HarnezError("The provider rejected the credentials (401).")

    server = await open_server(db_path, settings_for("keywords/yake", {}), refused)
    session_id = await first_prompt(server, workspace, PROMPT)
    assert (await server.wait(session_id)).stop == "failed"
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == (KEYWORD_TITLE, "keywords")
    await server.close()
