"""The rate card (genai-prices) prices the common hosted models; settings' rates override it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harnez.pricing import card_provider, card_version, nearest_models, prices_for
from harnez.pricing.card import CARD_PROVIDER_IDS, card_cannot_know
from harnez.settings import Rate

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"


@pytest.mark.parametrize(
    ("provider", "model", "base_url", "key"),
    [
        ("anthropic", "claude-sonnet-4-5", ANTHROPIC, "anthropic/claude-sonnet-4-5"),
        ("work", "claude-sonnet-4-5-20250929", ANTHROPIC, "anthropic/claude-sonnet-4-5"),
        ("openai", "gpt-5", OPENAI, "openai/gpt-5"),
        ("openai", "gpt-4o-mini", "http://127.0.0.1:9/v1", "openai/gpt-4o-mini"),
    ],
)
def test_the_card_prices_hosted_models_by_endpoint_or_by_provider_name(
    provider: str, model: str, base_url: str, key: str
) -> None:
    found = prices_for({}, provider, model, base_url)
    assert found is not None and found.source == "card" and found.key == key
    assert found.base.input > 0 and found.base.output > found.base.input
    assert found.card == card_version() and card_version().startswith("genai-prices ")


def test_a_local_server_and_an_unknown_model_are_unpriced() -> None:
    assert prices_for({}, "local", "qwen3:8b", "http://127.0.0.1:11434/v1") is None
    assert prices_for({}, "openai", "gpt-99-imaginary", OPENAI) is None


def test_settings_rates_override_the_card_by_full_reference_then_by_bare_id() -> None:
    rates = {"anthropic/claude-sonnet-4-5": Rate(input=1.0, output=2.0), "gpt-5": Rate(input=0.5, output=4.0)}
    mine = prices_for(rates, "anthropic", "claude-sonnet-4-5", ANTHROPIC)
    assert mine is not None and (mine.source, mine.key, mine.base.input, mine.tiers) == (
        "settings",
        "anthropic/claude-sonnet-4-5",
        1.0,
        (),
    )
    bare = prices_for(rates, "openai", "gpt-5", OPENAI)
    assert bare is not None and (bare.source, bare.key, bare.base.output) == ("settings", "gpt-5", 4.0)


def test_cost_uses_cache_prices_and_a_tier_above_its_prompt_size() -> None:
    card = prices_for({}, "anthropic", "claude-sonnet-4-5", ANTHROPIC)
    assert card is not None and card.tiers, "claude-sonnet-4-5 has long-context prices on the card"
    tier = card.tiers[0]
    small = card.cost(1_000, 100, cache_read=500, cache_write=200)
    base = card.base
    assert small == pytest.approx(
        (1_000 * base.input + 100 * base.output + 500 * base.cache_read + 200 * base.cache_write) / 1e6
    )
    big = card.cost(tier.above + 1, 100)
    assert big == pytest.approx(((tier.above + 1) * tier.prices.input + 100 * tier.prices.output) / 1e6)
    assert card.cost(None, None) is None and card.cost(0, 0) == 0.0


def test_an_unpriced_model_is_told_what_the_card_prices_for_its_provider_closest_first() -> None:
    card = card_provider("anthropic", ANTHROPIC)
    assert card is not None and card.id == "anthropic" and "claude-sonnet-4-5" in card.models
    listed = nearest_models(card, "claude-sonnet-4-9")
    assert listed[0].startswith("claude-sonnet") and len(listed) <= 20
    assert card_provider("local", "http://127.0.0.1:11434/v1") is None


def test_starting_harnez_does_not_load_the_rate_card() -> None:
    """The card's import costs ~0.2 s: the run and app start-up paths leave it for the first price."""
    code = (
        "import sys, harnez.cli, harnez.headless, harnez.server.factory, harnez.agent.work;"
        "print('genai_prices' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "False"


def test_the_card_provider_ids_known_without_the_card_are_the_installed_cards() -> None:
    from genai_prices import data_snapshot

    assert {provider.id for provider in data_snapshot.get_snapshot().providers} == CARD_PROVIDER_IDS


@pytest.mark.parametrize(
    ("provider", "base_url", "cannot_know"),
    [
        ("local", "http://127.0.0.1:11434/v1", True),
        ("Ollama", "http://localhost:11434/v1", True),
        ("lab", "http://[::1]:8080/v1", True),
        ("gpu-box", "http://192.168.1.20:8000/v1", True),
        ("dev", "http://llm.localhost:8000", True),
        ("openai", "http://127.0.0.1:9/v1", False),
        ("OpenRouter", "http://localhost:4000", False),
        ("work", ANTHROPIC, False),
        ("local", "https://llm.example.com/v1", False),
    ],
)
def test_a_local_server_with_a_name_the_card_lacks_is_known_unpriced_without_the_card(
    provider: str, base_url: str, cannot_know: bool
) -> None:
    assert card_cannot_know(provider, base_url) is cannot_know


def test_pricing_a_local_model_does_not_load_the_rate_card() -> None:
    """The `unpriced-model` warning of a local server is decided without the card's ~0.5 s import."""
    code = (
        "import sys; from harnez.pricing import prices_for, card_provider;"
        "print(prices_for({}, 'local', 'qwen3:8b', 'http://127.0.0.1:11434/v1'),"
        " card_provider('local', 'http://127.0.0.1:11434/v1'), 'genai_prices' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "None None False"
