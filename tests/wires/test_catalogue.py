"""Providers, models, thinking levels and cost."""

from __future__ import annotations

import pytest

from harnez.errors import ModelConfigError
from harnez.settings import ModelInfo, ProviderSettings, Rate, Settings, parse_model_ref
from harnez.wires import Usage, cost_of, resolve_model, resolve_ref
from harnez.wires.catalogue import UNKNOWN_MODEL, clamp_thinking, known_spec

SETTINGS = Settings(
    providers={
        "anthropic": ProviderSettings(
            wire="anthropic-messages",
            base_url="https://api.anthropic.com/",
            api_key_env="HARNEZ_TEST_ANTHROPIC_KEY",
        ),
        "local": ProviderSettings(wire="openai-chat", base_url="http://localhost:11434/v1"),
    },
    models={"local/my-finetune": ModelInfo(context_window=8_192, thinking=True)},
    rates={
        "anthropic/claude-sonnet-4-5": Rate(input=3, output=15, cache_read=0.3, cache_write=3.75),
        "llama3.1": Rate(input=0.1, output=0.2),
    },
)


def test_a_provider_resolves_to_its_wire_url_and_key(monkeypatch) -> None:
    monkeypatch.setenv("HARNEZ_TEST_ANTHROPIC_KEY", "sk-ant-xyz")
    resolved = resolve_model(SETTINGS, "anthropic", "claude-sonnet-4-5-20250929", "high")
    assert resolved.endpoint.wire == "anthropic-messages"
    assert resolved.endpoint.base_url == "https://api.anthropic.com"
    assert resolved.endpoint.api_key == "sk-ant-xyz" and "sk-ant-xyz" not in repr(resolved)
    assert resolved.spec.context_window == 200_000 and resolved.thinking == "high"
    assert resolved.rate is None  # priced under the undated id only


def test_a_missing_key_variable_is_named(monkeypatch) -> None:
    monkeypatch.delenv("HARNEZ_TEST_ANTHROPIC_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="set the environment variable HARNEZ_TEST_ANTHROPIC_KEY"):
        resolve_model(SETTINGS, "anthropic", "claude-sonnet-4-5")


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ModelConfigError, match=r"unknown provider 'openai'.*known: anthropic, local"):
        resolve_model(SETTINGS, "openai", "gpt-5")


def test_a_keyless_local_model_gets_conservative_defaults_and_no_thinking() -> None:
    resolved = resolve_model(SETTINGS, "local", "mystery-7b", "max")
    assert resolved.endpoint.api_key is None
    assert resolved.spec == UNKNOWN_MODEL and resolved.thinking == "off"


def test_settings_override_the_catalogue() -> None:
    resolved = resolve_model(SETTINGS, "local", "my-finetune", "xhigh")
    assert resolved.spec.context_window == 8_192 and resolved.spec.max_output == UNKNOWN_MODEL.max_output
    assert resolved.thinking == "high"


@pytest.mark.parametrize(
    ("model", "asked", "got"),
    [
        ("gpt-5", "max", "high"),
        ("gpt-5", "minimal", "minimal"),
        ("o3", "minimal", "low"),
        ("claude-opus-4-1", "max", "max"),
        ("gpt-4o", "high", "off"),
        ("o3", "off", "off"),
    ],
)
def test_thinking_levels_are_clamped_to_what_the_model_supports(model, asked, got) -> None:
    spec = known_spec(model)
    assert spec is not None and clamp_thinking(spec, asked) == got


def test_an_unknown_thinking_level_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="unknown thinking level 'extreme'"):
        clamp_thinking(UNKNOWN_MODEL, "extreme")


def test_cost_uses_each_price_and_cache_falls_back_to_the_input_price() -> None:
    usage = Usage(
        input=1_000_000, output=100_000, cache_read=2_000_000, cache_write=400_000, reasoning=50_000
    )
    assert cost_of(usage, SETTINGS.rates["anthropic/claude-sonnet-4-5"]) == pytest.approx(3 + 1.5 + 0.6 + 1.5)
    assert cost_of(Usage(input=0, output=0, cache_read=1_000_000), Rate(input=2, output=8)) == pytest.approx(
        2
    )


def test_an_unpriced_model_has_no_cost_never_zero() -> None:
    assert cost_of(Usage(input=10, output=10), None) is None
    assert cost_of(Usage(), Rate(input=1, output=1)) is None
    assert cost_of(Usage(input=0, output=0), Rate(input=1, output=1)) == 0


def test_a_parsed_reference_resolves_with_its_level_and_its_price() -> None:
    resolved = resolve_ref(SETTINGS, parse_model_ref("local/llama3.1:8b"))
    assert (resolved.model, resolved.thinking, resolved.rate) == ("llama3.1:8b", "off", None)
    priced = resolve_ref(SETTINGS, parse_model_ref("local/llama3.1:high"))
    assert (priced.model, priced.thinking, priced.rate) == ("llama3.1", "off", Rate(input=0.1, output=0.2))
