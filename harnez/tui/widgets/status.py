"""The session's title bar and status line: model, title, tokens, cost, task state, permission mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

PERMISSION_MODES = ("ask", "accept-edits", "read-only")
"""The permission modes Shift+Tab cycles through, in order."""


@dataclass(slots=True)
class Usage:
    """Tokens and cost summed over a session's usage and cost events."""

    input: int = 0
    output: int = 0
    usd: float | None = None
    unpriced: bool = False

    def add(self, kind: str, payload: dict[str, Any]) -> bool:
        """Count a usage or cost event; True when it changed the totals."""
        if kind == "usage":
            self.input += int(payload.get("input") or 0)
            self.output += int(payload.get("output") or 0)
            return True
        if kind == "cost":
            if payload.get("usd") is None:
                self.unpriced = True
            else:
                self.usd = (self.usd or 0.0) + float(payload["usd"])
            return True
        return False

    @property
    def cost_text(self) -> str:
        """The cost, blank when unknown or when any call was unpriced (never an invented $0.00)."""
        if self.unpriced or self.usd is None:
            return ""
        return f"${self.usd:.4f}" if self.usd < 0.01 else f"${self.usd:.2f}"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 10_000 else str(count)


class TitleBar(Static):
    """The session's title at the top of the screen."""

    DEFAULT_CSS = """
    TitleBar { dock: top; height: 1; padding: 0 1; background: $panel; color: $text; text-style: bold; }
    """

    title: reactive[str] = reactive("New session")
    """The displayed title (updated live by title-changed events and renames)."""

    def render(self) -> Content:
        return Content.assemble(("harnez", "dim"), ("  ", ""), self.title)


class StatusLine(Static):
    """One line at the bottom: model · title · tokens · cost · state · permission mode."""

    DEFAULT_CSS = """
    StatusLine { dock: bottom; height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    model: reactive[str] = reactive("")
    """The session's model ("no model" when none is set)."""
    title: reactive[str] = reactive("")
    """The session's title."""
    tokens_in: reactive[int] = reactive(0)
    """Input tokens summed over the session's usage events."""
    tokens_out: reactive[int] = reactive(0)
    """Output tokens summed over the session's usage events."""
    cost: reactive[str] = reactive("")
    """The session's cost as text; blank when unknown."""
    state: reactive[str] = reactive("idle")
    """The task state: idle, running, or running with queued prompts."""
    mode: reactive[str] = reactive("ask")
    """The permission mode (ask, accept-edits, read-only)."""

    def show_usage(self, usage: Usage) -> None:
        """Display the totals of a Usage."""
        self.tokens_in = usage.input
        self.tokens_out = usage.output
        self.cost = usage.cost_text

    def render(self) -> Content:
        parts: list[tuple[str, str] | str] = [(self.model or "no model", "bold")]
        if self.title:
            parts += [" · ", self.title[:40]]
        parts += [" · ", f"↑{_tokens(self.tokens_in)} ↓{_tokens(self.tokens_out)}"]
        if self.cost:
            parts += [" · ", self.cost]
        state_style = "bold" if self.state != "idle" else ""
        parts += [" · ", (self.state, state_style), " · ", ("mode: ", ""), (self.mode, "bold"),
                  ("  (shift+tab)", "dim")]
        return Content.assemble(*parts)
