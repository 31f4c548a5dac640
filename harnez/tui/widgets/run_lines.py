"""Transcript lines for the headless part's events: the prices a task's costs use, a refused program."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harnez import events as ev


def rates_line(body: ev.Rates) -> str | None:
    """`Prices for anthropic/claude-sonnet-4-5 (card genai-prices 0.2.3): $3 in · $15 out per million
    tokens`; None for an unpriced model (the status line says "unpriced" beside the cost)."""
    if body.source is None:
        return None
    origin = f"card {body.card}" if body.source == "card" else f"settings rates.{body.key}"
    prices = [f"${_amount(body.input)} in", f"${_amount(body.output)} out"]
    if body.cache_read is not None:
        prices.append(f"${_amount(body.cache_read)} cached")
    tiers = f"; more above {body.tiers[0]['above']:,} tokens" if body.tiers else ""
    return f"Prices for {body.model} ({origin}): {' · '.join(prices)} per million tokens{tiers}."


def program_refused_line(body: ev.ProgramRefused) -> str:
    """`⛔ rm is not declared (git, pytest): the shell call ran nothing`, or why it could not be checked."""
    declared = ", ".join(body.declared)
    if body.program is None:
        return f"⛔ Shell call not run: its command line could not be checked against the declared programs ({declared})."
    return f"⛔ Shell call not run: {body.program} is not a declared program ({declared})."


def _amount(price: float | None) -> str:
    return "?" if price is None else f"{price:g}"
