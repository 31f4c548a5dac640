"""Resolving a naming model without the network: borrowing rules, thinking clamp, output budget."""

from __future__ import annotations

import pytest

from harnez.errors import ModelConfigError
from harnez.settings import ModelRef, ProviderSettings, Settings, parse_model_ref
from harnez.titles.model import TITLE_MAX_OUTPUT, resolve_naming_model, title_max_output
from harnez.titles.policy import usable_title

PROVIDERS = {
    "vllm": ProviderSettings(wire="openai-responses", base_url="http://127.0.0.1:9/v1"),
    "claude": ProviderSettings(wire="anthropic-messages", base_url="http://127.0.0.1:9"),
}
SETTINGS = Settings(providers=PROVIDERS)


def test_an_unconfigured_provider_borrows_an_openai_responses_session_endpoint() -> None:
    resolved = resolve_naming_model(
        SETTINGS, parse_model_ref("other/org/qwen3-4b:max"), ModelRef("vllm", "big")
    )
    assert (
        resolved.endpoint.base_url == "http://127.0.0.1:9/v1" and resolved.endpoint.wire == "openai-responses"
    )
    assert resolved.model == "org/qwen3-4b" and resolved.thinking == "high"
    assert title_max_output(resolved) > TITLE_MAX_OUTPUT


@pytest.mark.parametrize("session", [ModelRef("claude", "claude-sonnet-4-5"), ModelRef("nowhere", "x"), None])
def test_borrowing_is_refused_unless_the_session_is_openai_compatible(session: ModelRef | None) -> None:
    with pytest.raises(ModelConfigError, match="unsupported"):
        resolve_naming_model(SETTINGS, parse_model_ref("other/llama3.2"), session)


def test_a_configured_provider_is_used_as_configured_and_clamped() -> None:
    resolved = resolve_naming_model(
        SETTINGS, parse_model_ref("claude/claude-3-5-haiku:high"), ModelRef("vllm", "m")
    )
    assert resolved.endpoint.wire == "anthropic-messages" and resolved.thinking == "off"
    assert title_max_output(resolved) == TITLE_MAX_OUTPUT


@pytest.mark.parametrize(
    ("reply", "title"),
    [
        ('Title: "Fix the WAL race."\n\nBecause…', "Fix the WAL race"),
        ("**Resume picker speed**", "Resume picker speed"),
        ("", None),
        ("\n \n", None),
        ("x" * 81, None),
        ("zero\u200bwidth", None),
        ("bell\x07", None),
    ],
)
def test_usable_title(reply: str, title: str | None) -> None:
    assert usable_title(reply) == title
