"""The rate card: prices of common hosted models from the maintained `genai-prices` package.

The package's data is large (importing it takes ~0.2 s), so nothing here imports it until a model
the settings do not price needs a price, and callers on an event loop ask from a thread. Answers
are kept for the life of the process.
"""

from __future__ import annotations

import difflib
import functools
import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from harnez.pricing.prices import Prices, Tier, TokenPrices

if TYPE_CHECKING:
    from genai_prices.data_snapshot import DataSnapshot
    from genai_prices.types import ModelPrice, Provider

PRICE_KEYS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")
"""The card's per-million-token prices Harnez uses, in the order of `TokenPrices`' fields."""
LISTED = 20
"""Model ids a warning names at most (OpenRouter alone prices hundreds)."""
CARD_PROVIDER_IDS = frozenset(
    [
        "anthropic",
        "arcee",
        "avian",
        "aws",
        "azure",
        "baseten",
        "cerebras",
        "cloudflare",
        "cohere",
        "cursor",
        "databricks",
        "deepseek",
        "doubleword",
        "elevenlabs",
        "fireworks",
        "github-copilot",
        "google",
        "groq",
        "huggingface_cerebras",
        "huggingface_fireworks-ai",
        "huggingface_groq",
        "huggingface_hyperbolic",
        "huggingface_nebius",
        "huggingface_novita",
        "huggingface_nscale",
        "huggingface_ovhcloud",
        "huggingface_publicai",
        "huggingface_sambanova",
        "huggingface_together",
        "meta",
        "minimax",
        "mistral",
        "modal",
        "moonshotai",
        "novita",
        "openai",
        "openai-decisions",
        "openrouter",
        "ovhcloud",
        "perplexity",
        "quicksilverpro",
        "together",
        "typesafe",
        "voyageai",
        "x-ai",
        "zai",
        "zhipuai",
    ]
)
"""The card's provider ids (genai-prices 0.2.3), known without loading it; a test compares them
with the installed card's, so a card that adds a provider fails the suite until they are updated."""


@dataclass(frozen=True, slots=True)
class CardProvider:
    """The card's provider that serves a Harnez provider, and the model ids it prices."""

    id: str
    models: tuple[str, ...]


@functools.cache
def _snapshot() -> DataSnapshot:
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot()


@functools.cache
def card_version() -> str:
    """`genai-prices <version>`: which card priced a model."""
    import genai_prices

    return f"genai-prices {genai_prices.__version__}"


def card_cannot_know(provider: str, base_url: str) -> bool:
    """Whether the card surely has no provider for this endpoint, told without loading it (~0.5 s):
    it finds providers by their API's host name, then by id, and a local server (localhost, an IP
    address) has no such host name; its provider name must then be none of the card's ids."""
    host = urlsplit(base_url).hostname or ""
    if host != "localhost" and not host.endswith(".localhost"):
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
    return provider.lower() not in CARD_PROVIDER_IDS


def _provider(provider: str, base_url: str) -> Provider | None:
    """The card's provider for an endpoint: by its URL (api.openai.com…), else by the same name."""
    if card_cannot_know(provider, base_url):
        return None
    snapshot = _snapshot()
    try:
        return snapshot.find_provider(None, None, base_url)
    except LookupError:
        pass
    return next((p for p in snapshot.providers if p.id == provider.lower()), None)


@functools.cache
def card_prices(provider: str, model: str, base_url: str) -> Prices | None:
    """The card's prices of `model` served by `provider` at `base_url`, or None when it has none."""
    found = _provider(provider, base_url)
    if found is None:
        return None
    info = found.find_model(model, all_providers=_snapshot().providers)
    if info is None:
        return None
    prices = _token_prices(info.get_prices(datetime.now(UTC)))
    if prices is None:
        return None
    base, tiers = prices
    return Prices("card", f"{found.id}/{info.id}", base, tiers, card_version())


@functools.cache
def card_provider(provider: str, base_url: str) -> CardProvider | None:
    """What the card prices for this provider (current models only), for the unpriced warning."""
    found = _provider(provider, base_url)
    if found is None:
        return None
    return CardProvider(found.id, tuple(m.id for m in found.models if not m.deprecated))


def nearest_models(card: CardProvider, model: str) -> list[str]:
    """The card's model ids to name beside an unpriced one: the closest first, at most LISTED."""
    close = difflib.get_close_matches(model.lower(), card.models, n=LISTED, cutoff=0.5)
    return (close + [m for m in sorted(card.models) if m not in close])[:LISTED]


def _token_prices(price: ModelPrice) -> tuple[TokenPrices, tuple[Tier, ...]] | None:
    """The card's input, output and cache prices with their tiers; None when it prices no tokens."""
    values = [getattr(price, key) for key in PRICE_KEYS]
    if values[0] is None or values[1] is None:
        return None  # priced per request, per image or per second: not a token price
    thresholds = sorted({tier.start for value in values for tier in getattr(value, "tiers", ())})
    base = TokenPrices(*(_at(value, None) for value in values))  # type: ignore[arg-type]
    tiers = tuple(Tier(start, TokenPrices(*(_at(v, start) for v in values))) for start in thresholds)  # type: ignore[arg-type]
    return base, tiers


def _at(value: Any, above: int | None) -> float | None:
    """One price (a Decimal, or tiered) for a prompt just over `above` tokens (None: the base)."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return float(value)
    applied = value.base
    for tier in value.tiers:
        if above is not None and tier.start <= above:
            applied = tier.price
    return float(applied)
