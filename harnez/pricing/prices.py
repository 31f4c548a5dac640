"""What a model costs: US dollars per million tokens of each kind, tiers by prompt size, and the origin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harnez.settings import Rate

PER = 1_000_000
"""Prices are per this many tokens (the unit of settings' `rates` and of the rate card)."""

PriceSource = Literal["settings", "card"]


@dataclass(frozen=True, slots=True)
class TokenPrices:
    """Dollars per million tokens; a cache price of None means the input price applies."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def to_json(self) -> dict[str, float | None]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


@dataclass(frozen=True, slots=True)
class Tier:
    """Prices for a call whose prompt (input and cache tokens together) holds more than `above` tokens."""

    above: int
    prices: TokenPrices


@dataclass(frozen=True, slots=True)
class Prices:
    """A model's prices and where they came from: a settings `rates` key, or the rate card's entry."""

    source: PriceSource
    key: str
    """The settings key that matched, or the card's `<provider>/<model id>`."""
    base: TokenPrices
    tiers: tuple[Tier, ...] = ()
    """Ascending by `above`; the last one the prompt exceeds applies to every token of the call."""
    card: str | None = None
    """The card's version (`genai-prices 0.2.3`) when the card priced the model."""

    def at(self, prompt_tokens: int) -> TokenPrices:
        """The prices for a call with this many prompt tokens."""
        applied = self.base
        for tier in self.tiers:
            if prompt_tokens > tier.above:
                applied = tier.prices
        return applied

    def cost(
        self,
        input: int | None,
        output: int | None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> float | None:
        """The cost of one call in US dollars; None (never 0) when no tokens were reported.

        `input` excludes cache reads and writes, which use their own prices (the input price when
        there is none). Reasoning tokens are part of `output` and are not counted twice.
        """
        if input is None and output is None:
            return None
        prices = self.at((input or 0) + (cache_read or 0) + (cache_write or 0))
        read = prices.input if prices.cache_read is None else prices.cache_read
        write = prices.input if prices.cache_write is None else prices.cache_write
        total = (
            (input or 0) * prices.input
            + (output or 0) * prices.output
            + (cache_read or 0) * read
            + (cache_write or 0) * write
        )
        return total / PER

    def tiers_json(self) -> list[dict[str, Any]]:
        """The tiers as the `rates` event lists them."""
        return [{"above": tier.above, **tier.prices.to_json()} for tier in self.tiers]


def settings_prices(rates: Mapping[str, Rate], provider: str, model: str) -> Prices | None:
    """The settings' price of a model: `rates["<provider>/<model>"]`, else `rates["<model>"]`."""
    for key in (f"{provider}/{model}", model):
        rate = rates.get(key)
        if rate is not None:
            base = TokenPrices(rate.input, rate.output, rate.cache_read, rate.cache_write)
            return Prices("settings", key, base)
    return None
