"""A session's running totals — tokens, cost, context in use — folded from its stored events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from harnez.events import EventBody, Usage


class ChildSpend(Protocol):
    """A child session's tokens and cost as its parent takes them in (a `delegate-finished` event, or
    the rolled-up totals of the store's delegations)."""

    @property
    def input(self) -> int: ...
    @property
    def output(self) -> int: ...
    @property
    def usd(self) -> float | None: ...
    @property
    def calls(self) -> int: ...
    @property
    def reported(self) -> int: ...
    @property
    def unpriced(self) -> bool: ...


@dataclass(slots=True)
class SessionTotals:
    """Tokens and cost summed over a session's `usage` and `cost` events (and its child sessions', from
    `delegate-finished`: docs/agents.md), and the context in use.

    The cost is None when nothing was priced, and `unpriced` is set as soon as one call had no
    rate: a total that silently left calls out would be wrong, so clients show no cost then.
    """

    input: int = 0
    output: int = 0
    usd: float | None = None
    unpriced: bool = False
    calls: int = 0
    """Model calls made (each has a `cost` event, priced or not)."""
    reported: int = 0
    """Calls whose provider reported their tokens (a `usage` event with figures)."""
    context_tokens: int | None = None
    """The last call's prompt plus its answer: what the next call starts from."""
    context_window: int | None = None
    """The window of the model the last task ran (from its `started` event)."""

    def add(self, body: EventBody) -> bool:
        """Fold in one event; True when it changed the totals."""
        # Imported here: the session screen builds its totals before its first frame, which does not
        # wait for the event vocabulary (~100 ms of dataclass set-up).
        from harnez.events import Cost, DelegateFinished, Started, Usage

        match body:
            case Usage():
                self.input += body.input or 0
                self.output += body.output or 0
                self.reported += body.input is not None or body.output is not None
                self.context_tokens = context_tokens(body)
                return True
            case Cost():
                self.calls += 1
                if body.usd is None:
                    self.unpriced = True
                else:
                    self.usd = (self.usd or 0.0) + body.usd
                return True
            case Started(context_window=window) if window:
                self.context_window = window
                return True
            case DelegateFinished():
                self.add_child(body)
                return True
        return False

    def add_child(self, child: ChildSpend) -> None:
        """Add what child sessions spent (the context in use stays this session's own)."""
        self.input += child.input
        self.output += child.output
        self.calls += child.calls
        self.reported += child.reported
        self.unpriced = self.unpriced or child.unpriced
        if child.usd is not None:
            self.usd = (self.usd or 0.0) + child.usd

    @property
    def tokens_text(self) -> str:
        """`↑12k ↓3.4k`; `+?` when some calls reported no usage; `tokens unknown` when none did; blank
        before the first call. A provider that says nothing never shows as an invented zero."""
        if self.calls == 0 and self.reported == 0:
            return ""
        if self.reported == 0:
            return "tokens unknown"
        shown = f"↑{tokens_text(self.input)} ↓{tokens_text(self.output)}"
        return shown + (" +?" if self.reported < self.calls else "")

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


def context_tokens(usage: Usage) -> int:
    """What a call leaves in the context: its prompt (cached parts included) plus its answer; for a
    call of several requests (continued after pauses), its last request's (`context`), which the
    sum of its requests would overstate."""
    if usage.context is not None:
        return usage.context
    return sum(value or 0 for value in (usage.input, usage.cache_read, usage.cache_write, usage.output))


def tokens_text(count: int) -> str:
    """A token count for a narrow status line: 950, 1.2k, 32k, 200k, 1M."""
    for scale, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= scale * 0.99995:
            value = count / scale
            shown = f"{value:.0f}" if value >= 99.95 else f"{value:.1f}".removesuffix(".0")
            return shown + suffix
    return str(count)
