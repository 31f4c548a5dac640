"""Asking the person to trust a project's hooks: a small modal listing the commands, answered once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from harnez.errors import HarnezError
from harnez.text import printable
from harnez.tui.widgets.keys import CTRL_C_QUITS

if TYPE_CHECKING:
    from harnez.server import HookReview, Server


class HookTrustDialog(ModalScreen[bool]):
    """Shows a project's hooks and asks whether to run them; dismisses with True only on an explicit yes."""

    DEFAULT_CSS = """
    HookTrustDialog { align: center middle; }
    HookTrustDialog > Vertical { width: 80; max-width: 100%; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    HookTrustDialog #hook-commands { margin: 1 0; padding: 0 1; background: $boost; }
    HookTrustDialog Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    HookTrustDialog Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("escape,n", "answer(False)", "Not now"),
        Binding("t", "answer(True)", "Trust"),
        CTRL_C_QUITS,
    ]
    AUTO_FOCUS = "#no"
    """Focused when the dialog shows (Textual does it once the dialog is composed and active; a
    focus in `on_mount` could run before the buttons were there and crash the app)."""

    def __init__(self, review: HookReview) -> None:
        super().__init__()
        self.review = review

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"This project's settings ({self.review.settings_file}) define hooks:", markup=False)
            lines = "\n".join(printable(line, one_line=True) for line in self.review.lines())
            yield Static(lines, id="hook-commands", markup=False)
            yield Label(
                "Harnez runs them during every task, as you, with the workspace's files. Trust them only "
                "if you know this project. Changed hooks ask again.",
                markup=False,
            )
            with Horizontal():
                yield Button("Not now (n)", id="no")
                yield Button("Trust and run them (t)", id="yes", variant="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, trust: bool) -> None:
        """Answer: trust the hooks, or leave them off for now."""
        self.dismiss(trust)


def ask_hook_trust(app: App[Any], server: Server, workspace: Path, asked: set[Path]) -> None:
    """Once per workspace and app run: when the session's project has hooks the person has not trusted
    as they are now, ask (the hooks stay off until a yes; the answer is remembered by the server)."""
    if workspace in asked:
        return
    asked.add(workspace)
    try:
        review = server.untrusted_hooks(workspace)
    except HarnezError as exc:
        app.notify(exc.message, severity="error", timeout=15)
        return
    if review is None:
        return

    def answered(trust: bool | None) -> None:
        if not trust:
            app.notify("The project's hooks stay off; they do not run in its tasks.", timeout=8)
            return
        try:
            server.trust_hooks(review)
        except HarnezError as exc:
            app.notify(exc.message, severity="error", timeout=15)
            return
        app.notify("Trusted: the project's hooks run in its tasks from now on.", timeout=8)

    app.push_screen(HookTrustDialog(review), answered)
