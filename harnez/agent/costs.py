"""A task's prices: looked up once (settings, else the rate card, off the event loop), told once
(`rates`, before the first `cost`), and applied to each model call's usage."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from harnez import events as ev
from harnez.pricing import Prices, card_provider, nearest_models, prices_for, settings_prices
from harnez.redaction import public_url
from harnez.settings import Rate
from harnez.wires import ResolvedModel, Usage


@dataclass(slots=True)
class ModelPrices:
    """The prices of the model a task runs, and why there are none when it is unpriced."""

    model: ResolvedModel
    rates: dict[str, Rate]
    prices: Prices | None = None
    unpriced_reason: str = ""
    looked_up: bool = False
    told: bool = False
    """Whether the task's `rates` event was emitted."""

    @property
    def ref(self) -> str:
        return f"{self.model.provider}/{self.model.model}"

    async def look_up(self) -> None:
        """Find the prices without blocking the loop: the rate card's first use imports it (~0.2 s)."""
        if self.looked_up:
            return
        if settings_prices(self.rates, self.model.provider, self.model.model) is not None:
            self.look_up_now()
        else:
            await asyncio.to_thread(self.look_up_now)

    def look_up_now(self) -> None:
        """Find the prices here (on a loop only when `look_up` could not run first: a cancelled call)."""
        if self.looked_up:
            return
        model = self.model
        self.prices = prices_for(self.rates, model.provider, model.model, model.endpoint.base_url)
        if self.prices is None:
            self.unpriced_reason = unpriced_message(model)
        self.looked_up = True

    def cost(self, usage: Usage | None) -> float | None:
        """The cost of a call's usage; None when unpriced or when nothing was reported."""
        self.look_up_now()
        if usage is None or self.prices is None:
            return None
        return self.prices.cost(usage.input, usage.output, usage.cache_read, usage.cache_write)

    def rates_event(self) -> ev.Rates:
        """The `rates` event: which prices the task's costs use (all null when unpriced)."""
        self.look_up_now()
        found = self.prices
        if found is None:
            return ev.Rates(model=self.ref)
        return ev.Rates(
            model=self.ref,
            source=found.source,
            key=found.key,
            **found.base.to_json(),
            tiers=found.tiers_json(),
            card=found.card,
        )


def unpriced_message(model: ResolvedModel) -> str:
    """Why a model has no price, and what the rate card does price for its provider."""
    ref = f"{model.provider}/{model.model}"
    advice = f"add `{ref}` (or `{model.model}`) under `rates` in settings.json to see costs."
    card = card_provider(model.provider, model.endpoint.base_url)
    if card is None:
        return (
            f"{ref} has no price, so its cost is unknown: the rate card has no provider at "
            f"{public_url(model.endpoint.base_url)} or named {model.provider!r}; {advice}"
        )
    listed = nearest_models(card, model.model)
    more = len(card.models) - len(listed)
    names = ", ".join(listed) + (f" and {more} more" if more > 0 else "")
    return (
        f"{ref} has no price, so its cost is unknown: the rate card prices these {card.id} models "
        f"(closest first): {names}. Use one of them, or {advice}"
    )
