"""A delegate call's sub-agent, shown inside the call's block: its agent and child session, how it ended
and what it spent, and a button that opens the child session (docs/agents.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Button, Static

if TYPE_CHECKING:
    from harnez import events as ev


def started_line(body: ev.DelegateStarted) -> str:
    """Which agent runs, in which session, on which model, with which tools."""
    model = f" on {body.model}" if body.model else ""
    tools = f" · tools: {', '.join(body.tools)}" if body.tools else " · no tools"
    return f"↳ sub-agent {body.agent} in session {body.child[:12]}{model}{tools}"


def finished_line(body: ev.DelegateFinished) -> str:
    """How the sub-agent's task ended and what it spent (counted in this session's totals)."""
    turns = f" after {body.turns} turn{'s' if body.turns != 1 else ''}" if body.turns is not None else ""
    spent = f" · {body.input} in / {body.output} out tokens"
    usd = f" · ${body.usd:.4f}" if body.usd is not None else ""
    error = f": {body.error}" if body.error else ""
    return f"{'✓' if body.stop == 'completed' else '✗'} {body.stop}{turns}{error}{spent}{usd}"


class DelegationPanel(Vertical):
    """The sub-agent part of a delegate call's block; its button asks to open the child session."""

    DEFAULT_CSS = """
    DelegationPanel { height: auto; }
    DelegationPanel .delegation-line { color: $text-muted; }
    DelegationPanel .delegation-end { color: $text-muted; }
    DelegationPanel Button { margin: 0; }
    """

    class Opened(Message):
        """The person asked to see a sub-agent's child session."""

        def __init__(self, child: str) -> None:
            super().__init__()
            self.child = child

    def __init__(self, agent: str, child: str) -> None:
        super().__init__()
        self.agent = agent
        self.child = child
        self.stop: str | None = None
        self._line = Static(
            f"↳ sub-agent {agent} in session {child[:12]}", classes="delegation-line", markup=False
        )
        self._end = Static("", classes="delegation-end", markup=False)

    def compose(self) -> ComposeResult:
        yield self._line
        yield self._end
        yield Button(f"Open the {self.agent} session", compact=True, flat=True)

    def show_start(self, body: ev.DelegateStarted) -> None:
        self._line.update(started_line(body))

    def show_end(self, body: ev.DelegateFinished) -> None:
        self.stop = body.stop
        self._end.update(finished_line(body))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Opened(self.child))
