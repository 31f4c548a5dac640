"""The approval prompt: a tool call waits for the person to allow it once, for the session, or deny it.

Keyboard only. `y` or Enter allows once, `a` allows for this session, `n` asks for an optional reason
and denies, Esc denies without a reason, `x` stops the whole task. Esc never allows anything and
never cancels the task: the call is refused and the model hears so, which is the safe default for a
key people press to get rid of a dialog.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from time import monotonic
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from harnez.events import ApprovalRequired
from harnez.tui.notices import keep_toasts_above
from harnez.tui.widgets.blocks import DiffView
from harnez.tui.widgets.keys import CTRL_C_QUITS

Verdict = Literal["allow", "allow-session", "deny"]

ARM_DELAY = 0.4
"""Seconds after the prompt opens before y / Enter / a, n and x act (typing-ahead guard): letters typed
for the message box as the prompt opened must neither allow the call, nor start a denial whose reason
takes the rest of the sentence, nor stop the whole task."""

SHOWN_BY_DIFF = {"content", "old_string", "new_string"}
"""Arguments of write and edit that the diff already shows."""

CHOICE_HINTS = "y/Enter allow once · a allow for this session · n deny… · Esc deny · x stop the task"
REASON_HINTS = "Enter deny with this reason (may be empty) · Esc back to the choices"


ApprovalRequest = ApprovalRequired
"""What the prompt asks about: the `approval-required` event's body (call, tool, arguments, why, diff)."""


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """The person's answer; `stop_task` asks to cancel the whole task instead of answering the call."""

    verdict: Verdict
    reason: str | None = None
    stop_task: bool = False


class ApprovalScreen(ModalScreen[ApprovalAnswer | None]):
    """Asks whether one tool call may run; dismisses with the answer, or None when withdrawn."""

    CSS_PATH = "approval.tcss"
    AUTO_FOCUS = "#approval-dialog"
    BINDINGS = [
        Binding("y,enter", "answer('allow')", "Allow once"),
        Binding("a", "answer('allow-session')", "Allow for this session"),
        # The keys that move the focus act with priority: the app runs them as it reads the key, before
        # it hands the next one to the focused widget, so a reason typed fast after `n` lands whole in
        # the input (a plain binding ran only once `n` had gone through the dialog and back up to the
        # screen, and the letters typed meanwhile were lost). Disabled by `check_action`, they fall
        # through to the input: an `n` in the reason is a letter.
        Binding("n", "ask_reason", "Deny with a reason", priority=True),
        Binding("escape", "escape", "Deny", priority=True),
        Binding("x", "stop_task", "Stop the task"),
        CTRL_C_QUITS,
    ]

    def __init__(self, request: ApprovalRequest, waiting: tuple[str, str] | None = None) -> None:
        super().__init__()
        self._shown_at = monotonic()
        self.request = request
        self.waiting = waiting
        """The call as it waits on the approval desk (`ApprovalDesk.key`): a sub-agent's is asked by its
        own screen and its parent's, and one prompt is enough."""
        self.asking_reason = False
        """Whether the reason input is shown (the choice keys are off meanwhile)."""

    def compose(self) -> ComposeResult:
        request = self.request
        # The head and the foot are docked: however long the body, it scrolls between them and the
        # keys (and the reason input) stay in view.
        with VerticalScroll(id="approval-dialog"):
            with Vertical(id="approval-head"):
                yield Static(
                    Content.assemble(("Approval needed: ", ""), (request.name, "bold")), id="approval-title"
                )
                if request.reason:
                    yield Static(request.reason, id="approval-reason", markup=False)
            with Vertical(id="approval-foot"):
                yield Input(placeholder="Why not? (optional, the model reads it)", id="approval-why")
                yield Static(CHOICE_HINTS, id="approval-keys", markup=False)
            with Vertical(id="approval-body"):
                yield from self._arguments()
                if request.diff:
                    yield DiffView(request.diff)

    def _arguments(self) -> ComposeResult:
        arguments = dict(self.request.arguments)
        command = arguments.pop("command", None)
        if command is not None:
            yield Static(f"$ {command}", classes="approval-command", markup=False)
        path = arguments.pop("path", None)
        if path is not None:
            yield Static(Content.assemble(("file ", "dim"), (str(path), "bold")), classes="approval-path")
        if self.request.diff:
            arguments = {key: value for key, value in arguments.items() if key not in SHOWN_BY_DIFF}
        if arguments:
            text = json.dumps(arguments, indent=2, ensure_ascii=False)
            yield Static(text, classes="approval-arguments", markup=False)

    def on_mount(self) -> None:
        self._shown_at = monotonic()
        # Notices go above the dialog when they fit there whole, and wait for it to close otherwise
        # (a small terminal): a toast over its title or command would hide what is being approved.
        keep_toasts_above(self, self.query_one("#approval-dialog"), newest_always=False)

    @property
    def armed(self) -> bool:
        """Whether the answer keys but Esc work yet: not in the first ARM_DELAY seconds, so that an
        Enter, an `a`, an `n` or an `x` typed for the message box just as the prompt opens cannot
        approve the call, turn the next words into a denial's reason, or stop the task."""
        return monotonic() - self._shown_at >= ARM_DELAY

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While the reason is typed, letters belong to the input and Enter confirms the denial.
        return not (self.asking_reason and action in ("answer", "ask_reason", "stop_task"))

    def action_answer(self, verdict: Verdict) -> None:
        """Allow the call once or for the session (once the prompt is armed)."""
        if not self.armed:
            self.app.bell()
            return
        self.dismiss(ApprovalAnswer(verdict))

    def action_ask_reason(self) -> None:
        """Show the reason input; Enter there denies (once the prompt is armed)."""
        if not self.armed:
            self.app.bell()
            return
        self._set_stage(asking_reason=True)

    def action_escape(self) -> None:
        """Deny without a reason; while typing a reason, go back to the choices."""
        if self.asking_reason:
            self._set_stage(asking_reason=False)
        else:
            self.dismiss(ApprovalAnswer("deny"))

    def action_stop_task(self) -> None:
        """Cancel the whole task (once the prompt is armed): the prompt is withdrawn and nothing runs."""
        if not self.armed:
            self.app.bell()
            return
        self.dismiss(ApprovalAnswer("deny", stop_task=True))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        reason = " ".join(event.value.split())
        self.dismiss(ApprovalAnswer("deny", reason or None))

    def withdraw(self) -> None:
        """Close without an answer: the call was answered elsewhere or its task ended."""
        if not self.is_current:
            self.pop_until_active()
        self.dismiss(None)

    def _set_stage(self, *, asking_reason: bool) -> None:
        self.asking_reason = asking_reason
        self.set_class(asking_reason, "-reason")
        self.query_one("#approval-keys", Static).update(REASON_HINTS if asking_reason else CHOICE_HINTS)
        why = self.query_one("#approval-why", Input)
        # `set_focus` moves the focus at once (`Widget.focus` does it later): the next key goes there.
        if asking_reason:
            self.set_focus(why)
        else:
            why.value = ""
            self.set_focus(self.query_one("#approval-dialog"))
        self.refresh_bindings()
