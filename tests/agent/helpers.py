"""Shared pieces of the agent tests: settings at the scripted model, runs, approvals, request reading."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnez.events import StoredEvent
from harnez.server import Server
from harnez.settings import ModelInfo, PermissionSettings, ProviderSettings, Settings
from harnez.testing.scripted_model import ScriptedModel

PROVIDERS = {"chat": "openai-chat", "resp": "openai-responses", "anth": "anthropic-messages"}
WIRE_PROVIDER = {wire: name for name, wire in PROVIDERS.items()}


def make_settings(
    model: ScriptedModel,
    wire: str = "openai-chat",
    *,
    window: int | None = None,
    permissions: dict[str, Any] | None = None,
) -> Settings:
    """Three providers (one per wire) at the scripted model; the default model is on `wire`."""
    providers = {name: ProviderSettings(wire=w, base_url=model.base_url(w)) for name, w in PROVIDERS.items()}
    models = {"test-model": ModelInfo(context_window=window)} if window else {}
    return Settings(
        providers=providers,
        model=f"{WIRE_PROVIDER[wire]}/test-model",
        models=models,
        permissions=PermissionSettings(**(permissions or {})),
    )


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """A scripted turn that calls one tool."""
    return {
        "reply": [{"tool_call": {"name": name, "id": call_id, "arguments": arguments}}],
        "usage": {"input": 100, "output": 10},
    }


def answer(text: str, **turn: Any) -> dict[str, Any]:
    """A scripted turn that answers with text and stops."""
    return {"reply": [{"text": text}], "usage": {"input": 120, "output": 20}, **turn}


async def run_task(
    server: Server, workspace: Path, prompt: str, session_id: str | None = None, **options: Any
) -> tuple[str, Any]:
    """Submit a prompt (in a new session unless given) and wait for it; (session id, outcome)."""
    if session_id is None:
        session_id = server.create_session(workspace).id
    await server.submit(session_id, prompt, options=options)
    return session_id, await server.wait(session_id)


async def kinds(server: Server, session_id: str) -> list[str]:
    """The kinds of a session's events, without automatic naming's."""
    return [e.kind for e in await server.events_after(session_id) if e.kind != "title-changed"]


async def events(server: Server, session_id: str, kind: str) -> list[StoredEvent]:
    return [e for e in await server.events_after(session_id) if e.kind == kind]


async def first_event(
    server: Server, session_id: str, match: Callable[[StoredEvent], bool], after: int = 0
) -> StoredEvent:
    """The first stored or live event that matches (the test's timeout bounds the wait)."""
    async for event in server.subscribe(session_id, after):
        if match(event):
            return event
    raise AssertionError("the event stream ended before a matching event")


def answer_approvals(
    server: Server, session_id: str, verdicts: dict[str, tuple[str, str | None]]
) -> asyncio.Task[list[str]]:
    """Answer approval prompts as they come: tool name → (verdict, reason). Returns the answered ids."""

    async def answering() -> list[str]:
        answered: list[str] = []
        async for event in server.subscribe(session_id):
            if event.kind == "approval-required":
                verdict, reason = verdicts[event.body.name]
                server.answer_approval(session_id, event.body.call_id, verdict, reason)
                answered.append(event.body.call_id)
            if event.kind == "finished":
                return answered
        return answered

    return asyncio.create_task(answering())


def tool_outputs(body: dict[str, Any]) -> dict[str, str]:
    """call id → result text in a request body of any of the three wires."""
    found: dict[str, str] = {}
    for message in body.get("messages", []):  # chat completions and anthropic
        if message.get("role") == "tool":
            found[message["tool_call_id"]] = message["content"]
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    text = block["content"]
                    found[block["tool_use_id"]] = text if isinstance(text, str) else str(text)
    for item in body.get("input", []):  # responses
        if item.get("type") == "function_call_output":
            found[item["call_id"]] = item["output"]
    return found


def tool_call_ids(body: dict[str, Any]) -> list[str]:
    """Every tool call id the request's history holds, for any wire."""
    ids: list[str] = []
    for message in body.get("messages", []):
        ids += [call["id"] for call in message.get("tool_calls") or []]
        content = message.get("content")
        if isinstance(content, list):
            ids += [block["id"] for block in content if block.get("type") == "tool_use"]
    ids += [item["call_id"] for item in body.get("input", []) if item.get("type") == "function_call"]
    return ids


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages' text of a request, for any wire, in order."""
    texts: list[str] = []
    for message in body.get("messages", []) + body.get("input", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if b.get("type") in ("text", "input_text")]
    return texts


def process_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def process_gone(pid: int, within: float = 5.0) -> bool:
    """Whether a process is gone, or goes within `within` seconds: a SIGKILL sent to a process that
    is not running at that moment takes effect when it is next scheduled, which on a loaded
    machine can be after the sender's next line."""
    deadline = time.monotonic() + within
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def kill_quietly(pid: int) -> None:
    """SIGKILL a process this test started, if it still runs."""
    if process_alive(pid):
        os.kill(pid, 9)
