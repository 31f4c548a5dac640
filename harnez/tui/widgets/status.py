"""The session's title bar and status line: model, thinking, title, tokens, context, cost, state, mode."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from harnez.server.totals import SessionTotals


class TitleBar(Static):
    """The session's title at the top of the screen."""

    # One line, cut with an ellipsis: wrapped, a title of one long word (a path) went wholly to the
    # hidden second line and the bar showed only "harnez".
    DEFAULT_CSS = """
    TitleBar {
        dock: top; height: 1; padding: 0 1; background: $panel; color: $text; text-style: bold;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    title: reactive[str] = reactive("New session")
    """The displayed title (updated live by title-changed events and renames)."""

    def render(self) -> Content:
        return Content.assemble(("harnez", "dim"), ("  ", ""), self.title)


class StatusLine(Static):
    """One line at the bottom: model · thinking · title · tokens · context · cost · state · permission mode."""

    DEFAULT_CSS = """
    StatusLine { dock: bottom; height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    model: reactive[str] = reactive("")
    """The session's model, `<provider>/<model>[:<thinking>]` ("no model" when none is set)."""
    title: reactive[str] = reactive("")
    """The session's title."""
    tokens_in: reactive[int] = reactive(0)
    """Input tokens summed over the session's usage events."""
    tokens_out: reactive[int] = reactive(0)
    """Output tokens summed over the session's usage events."""
    tokens: reactive[str] = reactive("")
    """The tokens as shown: `↑… ↓…`, marked when some calls reported none, blank before any call."""
    context: reactive[str] = reactive("")
    """The context in use against the model's window, as text; blank before the first call."""
    cost: reactive[str] = reactive("")
    """The session's cost as text; blank when unknown or unpriced."""
    unpriced: reactive[bool] = reactive(False)
    """Whether a call had no rate (the cost is then left blank and marked unpriced)."""
    state: reactive[str] = reactive("idle")
    """The task state: idle, running, or running with queued prompts."""
    mode: reactive[str] = reactive("ask")
    """The permission mode (ask, accept-edits, read-only)."""

    def show_totals(self, totals: SessionTotals) -> None:
        """Display a session's totals."""
        self.tokens_in = totals.input
        self.tokens_out = totals.output
        self.tokens = totals.tokens_text
        self.context = totals.context_text
        self.cost = totals.cost_text
        self.unpriced = totals.unpriced

    def render(self) -> Content:
        name, _, thinking = self.model.partition(":")
        parts: dict[str, list[tuple[str, str] | str]] = {"model": [(name or "no model", "bold")]}
        if thinking and thinking != "off":
            parts["thinking"] = [" ", (f"thinking {thinking}", "italic")]
        if self.title:
            parts["title"] = [" · ", self.title[:40]]
        if self.tokens:
            parts["tokens"] = [" · ", self.tokens if self.tokens[0] == "↑" else (self.tokens, "dim")]
        if self.context:
            parts["context"] = [" · ", f"ctx {self.context}"]
        if self.cost or self.unpriced:
            parts["cost"] = [" · ", self.cost or ("unpriced", "dim")]
        parts["state"] = [" · ", (self.state, "bold" if self.state != "idle" else "")]
        parts["mode"] = [" · mode: ", (self.mode, "bold")]
        parts["hint"] = [("  (shift+tab)", "dim")]
        # A narrow terminal drops the least useful parts first; model, state and mode always stay.
        width = self.content_region.width or 10_000
        for name in ("hint", "title", "context", "thinking", "tokens", "cost"):
            if self._length(parts) <= width:
                break
            parts.pop(name, None)
        return Content.assemble(*(piece for pieces in parts.values() for piece in pieces))

    @staticmethod
    def _length(parts: dict[str, list[tuple[str, str] | str]]) -> int:
        return sum(Content.assemble(*pieces).cell_length for pieces in parts.values())
