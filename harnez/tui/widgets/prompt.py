"""The prompt: a multi-line input that sends on Enter, walks history, completes, queues, steers and cancels."""

from __future__ import annotations

import time

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import TextArea

from harnez.tui.widgets.completion import CompletionMenu, token_at
from harnez.tui.widgets.keys import QUIT_WINDOW


class PromptInput(TextArea):
    """Where the person types; Enter sends, Shift+Enter or Ctrl+J inserts a newline."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: tall $primary 40%;
        padding: 0 1;
    }
    PromptInput:focus { border: tall $primary; }
    PromptInput.-running { border: tall $warning 60%; }
    """

    BINDINGS = [
        Binding("ctrl+c", "clear_or_quit", "Clear / quit", show=False, priority=True),
        Binding("ctrl+s", "steer", "Send as steering", show=False),
        Binding("escape", "cancel_task", "Cancel task", show=False),
    ]

    running: reactive[bool] = reactive(False)
    """Whether a task runs in the session: Enter then queues and Ctrl+S steers."""

    class Submitted(Message):
        """The person sent a prompt (or a slash command)."""

        def __init__(self, text: str, steer: bool) -> None:
            super().__init__()
            self.text = text
            """What was typed, stripped of surrounding blank lines."""
            self.steer = steer
            """Whether it is a steering message for the running task."""

    class CancelRequested(Message):
        """The person pressed Esc: cancel the running task."""

    class QuitRequested(Message):
        """The person pressed Ctrl+C on an empty prompt twice."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.prompt_history: list[str] = []
        """Earlier prompts of this session, oldest first (set by the screen)."""
        self._history_index: int | None = None
        self._draft = ""
        self._quit_armed_at: float | None = None
        """When Ctrl+C last armed quitting (time.monotonic); None once another key was pressed."""
        self.menu: CompletionMenu | None = None
        """The completion menu this prompt drives (set by the screen); None: no completion."""
        self._quiet_text: str | None = None
        """Text on which the menu stays closed (Esc pressed, or a history entry shown) until edited."""

    def watch_running(self, running: bool) -> None:
        self.set_class(running, "-running")

    def remember(self, text: str) -> None:
        """Add a sent prompt to the history (consecutive duplicates are kept once)."""
        if text and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)

    def remember_older(self, texts: list[str]) -> None:
        """Put prompts sent before those remembered (oldest first) at the start of the history
        (consecutive duplicates are kept once, as by `remember`)."""
        older: list[str] = []
        for text in texts:
            if text and (not older or older[-1] != text):
                older.append(text)
        if older and self.prompt_history and older[-1] == self.prompt_history[0]:
            older.pop()
        self.prompt_history[:0] = older
        if self._history_index is not None:  # walking the history: stay on the entry shown
            self._history_index += len(older)

    async def _on_key(self, event: events.Key) -> None:
        if event.key != "ctrl+c":
            self._quit_armed_at = None
        if self._menu_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._send(steer=False)
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def _menu_key(self, key: str) -> bool:
        """While the menu is open, Up/Down move in it, Tab/Enter accept, Esc closes; True if handled.

        Enter on a word that already is the highlighted completion sends instead (`/help` + Enter).
        """
        menu = self.menu
        if menu is not None and menu.is_open and key in ("tab", "enter") and self._menu_behind(menu):
            # Keys typed fast (or sent together by a terminal) arrive before the text's change
            # messages: bring the menu up to the text first, or Enter would accept a completion of
            # what the word was a few keys ago (`/exit` + Enter becoming `/session-name`).
            self._update_completion()
        if menu is None or not menu.is_open:
            return False
        if key in ("up", "down"):
            menu.move(-1 if key == "up" else 1)
        elif key == "tab":
            self.accept_completion(force=True)
        elif key == "enter":
            return self.accept_completion(force=False)
        elif key == "escape":
            self._quiet_text = self.text
            menu.close()
        else:
            return False
        return True

    def accept_completion(self, force: bool = True) -> bool:
        """Replace the word at the cursor by the highlighted completion and a space.

        Returns False when nothing was accepted (no menu, or, unless `force`, the word is complete).
        """
        menu = self.menu
        chosen = menu.chosen if menu is not None else None
        row, column = self.cursor_location
        line = self.document.get_line(row)
        # The word is found again here: keys typed since the menu last refreshed are part of it.
        token = token_at(line, row, column)
        if menu is None or chosen is None or token is None:
            return False
        if not force and line[token.start : token.end] == chosen.value:
            return False
        spaced = line[token.end : token.end + 1] == " "
        self.replace(chosen.value + ("" if spaced else " "), (token.row, token.start), (token.row, token.end))
        self.move_cursor((token.row, token.start + len(chosen.value) + 1))
        menu.close()
        return True

    def on_text_area_changed(self, _: TextArea.Changed) -> None:
        self._update_completion()

    def on_text_area_selection_changed(self, _: TextArea.SelectionChanged) -> None:
        self._update_completion()

    def _menu_behind(self, menu: CompletionMenu) -> bool:
        """Whether the open menu lists the completions of another word than the one at the cursor
        (the text changed and its change message is still queued)."""
        row, column = self.cursor_location
        token = token_at(self.document.get_line(row), row, column)
        return token is None or menu.wanted != (token.kind, token.query)

    def _update_completion(self) -> None:
        """Open, refilter or close the menu for the `/` or `@` word at the cursor."""
        menu = self.menu
        if menu is None:
            return
        if self.text != self._quiet_text:
            self._quiet_text = None
        row, column = self.cursor_location
        selecting = self.selection.start != self.selection.end
        quiet = self._quiet_text is not None or selecting
        token = None if quiet else token_at(self.document.get_line(row), row, column)
        if token is None:
            menu.close()
        else:
            menu.complete(token.kind, token.query)

    def _send(self, steer: bool) -> None:
        text = self.text.strip("\n")
        if not text.strip():
            return
        self.remember(text)
        self._history_index = None
        self.clear()
        self.post_message(self.Submitted(text, steer))

    def action_steer(self) -> None:
        """Send the prompt as a steering message into the running task (a normal prompt otherwise)."""
        self._send(steer=self.running)

    def action_cancel_task(self) -> None:
        """Esc: ask the screen to cancel the running task."""
        self.post_message(self.CancelRequested())

    def action_clear_or_quit(self) -> None:
        """Ctrl+C clears the prompt; pressed again within `QUIT_WINDOW` on an empty prompt, it quits.
        Each press that does not quit says so. The text cleared becomes the newest history entry: a
        press meant to copy, or to stop a task that had just ended, does not lose a prompt."""
        armed_at, now = self._quit_armed_at, time.monotonic()
        if not self.text and armed_at is not None and now - armed_at <= QUIT_WINDOW:
            self.post_message(self.QuitRequested())
            return
        cleared = self.text.strip("\n")
        if cleared.strip():
            self.remember(cleared)
        self._history_index = None
        self.clear()
        self._quit_armed_at = now
        kept = "Prompt cleared (Up brings it back). " if cleared.strip() else ""
        self.notify(f"{kept}Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)

    def action_cursor_up(self, select: bool = False) -> None:
        if select or self.cursor_location[0] > 0 or not self.prompt_history:
            super().action_cursor_up(select)
            return
        if self._history_index is None:
            self._draft = self.text
            self._history_index = len(self.prompt_history)
        if self._history_index > 0:
            self._history_index -= 1
            self._show(self.prompt_history[self._history_index], at_end=False)

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if select or self.cursor_location[0] < last_row or self._history_index is None:
            super().action_cursor_down(select)
            return
        self._history_index += 1
        if self._history_index >= len(self.prompt_history):
            self._history_index = None
            self._show(self._draft, at_end=True)
        else:
            self._show(self.prompt_history[self._history_index], at_end=True)

    def _show(self, text: str, at_end: bool) -> None:
        self._quiet_text = text
        self.load_text(text)
        self.move_cursor(self.document.end if at_end else (0, len(self.document.get_line(0))))
