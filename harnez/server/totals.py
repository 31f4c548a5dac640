"""A session's running totals — tokens, cost, context in use — folded from its stored events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

@dataclass(slots=True)
class SessionTotals:
    """Tokens and cost summed over a session's `usage` and `cost` events, and the context in use.

    The cost is None when nothing was priced, and `unpriced` is set as soon as one call had no
    rate: a total that silently left calls out would be wrong, so clients show no cost then.
    """

    input: int = 0
    output: int = 0
    usd: float | None = None
    unpriced: bool = False
    context_tokens: int | None = None
    """The last call's prompt plus its answer: what the next call starts from."""
    context_window: int | None = None
    """The window of the model the last task ran (from its `started` event)."""

    def add(self, kind: str, payload: dict[str, Any]) -> bool:
        """Fold in one event; True when it changed the totals."""
        if kind == "usage":
            self.input += int(payload.get("input") or 0)
            self.output += int(payload.get("output") or 0)
            self.context_tokens = context_tokens(payload)
            return True
        if kind == "cost":
            if payload.get("usd") is None:
                self.unpriced = True
            else:
                self.usd = (self.usd or 0.0) + float(payload["usd"])
            return True
        if kind == "started" and payload.get("context_window"):
            self.context_window = int(payload["context_window"])
            return True
        return False

    @property
    def cost_text(self) -> str:
        """The cost, blank when unknown or when any call was unpriced (never an invented $0.00)."""
        if self.unpriced or self.usd is None:
            return ""
        return f"${self.usd:.4f}" if self.usd < 0.01 else f"${self.usd:.2f}"

    @property
    def context_text(self) -> str:
        """`12.3k/200k (6%)`, or blank before the first call."""
        if self.context_tokens is None:
            return ""
        if not self.context_window:
            return tokens_text(self.context_tokens)
        share = 100 * self.context_tokens / self.context_window
        return f"{tokens_text(self.context_tokens)}/{tokens_text(self.context_window)} ({share:.0f}%)"


def context_tokens(usage: dict[str, Any]) -> int:
    """What a call leaves in the context: its prompt (cached parts included) plus its answer."""
    return sum(int(usage.get(name) or 0) for name in ("input", "cache_read", "cache_write", "output"))


def tokens_text(count: int) -> str:
    """A token count for a narrow status line: 950, 1.2k, 32k, 200k, 1M."""
    for scale, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= scale * 0.99995:
            value = count / scale
            shown = f"{value:.0f}" if value >= 99.95 else f"{value:.1f}".removesuffix(".0")
            return shown + suffix
    return str(count)
