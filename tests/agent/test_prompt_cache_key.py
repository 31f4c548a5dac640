"""OpenAI's `prompt_cache_key`: one per session, sent only to api.openai.com (compatible servers may
refuse a field they do not know)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.wires import WIRES, Endpoint, openai_chat, openai_responses
from harnez.wires.catalogue import UNKNOWN_MODEL, known_spec
from tests.agent.helpers import answer, make_settings, run_task
from tests.wires.helpers import request

OPENAI_WIRES = ("openai-chat", "openai-responses")


@pytest.mark.parametrize("wire", OPENAI_WIRES)
def test_the_key_goes_to_openai_only(wire: str) -> None:
    for base_url, sent in (
        ("https://api.openai.com/v1", True),
        ("http://127.0.0.1:11434/v1", False),
        ("https://proxy.example/v1?upstream=api.openai.com", False),
    ):
        built = WIRES[wire](Endpoint("p", wire, base_url, None, None))  # type: ignore[arg-type]
        body = built.body(
            request(cache_key="harnez-abc", model="gpt-5"), known_spec("gpt-5") or UNKNOWN_MODEL
        )
        assert body.get("prompt_cache_key") == ("harnez-abc" if sent else None), base_url


@pytest.mark.parametrize("wire", OPENAI_WIRES)
async def test_every_request_of_a_session_carries_its_key_and_another_session_another(
    scripted_model, open_server, workspace: Path, monkeypatch, wire: str
) -> None:
    for module in (openai_chat, openai_responses):  # the scripted model's loopback URL taken for OpenAI's
        monkeypatch.setattr(module, "is_openai", lambda base_url: "127.0.0.1" in base_url)
    scripted_model.add(answer("one"), answer("two"), answer("three"))
    server = await open_server(make_settings(scripted_model, wire))
    session_id, _ = await run_task(server, workspace, "first")
    await run_task(server, workspace, "second", session_id)
    other, _ = await run_task(server, workspace, "elsewhere")
    keys = [r.body.get("prompt_cache_key") for r in scripted_model.requests]
    assert keys[0] and keys[0] == keys[1] and keys[2] and keys[2] != keys[0]
    assert session_id not in keys[0] and other not in keys[2]  # a digest, not the id itself


def test_prompt_cache_off_leaves_the_key_out() -> None:
    built = WIRES["openai-chat"](
        Endpoint("p", "openai-chat", "https://api.openai.com/v1", None, None, prompt_cache=False)
    )  # type: ignore[arg-type]
    body = built.body(request(cache_key="harnez-abc", model="gpt-5"), known_spec("gpt-5") or UNKNOWN_MODEL)
    assert "prompt_cache_key" not in body
