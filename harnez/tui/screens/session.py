"""The session screen: title bar, transcript, prompt and status line, all driven by server events."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.screen import Screen

from harnez.errors import HarnezError
from harnez.events import StoredEvent
from harnez.tui import bridge
from harnez.tui.commands import SlashCommand, SlashCommandProvider, UnknownCommandError, parse_slash
from harnez.tui.screens.dialogs import HelpScreen, RenameDialog
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine, TitleBar, Usage
from harnez.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from harnez.server.server import Server
    from harnez.tui.app import HarnezApp

NEW_SESSION_TITLE = "New session"


class SessionScreen(Screen[None]):
    """One session: renders its events as they are stored and sends what the person types."""

    CSS_PATH = "session.tcss"
    COMMANDS = Screen.COMMANDS | {SlashCommandProvider}
    AUTO_FOCUS = "PromptInput"

    def __init__(self, session_id: str, title: str | None, model: str | None) -> None:
        super().__init__()
        self.session_id = session_id
        """The session shown (it may still be an unsaved draft)."""
        self.session_title = title or NEW_SESSION_TITLE
        self.model = model
        self.usage = Usage()
        self.queued = 0
        self.task_running = False

    @property
    def harnez(self) -> HarnezApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    @property
    def server(self) -> Server:
        """The in-process server."""
        return self.harnez.server

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title-bar")
        yield Transcript(id="transcript")
        yield PromptInput(id="prompt")
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.query_one(TitleBar).title = self.session_title
        status = self.query_one(StatusLine)
        status.model = self.model or ""
        status.title = self.session_title
        status.mode = self.harnez.permission_mode
        self.watch(self.harnez, "permission_mode", self._show_mode, init=False)
        self.task_running = self.server.running(self.session_id) is not None
        self._show_state()
        self.follow_session()

    def _show_mode(self, mode: str) -> None:
        self.query_one(StatusLine).mode = mode

    # events -----------------------------------------------------------------------------------

    @work(group="follow", exclusive=True)
    async def follow_session(self) -> None:
        """Render the newest stored events, then every live event, in order."""
        transcript = self.query_one(Transcript)
        window = await bridge.newest_events(self.server, self.session_id)
        for event in window.events:
            self._note(event, live=False)
        await transcript.load_batch(window.events, window.has_older)
        async for event in self.server.subscribe(self.session_id, after=window.last_seq):
            await transcript.apply(event)
            self._note(event, live=True)

    def _note(self, event: StoredEvent, live: bool) -> None:
        """Update the title, status line and prompt history from an event."""
        kind, payload = event.kind, event.payload
        if self.usage.add(kind, payload):
            self.query_one(StatusLine).show_usage(self.usage)
        elif kind == "title-changed":
            self.set_title(payload.get("title") or NEW_SESSION_TITLE)
        elif kind == "model-changed":
            self.model = payload.get("model")
            self.query_one(StatusLine).model = self.model or ""
        elif kind in ("user-message", "prompt-queued"):
            self.query_one(PromptInput).remember(payload.get("text", ""))
        if live:
            self._track_state(kind, payload)

    def _track_state(self, kind: str, payload: dict) -> None:
        if kind == "user-message" and payload.get("mode") == "prompt":
            self.task_running = True
            self.queued = max(0, self.queued - 1)
        elif kind == "prompt-queued":
            self.queued += 1
        elif kind == "finished":
            self.task_running = False
            if payload.get("stop") == "cancelled":
                self.queued = 0
        else:
            return
        self._show_state()

    def _show_state(self) -> None:
        state = "running" if self.task_running else "idle"
        if self.queued:
            state += f" · {self.queued} queued"
        self.query_one(StatusLine).state = state
        self.query_one(PromptInput).running = self.task_running

    def set_title(self, title: str) -> None:
        """Show a new title in the title bar and the status line at once."""
        self.session_title = title
        self.query_one(TitleBar).title = title
        self.query_one(StatusLine).title = title

    async def on_transcript_older_wanted(self, message: Transcript.OlderWanted) -> None:
        self.load_older(message.before)

    @work(group="older", exclusive=True)
    async def load_older(self, before: int) -> None:
        """Read the page of events before `before` and render it above."""
        window = await bridge.events_before(self.server, self.session_id, before)
        await self.query_one(Transcript).prepend(window.events, window.has_older)

    # input ------------------------------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        try:
            command = parse_slash(message.text)
        except UnknownCommandError as exc:
            self.notify(str(exc), severity="error")
            return
        if command is not None:
            await self.run_command(*command)
            return
        try:
            await self.server.submit(self.session_id, message.text, steer=message.steer and self.task_running)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")

    async def on_prompt_input_cancel_requested(self, _: PromptInput.CancelRequested) -> None:
        if self.server.running(self.session_id) is None:
            return
        self.notify("Cancelling…", timeout=2)
        self.cancel_task()

    @work(group="cancel", exclusive=True)
    async def cancel_task(self) -> None:
        """Ask the server to cancel the running task (and drop the queued ones)."""
        await self.server.cancel(self.session_id)

    def on_prompt_input_quit_requested(self, _: PromptInput.QuitRequested) -> None:
        self.app.call_next(self.harnez.quit_harnez)

    async def run_command(self, command: SlashCommand, argument: str) -> None:
        """Run a slash command (typed, or chosen in the command palette)."""
        match command.name:
            case "session-name":
                if argument:
                    await self.rename(argument)
                else:
                    self.app.push_screen(RenameDialog(self.session_title), self._renamed)
            case "new":
                await self.harnez.open_new_session()
            case "resume":
                self.harnez.open_picker()
            case "help":
                self.app.push_screen(HelpScreen())
            case "quit":
                self.app.call_next(self.harnez.quit_harnez)
            case _:
                self.notify(f"/{command.name} is not available yet: the model layer is not wired into the TUI.",
                            severity="warning")

    async def _renamed(self, name: str | None) -> None:
        if name:
            await self.rename(name)

    async def rename(self, name: str) -> None:
        """Rename the session through the server and show the new title at once."""
        try:
            await self.server.rename(self.session_id, name)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.set_title(" ".join(name.split()))
