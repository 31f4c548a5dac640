"""Model titles over loopback HTTP: the excerpt first, one bare request, every fallback kept with a warning."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from title_support import (
    EXCERPT,
    KEY_ENV,
    PROMPT,
    events_of,
    first_prompt,
    open_server,
    provider,
    settings_for,
    title_of,
    wait_for_requests,
    wait_until,
)

from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from harnez.titles.model import TITLE_INSTRUCTION, TITLE_MAX_OUTPUT

SECRET = "sk-planted-title-secret-4f9c2a7d1e"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The key of the scripted provider, planted where api_key_env points."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


async def _named(
    scripted_model: ScriptedModel,
    db_path: Path,
    workspace: Path,
    source: str,
    model: str | None = None,
    **providers: object,
) -> tuple[Server, str]:
    settings = settings_for(source, providers or {"local": provider(scripted_model)})  # type: ignore[arg-type]
    server = await open_server(db_path, settings)
    session_id = await first_prompt(server, workspace, model=model)
    await server.titles.wait_idle()
    return server, session_id


async def test_the_excerpt_is_stored_before_the_model_answers_then_replaced(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "WAL checkpoint race in tests"}], "hold": "reply"})
    server = await open_server(
        db_path, settings_for("model/local/small-model", {"local": provider(scripted_model)})
    )
    session_id = await first_prompt(server, workspace)
    await wait_for_requests(scripted_model, 1)
    assert await title_of(server, session_id) == (EXCERPT, "excerpt")
    scripted_model.release("reply")
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == ("WAL checkpoint race in tests", "model")
    assert await events_of(server, session_id, "warning") == []
    await server.close()


async def test_the_only_request_carries_the_instruction_and_the_first_prompt(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": 'Title: "Flaky WAL test."'}]})
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/small-model")
    await server.submit(session_id, "and now also make the group commit faster please")
    await server.wait(session_id)
    await server.titles.wait_idle()
    (request,) = scripted_model.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"] == [
        {"role": "system", "content": TITLE_INSTRUCTION},
        {"role": "user", "content": PROMPT},
    ]
    assert "tools" not in request.body and request.body["max_tokens"] == TITLE_MAX_OUTPUT
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert await title_of(server, session_id) == ("Flaky WAL test", "model")
    await server.close()


@pytest.mark.parametrize(
    ("wire", "path", "system_of", "user_of"),
    [
        ("openai-responses", "/v1/responses", lambda b: b["instructions"], lambda b: b["input"]),
        ("anthropic-messages", "/v1/messages", lambda b: b["system"], lambda b: b["messages"]),
    ],
)
async def test_the_other_wires_send_the_same_bare_request(
    scripted_model: ScriptedModel,
    db_path: Path,
    workspace: Path,
    wire: str,
    path: str,
    system_of: object,
    user_of: object,
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}]})
    server, session_id = await _named(
        scripted_model, db_path, workspace, "model/p/some-model", p=provider(scripted_model, wire)
    )  # type: ignore[arg-type]
    (request,) = scripted_model.requests
    assert request.path == path and system_of(request.body) == TITLE_INSTRUCTION  # type: ignore[operator]
    assert PROMPT in str(user_of(request.body)) and len(user_of(request.body)) == 1  # type: ignore[operator]
    assert "tools" not in request.body
    assert await title_of(server, session_id) == ("Flaky WAL test", "model")
    await server.close()


async def test_thinking_is_clamped_and_model_ids_may_contain_slashes(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}]})
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/qwen/qwen3-8b:xhigh")
    (request,) = scripted_model.requests
    assert request.body["model"] == "qwen/qwen3-8b"
    assert request.body["reasoning_effort"] == "high"  # qwen3 goes up to high
    assert request.body["max_tokens"] > TITLE_MAX_OUTPUT  # room for the reasoning before the title
    assert await title_of(server, session_id) == ("Flaky WAL test", "model")
    await server.close()


async def _assert_fallback(server: Server, session_id: str, *reasons: str) -> str:
    """The excerpt stayed and one `title-failed` warning says why; returns its message."""
    assert await title_of(server, session_id) == (EXCERPT, "excerpt")
    (warning,) = await events_of(server, session_id, "warning")
    assert warning["code"] == "title-failed"
    for reason in reasons:
        assert reason in warning["message"]
    assert SECRET not in warning["message"]
    return str(warning["message"])


@pytest.mark.parametrize("status", [500, 401, 404])
async def test_a_provider_failure_keeps_the_excerpt_and_is_tried_once(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, status: int
) -> None:
    # A first 404 is asked once more with or without `/v1` (docs/wires.md); a 404 there too here.
    elsewhere = [{"status": 404}] if status == 404 else []
    scripted_model.add({"status": status}, *elsewhere, {"reply": [{"text": "a retry must never get this"}]})
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/small-model")
    await _assert_fallback(server, session_id, "local/small-model", str(status))
    assert len(scripted_model.requests) == 1 + len(elsewhere)
    await server.close()


async def test_a_refused_connection_keeps_the_excerpt(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    dead = provider(scripted_model, base_url=f"http://127.0.0.1:{closed_port}/v1")
    server, session_id = await _named(
        scripted_model, db_path, workspace, "model/local/small-model", local=dead
    )
    message = await _assert_fallback(server, session_id, "cannot connect")
    assert message.endswith("settings.json right? Kept the excerpt."), "one sentence ends, the next begins"
    await server.close()


async def test_missing_credentials_keep_the_excerpt_and_send_nothing(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/small-model")
    await _assert_fallback(server, session_id, KEY_ENV)
    assert scripted_model.requests == []
    await server.close()


@pytest.mark.parametrize("reply", ["", "   \n  ", "x" * 120, "bad\x1b[31mcolour"])
async def test_an_empty_or_unusable_reply_keeps_the_excerpt(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, reply: str
) -> None:
    scripted_model.add({"reply": [{"text": [reply]}]})
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/small-model")
    await _assert_fallback(server, session_id, "local/small-model")
    await server.close()


async def test_an_invalid_model_source_keeps_the_excerpt_and_sends_nothing(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/")
    await _assert_fallback(server, session_id, "model/local/", "excerpt")
    assert scripted_model.requests == []
    await server.close()


async def test_an_invalid_non_model_source_uses_the_keyword_title(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    server, session_id = await _named(scripted_model, db_path, workspace, "keywords/rake")
    assert await title_of(server, session_id) == ("WAL checkpoint races — group commit", "keywords")
    (warning,) = await events_of(server, session_id, "warning")
    assert warning["code"] == "title-failed" and "keywords/rake" in warning["message"]
    await server.close()


async def test_an_unconfigured_provider_is_unsupported_without_an_openai_session(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    providers = {"claude": provider(scripted_model, "anthropic-messages")}
    server, session_id = await _named(
        scripted_model,
        db_path,
        workspace,
        "model/elsewhere/llama3.2",
        model="claude/claude-sonnet-4-5",
        **providers,
    )
    await _assert_fallback(server, session_id, "unsupported", "openai-compatible")
    assert scripted_model.requests == []
    await server.close()


async def test_an_unconfigured_provider_is_unsupported_when_the_session_has_no_model(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    server, session_id = await _named(scripted_model, db_path, workspace, "model/elsewhere/llama3.2")
    await _assert_fallback(server, session_id, "unsupported", "'elsewhere'")
    assert scripted_model.requests == []
    await server.close()


async def test_an_openai_naming_model_reuses_the_base_url_of_an_openai_session(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}]})
    server, session_id = await _named(
        scripted_model, db_path, workspace, "model/elsewhere/llama3.2", model="local/qwen3"
    )
    (request,) = scripted_model.requests
    assert request.path == "/v1/chat/completions" and request.body["model"] == "llama3.2"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert await title_of(server, session_id) == ("Flaky WAL test", "model")
    await server.close()


async def test_a_configured_naming_provider_never_borrows_the_session_endpoint(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}]})
    providers = {"local": provider(scripted_model), "claude": provider(scripted_model, "anthropic-messages")}
    server, session_id = await _named(
        scripted_model, db_path, workspace, "model/claude/claude-3-5-haiku", model="local/qwen3", **providers
    )
    (request,) = scripted_model.requests
    assert request.path == "/v1/messages" and request.headers["x-api-key"] == SECRET
    assert await title_of(server, session_id) == ("Flaky WAL test", "model")
    await server.close()


async def test_without_a_model_titler_the_excerpt_stays_with_a_warning(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    server = await open_server(
        db_path, settings_for("model/local/small-model", {"local": provider(scripted_model)})
    )
    server.set_model_titler(None)
    session_id = await first_prompt(server, workspace)
    await server.titles.wait_idle()
    await _assert_fallback(server, session_id, "not available")
    await server.close()


async def test_no_secret_reaches_the_database_even_when_the_provider_echoes_it(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {SECRET}", "type": "invalid_request_error"}}
    scripted_model.add({"status": 401, "body": echo})
    server, session_id = await _named(scripted_model, db_path, workspace, "model/local/small-model")
    message = await _assert_fallback(server, session_id, "401")
    assert "[redacted]" in message
    assert (
        scripted_model.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    )  # the key was really used
    await server.close()
    files = [p for p in db_path.parent.iterdir() if p.is_file()]
    assert db_path in files
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


async def test_the_task_never_waits_for_naming(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Flaky WAL test"}], "hold": "reply"})
    server = await open_server(
        db_path, settings_for("model/local/small-model", {"local": provider(scripted_model)})
    )
    session_id = await first_prompt(server, workspace)
    outcome = await server.wait(session_id)
    assert outcome is not None and outcome.stop == "completed"
    await wait_for_requests(scripted_model, 1)  # naming starts once the answer is complete
    assert await title_of(server, session_id) == (EXCERPT, "excerpt")

    async def model_title_saved() -> bool:
        return (await title_of(server, session_id))[1] == "model"

    scripted_model.release("reply")
    await wait_until(model_title_saved)
    await server.close()
