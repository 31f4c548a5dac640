"""Prices of model calls: the settings' `rates` first, then the rate card (genai-prices), loaded lazily."""

from __future__ import annotations

from collections.abc import Mapping

from harnez.pricing.card import CardProvider, card_prices, card_provider, card_version, nearest_models
from harnez.pricing.prices import PER, Prices, PriceSource, Tier, TokenPrices, settings_prices
from harnez.settings import Rate

__all__ = [
    "PER",
    "CardProvider",
    "PriceSource",
    "Prices",
    "Tier",
    "TokenPrices",
    "card_prices",
    "card_provider",
    "card_version",
    "nearest_models",
    "prices_for",
    "settings_prices",
]


def prices_for(rates: Mapping[str, Rate], provider: str, model: str, base_url: str) -> Prices | None:
    """A model's prices: settings' `rates` win; else the rate card's (which imports the card: call it
    from a thread on an event loop); None when neither prices it."""
    return settings_prices(rates, provider, model) or card_prices(provider, model, base_url)
