"""Small modal screens: rename a session, confirm a deletion, read the help."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from harnez.tui.commands import help_markdown
from harnez.tui.widgets.keys import CTRL_C_QUITS, CTRL_C_QUITS_OVER_INPUT


class RenameDialog(ModalScreen[str | None]):
    """Asks for a session's new name; dismisses with the name, or None when cancelled."""

    DEFAULT_CSS = """
    RenameDialog { align: center middle; }
    RenameDialog > Vertical { width: 60; max-width: 100%; height: auto; border: thick $primary;
                              background: $surface; padding: 1 2; }
    RenameDialog Label { width: 1fr; margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel"), CTRL_C_QUITS_OVER_INPUT]

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Rename session (Enter saves, Esc cancels)")
            yield Input(self.current, id="rename-input", select_on_focus=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = " ".join(event.value.split())
        if not name:
            self.notify("A session name cannot be empty.", severity="error")
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        """Close without renaming."""
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """Asks a yes/no question; dismisses with True only on an explicit yes."""

    DEFAULT_CSS = """
    ConfirmDialog { align: center middle; }
    ConfirmDialog > Vertical { width: 64; max-width: 100%; height: auto; border: thick $error;
                               background: $surface; padding: 1 2; }
    ConfirmDialog Label { width: 1fr; }
    ConfirmDialog Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmDialog Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape,n", "answer(False)", "No"), Binding("y", "answer(True)", "Yes"), CTRL_C_QUITS]

    def __init__(self, question: str, confirm_label: str = "Delete") -> None:
        super().__init__()
        self.question = question
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.question)
            with Horizontal():
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.confirm_label} (y)", id="yes", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Answer the question."""
        self.dismiss(yes)


class HelpScreen(ModalScreen[None]):
    """Lists keys and slash commands."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 100; height: 80%; border: thick $primary;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "dismiss", "Close"), CTRL_C_QUITS]

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it and pygments: not for the dialogs above

        with VerticalScroll():
            yield Markdown(help_markdown() + "\n\nPress Esc to close.")
