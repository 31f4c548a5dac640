"""The Harnez Textual app: paints at once, then opens the server and shows a session or the picker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Static

if TYPE_CHECKING:
    from harnez.server.server import Server
    from harnez.settings import Settings

PERMISSION_MODES = ("ask", "accept-edits", "read-only")
"""Shift+Tab cycles through these (the agent reads `HarnezApp.permission_mode`)."""

ServerOpener = Callable[[], Awaitable["Server"]]


class HarnezApp(App[None]):
    """A client of the in-process server: sends commands, renders events."""

    CSS_PATH = "app.tcss"
    TITLE = "harnez"
    BINDINGS = [
        Binding("shift+tab", "cycle_mode", "Permission mode", priority=True, show=False),
    ]

    permission_mode: reactive[str] = reactive("ask")
    """How tool calls are approved: ask, accept-edits or read-only (cycled with Shift+Tab)."""

    def __init__(self, open_server: ServerOpener, workspace: Path, settings: Settings | None = None, *,
                 resume: str | None = None, open_picker: bool = False, continue_latest: bool = False) -> None:
        super().__init__()
        self._open_server = open_server
        self.workspace = Path(workspace)
        self.settings = settings
        self.resume = resume
        self.start_with_picker = open_picker
        self.continue_latest = continue_latest or resume == "latest"
        self._server: Server | None = None
        self._closed = False
        mode = getattr(getattr(settings, "permissions", None), "mode", None)
        if mode in PERMISSION_MODES:
            self.permission_mode = mode

    @property
    def server(self) -> Server:
        """The open server (available once the start-up worker has opened it)."""
        if self._server is None:
            raise RuntimeError("The server is not open yet.")
        return self._server

    @property
    def ready(self) -> bool:
        """Whether the server is open and a first screen has been chosen."""
        return self._server is not None and len(self.screen_stack) > 1 and self.screen.is_mounted

    def compose(self) -> ComposeResult:
        yield Static("harnez — opening…", id="splash")

    def on_mount(self) -> None:
        self.call_after_refresh(lambda: self.run_worker(self._start(), name="start", exclusive=True))

    async def _start(self) -> None:
        from harnez.errors import HarnezError, SessionNotFoundError

        try:
            self._server = await self._open_server()
            await self._first_screen()
        except SessionNotFoundError as exc:
            self.exit(return_code=2, message=str(exc))
        except HarnezError as exc:
            self.exit(return_code=1, message=str(exc))

    async def _first_screen(self) -> None:
        if self.continue_latest:
            record = await self.server.newest_session(self.workspace)
            await self.open_session(record.id)
        elif self.resume:
            await self.open_session(self.resume)
        elif self.start_with_picker:
            self.open_picker(at_start=True)
        else:
            await self.open_new_session()

    # screens ----------------------------------------------------------------------------------

    def _show(self, screen: Any) -> None:
        from harnez.tui.screens.session import SessionScreen

        if isinstance(self.screen, SessionScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    async def open_new_session(self) -> None:
        """Show a fresh, unsaved session of this workspace."""
        from harnez.tui.screens.session import SessionScreen

        model = getattr(self.settings, "model", None)
        draft = self.server.create_session(self.workspace, model=model)
        self._show(SessionScreen(draft.id, draft.title, draft.model))

    async def open_session(self, id_or_prefix: str) -> None:
        """Show a stored session (an id or a unique prefix)."""
        from harnez.tui.screens.session import SessionScreen

        record = await self.server.get_session(id_or_prefix)
        self._show(SessionScreen(record.id, record.display_title, record.model))

    def open_picker(self, at_start: bool = False) -> None:
        """Show the resume picker; choosing a session opens it, closing returns (or quits at start)."""
        from harnez.tui.screens.picker import PickerScreen

        async def chosen(session_id: str | None) -> None:
            if session_id:
                await self.open_session(session_id)
            elif at_start:
                self.call_next(self.quit_harnez)

        self.push_screen(PickerScreen(self.server, self.workspace), chosen)

    # actions ----------------------------------------------------------------------------------

    def action_cycle_mode(self) -> None:
        """Shift+Tab: ask → accept-edits → read-only → ask."""
        index = PERMISSION_MODES.index(self.permission_mode)
        self.permission_mode = PERMISSION_MODES[(index + 1) % len(PERMISSION_MODES)]

    async def action_quit(self) -> None:
        """Close the server (cancelling running tasks, committing events), then exit."""
        await self.quit_harnez()

    async def quit_harnez(self) -> None:
        """Close the server and exit."""
        await self._close_server()
        self.exit()

    async def _close_server(self) -> None:
        if self._server is not None and not self._closed:
            self._closed = True
            await self._server.close()

    async def on_unmount(self) -> None:
        await self._close_server()


def run_tui(open_server: ServerOpener, workspace: Path, settings: Settings | None = None, *,
            resume: str | None = None, open_picker: bool = False, continue_latest: bool = False) -> int:
    """Run the TUI until the person quits; the process exit code (2 for an unknown session id)."""
    app = HarnezApp(open_server, workspace, settings, resume=resume, open_picker=open_picker,
                    continue_latest=continue_latest)
    app.run()
    return app.return_code or 0
