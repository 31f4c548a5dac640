"""The Harnez Textual app: paints at once, then opens the server and shows a session or the picker."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.notifications import Notification
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import NoActiveWorker, Worker, WorkerCancelled, WorkerFailed, get_current_worker

from harnez.tui.collector import CHECK_EVERY as COLLECT_CHECK_EVERY
from harnez.tui.collector import IdleCollector
from harnez.tui.hangup import CHECK_EVERY as HANG_UP_CHECK_EVERY
from harnez.tui.hangup import SignalClose
from harnez.tui.notices import NoticeKeepingApp

if TYPE_CHECKING:
    from harnez.server import SessionRecord
    from harnez.server.models import LocalServer
    from harnez.server.server import Server
    from harnez.settings import Settings
    from harnez.tui.screens.picker import PickerChoice, PickerScreen
    from harnez.tui.screens.setup import SetupResult

WORKER_STOP_WAIT = 2.0
"""Seconds to wait at quit for cancelled workers to end before the server closes regardless."""
PERMISSION_MODES = ("ask", "accept-edits", "read-only")
"""Shift+Tab cycles through these (the agent reads `HarnezApp.permission_mode`)."""

ServerOpener = Callable[..., Awaitable["Server"]]
"""Opens the server of this workspace's database; when the app is given `database`, it also takes
`database=<path>` (another project's database: a session chosen across projects opens there)."""


class HarnezApp(NoticeKeepingApp):
    """A client of the in-process server: sends commands, renders events (notifications kept whole:
    harnez/tui/notices.py)."""

    CSS_PATH = ["app.tcss", "screens/session.tcss", "screens/picker.tcss"]
    """The session screen's and the picker's stylesheets are the app's: either can be the default
    screen, whose own CSS_PATH Textual does not load."""
    TITLE = "harnez"
    BINDINGS = [
        Binding("shift+tab", "cycle_mode", "Permission mode", priority=True, show=False),
    ]

    permission_mode: reactive[str] = reactive("ask")
    """How tool calls are approved: ask, accept-edits or read-only (cycled with Shift+Tab)."""

    def __init__(
        self,
        open_server: ServerOpener,
        workspace: Path,
        settings: Settings | None = None,
        *,
        resume: str | None = None,
        open_picker: bool = False,
        continue_latest: bool = False,
        model: str | None = None,
        probe_ports: Mapping[int, str] | None = None,
        local_probe: Callable[[], Awaitable[list[LocalServer]]] | None = None,
        load_settings: Callable[[], Settings] | None = None,
        database: Callable[[], Path] | None = None,
        early_database: Callable[[], Path | None] | None = None,
    ) -> None:
        self._theme_settled = False
        """Whether the settings' theme has been applied: later changes are the person's, and saved."""
        super().__init__()
        self._open_server = open_server
        self._database = database
        """Where this workspace's database is (asked once settings are read). Given, `--resume`,
        `--continue` and the picker create no database where there is none, and `open_server`
        accepts `database=`; None (most tests): the opener's database is always opened."""
        self._early_database = early_database
        """Where the database is when that is known before the settings are read (None: not known):
        the picker then lists at once, as the first screen, while the server opens."""
        self._first_picker: PickerScreen | None = None
        self.workspace = Path(workspace)
        self.settings = settings
        self._load_settings = load_settings
        """Reads the settings after the first frame (the CLI's way: pydantic's import is not on the
        path to the first paint); when None, `settings` is used as given."""
        self.failure: str | None = None
        """Why the app could not start (an unknown session id, bad settings): printed on stderr."""
        self.resume_id: str | None = None
        """What `harnez --resume` takes to open again the stored session shown at quit (its shortest
        unique prefix of `RESUME_PREFIX` digits, else its whole id): printed once the screen is
        restored, as Claude Code and Codex do. None when no stored session was shown."""
        self.resume = resume
        self.start_with_picker = open_picker
        self.continue_latest = continue_latest or resume == "latest"
        self._model_given = model
        """`--model`, until the first session opens: a new one takes it from the settings, a stored one
        (`--continue`, `--resume`) switches to it as `/model` would (it kept its own, silently)."""
        self.probe_ports = probe_ports
        """The loopback ports the first-run setup probes (port → provider name); None: the usual ones."""
        self._local_probe = local_probe
        self._server: Server | None = None
        self._server_closed = False
        self._collector = IdleCollector(busy=self._tasks_run)
        self._installed_collector = self._collector
        self._early_keys: list[events.Key] | None = []
        """Keys pressed before any widget had focus, kept for the first one focused (`_held_early`);
        None once given."""
        self._early_check: Timer | None = None
        self._first_screen_chosen = False
        self._settings_timer: Timer | None = None
        self._settings_problem: str | None = None
        """The message of a settings file broken by an edit, once said (`_check_settings`)."""
        self._settings_seen: str | None = None
        """The problem the last look at the settings files found (said at the second look)."""
        self._ctrl_c_at: float | None = None
        """When a Ctrl+C that no screen took last armed quitting (`action_help_quit`)."""
        self._hooks_asked: set[Path] = set()
        """Workspaces whose untrusted project hooks were shown this run (docs/hooks.md)."""
        self._use_settings_mode()

    def _use_settings_mode(self) -> None:
        mode = getattr(getattr(self.settings, "permissions", None), "mode", None)
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
        """Whether the server is open (unless nothing was there to open) and a first screen has been
        chosen (and shows its session)."""
        # Without a database here (`--resume` where none exists) the picker is chosen with no server.
        return self._first_screen_chosen and self.screen.is_mounted and getattr(self.screen, "attached", True)

    @property
    def opens_new_session(self) -> bool:
        """Whether the app starts on a new session (no --resume, --continue or picker)."""
        return not (self.continue_latest or self.resume or self.start_with_picker)

    def get_default_screen(self) -> Screen:
        if self.opens_new_session:
            # The first frame is the session screen itself: it takes keys while the server opens.
            from harnez.tui.screens.session import SessionScreen

            return SessionScreen(None, None, None)
        if self.start_with_picker and self._early_database is not None:
            from harnez.tui.screens.picker import early_picker

            chosen = partial(self._picker_chosen, at_start=True)
            self._first_picker = early_picker(self.workspace, self._early_database(), chosen)
            if self._first_picker is not None:
                return self._first_picker
        return super().get_default_screen()

    def compose(self) -> ComposeResult:
        if not self.opens_new_session and self._first_picker is None:
            yield Static("harnez — opening…", id="splash")

    def on_mount(self) -> None:
        self._apply_theme()
        self._theme_settled = True  # from now on a theme change is the person's choice, worth saving
        self.set_interval(COLLECT_CHECK_EVERY, self._collect_if_idle, name="idle collector")
        self._collector.install()
        self._installed_collector = self._collector  # removed on unmount, whichever collector runs then
        if not self.is_headless:  # a real terminal: close like Ctrl+Q when it goes, or on SIGTERM
            closing = SignalClose(self.quit_harnez, lambda: self._driver)
            closing.install()
            self.set_interval(HANG_UP_CHECK_EVERY, closing.check_terminal, name="terminal check")

    def _tasks_run(self) -> bool:
        """Whether a task runs in any session of the open server."""
        return self._server is not None and not self._server_closed and self._server.any_running()

    def _collect_if_idle(self) -> None:
        """A full garbage collection while the person pauses (harnez/tui/collector.py)."""
        self._collector.collect_if_idle()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._collector.input_seen()
            if isinstance(event, events.Key) and not event.is_forwarded and await self._held_early(event):
                return
        await super().on_event(event)

    async def _held_early(self, key: events.Key) -> bool:
        """Whether a key pressed before any widget had focus was kept (`_early_keys`).

        Textual gives a key to the focused widget, or to the screen when none is: the keys a person
        types right after starting `harnez` (while the first screen is being built, before its prompt
        takes focus: the first half second) were read and dropped. They are kept instead and given,
        in order, to the first widget focused; a key the app or screen binds with priority (Ctrl+Q)
        acts at once. After that first focus, keys go where Textual sends them. A kept Ctrl+J is
        given as Enter: before Textual sets the terminal raw, the terminal turns Enter's CR into LF.
        """
        if self._early_keys is None:
            return False
        if self.focused is not None:
            await self._replay_early_keys()
            return False
        try:
            bound = self.active_bindings.get(key.key)
        except ScreenStackError:  # no screen yet
            bound = None
        if (bound is not None and bound.binding.priority) or len(self._early_keys) >= EARLY_KEYS_KEPT:
            return False
        self._early_keys.append(key)
        if self._early_check is None:
            self._early_check = self.set_interval(EARLY_KEYS_CHECK, self._replay_when_focused)
        return True

    async def _replay_when_focused(self) -> None:
        if self.focused is not None:
            await self._replay_early_keys()

    async def _replay_early_keys(self) -> None:
        """Give the kept early keys to the focused widget, in order; from now on keys are not kept."""
        kept, self._early_keys = self._early_keys or [], None
        if self._early_check is not None:
            self._early_check.stop()
            self._early_check = None
        for key in kept:
            if key.key == "ctrl+j":  # Enter typed before Textual set the terminal raw: the terminal
                key = events.Key("enter", "\r")  # had turned its CR into LF, which reads as Ctrl+J
            await super().on_event(key)

    def on_ready(self) -> None:
        # Textual sends Ready once the first frame is written: the start-up worker's import thread,
        # started earlier, took turns with the first frame's painting for the interpreter's lock.
        self.run_worker(self._start(), name="start", exclusive=True)

    def _remember_theme(self, theme: str) -> None:
        """A theme chosen in the command palette is saved to the global settings for the next start."""
        if self.settings is None or theme == getattr(self.settings, "theme", None):
            return
        from harnez.errors import HarnezError
        from harnez.settings import save_global_settings

        try:
            save_global_settings({"theme": theme})
        except (HarnezError, OSError) as exc:
            self.notify(f"The theme could not be saved: {exc}", severity="warning")

    def _apply_theme(self) -> None:
        """Use the theme the settings name; an unknown name keeps the default and says which exist."""
        wanted = getattr(self.settings, "theme", None)
        if not wanted or wanted == self.theme:
            return
        if wanted in self.available_themes:
            self.theme = wanted
            return
        known = ", ".join(sorted(self.available_themes))
        self.notify(
            f"Unknown theme {wanted!r} in settings.json; using {self.theme}. Themes: {known}.",
            severity="warning",
            timeout=10,
        )

    def watch_theme(self, theme: str) -> None:
        if self._theme_settled:
            self._remember_theme(theme)

    async def _start(self) -> None:
        from harnez.errors import HarnezError

        try:
            warmed = await self._open_and_warm_up()
            await self._first_screen()
            if self._server is not None and not warmed:
                self.run_worker(self._warm_up(), name="warm-up", group="warm-up")
        except HarnezError as exc:
            self.failure = exc.message
            self.exit(return_code=exc.exit_code)

    async def _open_and_warm_up(self) -> bool:
        """Import the server side, read the settings, open the server and, for a new session, warm up
        (`_warm_up`); whether it warmed up.

        The cyclic garbage collector is paused meanwhile: nearly everything these imports build
        lives as long as the app, and its collections walked it again and again (~15 % of the
        imports' time in fresh interpreters).
        """
        gc.disable()
        try:
            # The heavy imports run in a thread: the event loop stays free to paint the first frame
            # and to take keys meanwhile (Python switches threads every few milliseconds).
            await asyncio.to_thread(_import_server_side)
            if self._load_settings is not None:
                self._settings_loaded(self._load_settings())
            if self.opens_new_session or self._database is None or self._database().exists():
                await self._open(self._open_server())
            warm_first = self._server is not None and self.opens_new_session and not self.needs_setup
            if warm_first:
                await self._warm_up()
            # Everything imported and built so far lives as long as the app: keep the collector
            # from walking it again during every later collection (mounting a long session).
            gc.freeze()
            return warm_first
        finally:
            gc.enable()

    async def _warm_up(self) -> None:
        """Import and build, in worker threads, what the first answer needs (its widgets, the HTTP
        transport), so that a prompt does not wait for them on the event loop.

        A new session's screen is attached only once this is done: a prompt sent as soon as the
        session shows would otherwise run beside these imports, each of its steps waiting for the
        interpreter's lock, and the first request would wait for the import the thread holds
        (docs/performance.md, "The first prompt of a process"). Other first screens (a stored
        session, the picker) are shown first and warmed after.
        """
        await asyncio.to_thread(_prepare_answers)
        await self.server.warm_up()
        from harnez.tui.screens.session import SessionScreen

        shown = self.screen_stack  # empty once the app is closing: the warm-up then has no screen
        if shown and isinstance(shown[-1], SessionScreen):
            await shown[-1].prepare_answer()  # its first mount parses the answer's stylesheets

    async def _open(self, opening: Awaitable[Server]) -> None:
        """Use a newly opened server (this project's, or another's) and show its notices."""
        self._server, self._server_closed = await opening, False
        self._server.watch_settings(self._follow_settings)
        self._server.approvals.watch(self._call_waits)
        if self._settings_timer is None:  # one for the app's life, whichever server is open
            self._settings_timer = self.set_interval(SETTINGS_CHECK_EVERY, self._check_settings)
        for notice in self._server.notices:
            self.notify(notice, timeout=10)

    def _call_waits(self, session_id: str, call_id: str) -> None:
        """A call of a task of this process started waiting for an answer: the screen of its session
        asks it; when none shows that session (the person opened a sub-agent's session, or another
        one, meanwhile) it would wait for nobody, so a notice says where to answer it."""
        self.set_timer(UNASKED_AFTER, partial(self._say_unasked, session_id, call_id))

    async def _say_unasked(self, session_id: str, call_id: str) -> None:
        from harnez.errors import HarnezError
        from harnez.text import printable

        if not self._unasked(session_id, call_id):
            return
        try:
            record = await self.server.get_session(session_id)
        except HarnezError:
            return
        title = printable(record.display_title, one_line=True)
        if len(title) > UNASKED_TITLE_SHOWN:
            title = title[: UNASKED_TITLE_SHOWN - 1].rstrip() + "…"
        notice = self.post_notice(  # short enough for a toast to show whole (what to do included)
            f"«{title}» ({session_id[:RESUME_PREFIX]}) waits for your approval: /parent (from its "
            "sub-agent) or /resume opens it. Its task waits until then.",
            title="Approval needed",
            severity="warning",
            timeout=UNASKED_NOTICE_SECONDS,
        )
        self._withdraw_once_asked(notice, session_id, call_id)

    def _unasked(self, session_id: str, call_id: str) -> bool:
        """Whether a call still waits for an answer with no screen of this app to ask it."""
        from harnez.tui.screens.approval import ApprovalScreen
        from harnez.tui.screens.session import SessionScreen

        if (
            self._server is None
            or self._server_closed
            or not self.server.approvals.waits(session_id, call_id)
        ):
            return False
        for screen in self.screen_stack:
            if isinstance(screen, ApprovalScreen) and screen.waiting == (session_id, call_id):
                return False
            if isinstance(screen, SessionScreen) and screen.session_id == session_id:
                return False  # it asks once the prompts before this one are answered
        return True

    def _withdraw_once_asked(self, notice: Notification, session_id: str, call_id: str) -> None:
        """Take the notice that a call waits unasked down as soon as it is no longer true (the call
        answered, by another front end too, or cancelled; its session's screen shown), rather than
        leave it up for its whole minute saying what to do about a call that no longer needs it."""

        def check() -> None:
            if notice not in self._notifications:  # expired, or dismissed by a click
                timer.stop()
            elif not self._unasked(session_id, call_id):
                self.withdraw(notice)
                timer.stop()

        timer = self.set_interval(UNASKED_CHECK_EVERY, check)

    def _settings_loaded(self, settings: Settings) -> None:
        """Use settings read after the first frame: theme, permission mode, and their warnings."""
        self.settings = settings
        self._use_settings_mode()
        self._apply_theme()
        for warning in settings.warnings:
            self.notify(warning, severity="warning", timeout=15)

    def _follow_settings(self, settings: Settings) -> None:
        """Settings the server applies later (files edited while the app runs, read again as a task
        starts): the theme and permission mode follow when the files changed them, so a mode the
        person picked with a key stays otherwise."""
        before, self.settings = self.settings, settings
        if before is settings:
            return
        if before is None or settings.permissions.mode != before.permissions.mode:
            self._use_settings_mode()
        if before is None or settings.theme != before.theme:
            self._apply_theme()
        if before is not None and settings.model != before.model:
            self._show_draft_models()
        for warning in settings.warnings:
            if before is None or warning not in before.warnings:
                self.notify(warning, severity="warning", timeout=15)

    def _check_settings(self) -> None:
        """Settings files edited while the app is open apply now (theme, mode, the model of a session
        not sent yet), not only at the next prompt; a file broken by the edit is said once, by its
        message (each prompt then fails with it until the file is fixed), when two looks in a row
        found it so: an editor that empties a file before writing it is not caught in between."""
        from harnez.errors import HarnezError

        if self._server is None or self._server_closed:
            return
        try:
            self._server.reread_settings()
        except HarnezError as exc:
            seen, self._settings_seen = self._settings_seen, exc.message
            if exc.message == seen and exc.message != self._settings_problem:
                self._settings_problem = exc.message
                self.notify(
                    f"{exc.message} Prompts fail until it is fixed.",
                    title="Settings not applied",
                    severity="error",
                    timeout=20,
                )
            return
        self._settings_problem = self._settings_seen = None

    def _show_draft_models(self) -> None:
        """Sessions open but not sent yet took the new default model (`Server.update_settings`):
        their status lines say so now, not at their first prompt."""
        from harnez.tui.screens.session import SessionScreen

        for screen in self.screen_stack:
            draft = self.server.draft(screen.session_id) if isinstance(screen, SessionScreen) else None
            if isinstance(screen, SessionScreen) and draft is not None:
                screen.show_model(draft.model)

    async def _first_screen(self) -> None:
        from harnez.errors import SessionNotFoundError

        if self.continue_latest:
            if self._server is None:
                where = self._database() if self._database is not None else "this project"
                raise SessionNotFoundError(
                    f"No saved session in {self.workspace}: there is no database at "
                    f"{where}. Start one with `harnez`."
                )
            record = await self.server.newest_session(self.workspace)
            await self.open_session(record.id)
        elif self.resume:
            await self._resume(self.resume)
        elif self._first_picker is not None:
            self._first_picker.attach(self._server, self._database_opener())
        elif self.start_with_picker:
            self.open_picker(at_start=True)
        elif self.needs_setup:
            self.open_setup()
        else:
            await self.open_new_session()
        self._first_screen_chosen = True

    # screens ----------------------------------------------------------------------------------

    def _show(self, screen: Any) -> None:
        from harnez.tui.screens.session import SessionScreen

        # A session replaces the one shown, except the first one when it is the default screen
        # (the bottom of the stack cannot be switched): the new one goes on top of it.
        if isinstance(self.screen, SessionScreen) and len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    async def open_new_session(self) -> None:
        """Show a fresh, unsaved session of this workspace."""
        from harnez.tui.screens.session import SessionScreen

        self._model_given = None  # a new session's model is the settings', `--model` included
        model = getattr(self.settings, "model", None)
        draft = self.server.create_session(self.workspace, model=model)
        waiting = next(
            (s for s in self.screen_stack if isinstance(s, SessionScreen) and not s.attached), None
        )
        if waiting is not None:
            await waiting.attach(draft.id, draft.title, draft.model)
        else:
            self._show(SessionScreen(draft.id, draft.title, draft.model))
        self._ask_hook_trust(self.workspace)

    async def open_session(self, id_or_prefix: str) -> None:
        """Show a stored session (an id or a unique prefix); refused while the session shown runs a
        `!command` (its screen's worker runs it: leaving would stop it), as /new and /resume are."""
        from harnez.errors import HarnezError
        from harnez.tui.screens.session import SessionScreen

        shown = self.screen
        if isinstance(shown, SessionScreen) and shown.command_running:
            raise HarnezError(
                "A command is running: Esc stops it, or wait for it to end, then open the session again."
            )
        record = await self._with_given_model(await self.server.get_session(id_or_prefix))
        self._show(SessionScreen(record.id, record.display_title, record.model))
        self._ask_hook_trust(Path(record.workspace))

    async def _with_given_model(self, record: SessionRecord) -> SessionRecord:
        """The first stored session opened, switched to `--model` when given (once); a model refused
        (an unknown provider) is said, and the session keeps its own."""
        from harnez.errors import HarnezError

        model, self._model_given = self._model_given, None
        if model is None or model == record.model:
            return record
        try:
            return await self.server.select_model(record.id, model)
        except HarnezError as exc:
            self.notify(f"--model {model} not used: {exc.message}", severity="error", timeout=10)
            return record

    def _ask_hook_trust(self, workspace: Path) -> None:
        """Ask, once per workspace, to trust the project's hooks its tasks would run (a modal)."""
        from harnez.tui.screens.hook_trust import ask_hook_trust

        ask_hook_trust(self, self.server, workspace, self._hooks_asked)

    async def _resume(self, id_or_prefix: str) -> None:
        """`--resume ID`: the session in this project's database, else in the project the index finds it in."""
        from harnez.errors import SessionNotFoundError
        from harnez.server.projects import AllProjects

        if self._server is not None:
            try:
                await self.open_session(id_or_prefix)
                return
            except SessionNotFoundError:
                if self._database is None:
                    raise
        elif self._database is None:
            raise SessionNotFoundError(f"No session {id_or_prefix!r}: this app has no database.")
        projects = AllProjects()
        try:
            record, database = await projects.locate(id_or_prefix)
        finally:
            projects.close()
        await self.open_choice(record.id, database)

    async def open_choice(self, session_id: str, database: Path | None) -> None:
        """Open a session chosen in the picker, in its own project: another project's database replaces
        this one (refused while a task of this process runs: closing would cancel it)."""
        from harnez.errors import HarnezError

        current = None if self._server is None else Path(self._server.database).resolve()
        if database is not None and database != current:
            if self._server is not None and self._server.chains.sessions():
                raise HarnezError(
                    "A task is running here: wait for it to end (or press Esc in it), then open "
                    "a session of another project."
                )
            record = await self._move_to(database, session_id)
            self.workspace = Path(record.workspace)
        await self.open_session(session_id)

    async def _move_to(self, database: Path, session_id: str):  # -> SessionRecord
        """Close this project's server and open another database's in its place."""
        await self._stop_workers()
        await self._close_server()
        self._clear_sessions()
        await self._open(self._open_server(database=database))
        return await self.server.get_session(session_id)

    def _clear_sessions(self) -> None:
        """Drop the screens of the project being left (all but the bottom one, which cannot go)."""
        from harnez.tui.screens.picker import PickerScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, PickerScreen):
            self.pop_screen()

    def open_picker(self, at_start: bool = False) -> None:
        """Show the resume picker; choosing a session opens it (in its own project), choosing nothing
        in an empty picker starts a new session, Esc returns (or quits at start)."""
        from harnez.tui.screens.picker import PickerScreen

        picker = PickerScreen(self._server, self.workspace, open_database=self._database_opener())
        self.push_screen(picker, partial(self._picker_chosen, at_start=at_start))

    def _database_opener(self) -> Callable[[Path], Awaitable[Server]] | None:
        """Opens another project's database for the picker (None when the app opens only its own)."""
        return None if self._database is None else (lambda database: self._open_server(database=database))

    async def _picker_chosen(self, choice: PickerChoice | None, at_start: bool = False) -> None:
        """Open the session chosen in a picker (in its own project), or start a new one; Esc in the
        picker shown at start quits."""
        from harnez.errors import HarnezError

        if choice is None:
            if at_start:
                self.call_next(self.quit_harnez)
            else:
                await self._leave_deleted_session()
            return
        try:
            if choice.session_id is None:
                await self._start_fresh()
            else:
                await self.open_choice(choice.session_id, choice.database)
        except HarnezError as exc:
            self.notify(exc.message, severity="error", timeout=10)
            if at_start and self._first_picker is None:
                self.open_picker(at_start=True)  # the first picker stays under, still listing

    async def _leave_deleted_session(self) -> None:
        """Back from the picker to a session deleted meanwhile (in the picker itself, or by another
        process): a new session of this workspace replaces it, instead of a screen whose prompts
        would fail."""
        from harnez.errors import SessionNotFoundError
        from harnez.tui.screens.session import SessionScreen

        screen = self.screen
        if not isinstance(screen, SessionScreen) or not screen.attached or self._server is None:
            return
        if self._server.draft(screen.session_id) is not None:
            return  # not saved yet: there is nothing to delete
        try:
            await self._server.get_session(screen.session_id)
        except SessionNotFoundError:
            await self.open_new_session()
            self.notify("The session shown was deleted: this is a new one.", timeout=4)

    async def _start_fresh(self) -> None:
        """The picker's "start a new session": open this project's database first if it was not."""
        if self._server is None:
            await self._open(self._open_server())
        if self.needs_setup:
            self.open_setup()
        else:
            await self.open_new_session()

    # first run --------------------------------------------------------------------------------

    @property
    def needs_setup(self) -> bool:
        """Whether a new session would open with no model (the app was given settings that name none)."""
        return self.settings is not None and self.settings.model is None

    def open_setup(self, then: Callable[[str], Awaitable[None]] | None = None) -> None:
        """Show the first-run setup; what it saves is applied, then a new session opens (with or
        without) — or, given `then`, it is called with the model saved (`/model` with none configured)."""
        from harnez.server.models import DEFAULT_PORTS, probe_local_servers
        from harnez.tui.screens.setup import SetupScreen

        assert self.settings is not None
        ports = self.probe_ports if self.probe_ports is not None else DEFAULT_PORTS
        probe = self._local_probe or (lambda: probe_local_servers(ports))
        self.push_screen(SetupScreen(self.settings, probe, ports), partial(self._after_setup, then=then))

    async def _after_setup(
        self, result: SetupResult | None, then: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        from harnez.errors import HarnezError
        from harnez.settings import load_settings

        saved = False
        if result is not None:
            try:
                self.apply_settings(load_settings(self.workspace))
            except HarnezError as exc:
                self.notify(exc.message, severity="error", timeout=15)
            else:
                saved = True
                note = f" {result.note}" if result.note else ""
                self.notify(f"Model {result.model} saved to {result.path}.{note}", timeout=10)
        if then is None:
            await self.open_new_session()
        elif saved and result is not None:
            await then(result.model)

    def apply_settings(self, settings: Settings) -> None:
        """Use new settings in the app, the server, its work and model naming from now on."""
        self.settings = settings
        self.server.update_settings(settings)

    # actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Shift+Tab cycles the mode on the session screen; elsewhere (forms, dialogs) it moves the
        # focus backwards as usual.
        if action == "cycle_mode":
            from harnez.tui.screens.session import SessionScreen

            return isinstance(self.screen, SessionScreen)
        return True

    def action_cycle_mode(self) -> None:
        """Shift+Tab: ask → accept-edits → read-only → ask."""
        index = PERMISSION_MODES.index(self.permission_mode)
        self.permission_mode = PERMISSION_MODES[(index + 1) % len(PERMISSION_MODES)]

    async def action_quit(self) -> None:
        """Close the server (cancelling running tasks, committing events), then exit."""
        await self.quit_harnez()

    def action_help_quit(self) -> None:
        """Ctrl+C where the prompt and the picker do not take it (an approval prompt, a dialog): as
        there, a second press within `QUIT_WINDOW` quits, and a first one says so. Textual's own did
        nothing there (it names a quit key only when the screen shown binds one)."""
        from time import monotonic

        from harnez.tui.widgets.keys import QUIT_WINDOW

        armed_at, now = self._ctrl_c_at, monotonic()
        if armed_at is not None and now - armed_at <= QUIT_WINDOW:
            self.call_next(self.quit_harnez)
            return
        self._ctrl_c_at = now
        self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)

    async def quit_harnez(self, return_code: int = 0) -> None:
        """Stop the screens' workers, close the server and exit (with `return_code`). A person's quit
        (not a closed terminal's) notes how to open the session shown again."""
        if return_code == 0:
            self.resume_id = await self._id_to_resume()
        await self._stop_workers()
        await self._close_server()
        self.exit(return_code=return_code)

    async def _id_to_resume(self) -> str | None:
        """The shortest id `--resume` opens the session shown with, None when it is not stored (a new
        session no prompt was sent in, one deleted meanwhile) or nothing can be read."""
        from harnez.errors import HarnezError
        from harnez.tui.screens.session import SessionScreen

        shown = next((s for s in reversed(self.screen_stack) if isinstance(s, SessionScreen)), None)
        server = self._server
        if shown is None or not shown.attached or server is None or self._server_closed:
            return None
        if server.draft(shown.session_id) is not None:
            return None
        for form in (shown.session_id[:RESUME_PREFIX], shown.session_id):
            with contextlib.suppress(HarnezError):  # several share the prefix, or it was deleted
                if (await server.get_session(form)).id == shown.session_id:
                    return form
        return None

    async def _stop_workers(self) -> None:
        """Cancel the workers that read from the server (following a session, loading a page) and
        wait briefly for them, so none of them touches the store after it closed."""
        try:
            current = get_current_worker()
        except NoActiveWorker:
            current = None
        others = [w for w in self.workers if w is not current and not w.is_finished]
        for worker in others:
            worker.cancel()

        async def ended(worker: Worker) -> None:
            with contextlib.suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(ended(w) for w in others)), WORKER_STOP_WAIT)

    async def _close_server(self) -> None:
        if self._server is not None and not self._server_closed:
            self._server_closed = True
            await self._server.close()

    async def on_unmount(self) -> None:
        self._installed_collector.remove()
        await self._close_server()


def _import_server_side() -> None:
    """Import what opening the server needs (settings, store, wires, agent: ~250 ms on a cold start)."""
    for name in SERVER_SIDE_MODULES:
        importlib.import_module(name)


def _prepare_answers() -> None:
    """Import and build what showing the first answer needs (Textual's Markdown, markdown-it and
    its rules: ~100 ms on a cold start), in the calling thread."""
    from harnez.tui.widgets.markdown import warm_up

    warm_up()


EARLY_KEYS_CHECK = 0.02
"""Seconds between two looks for the first focused widget while early keys are kept."""

EARLY_KEYS_KEPT = 4096
"""Early keys kept at most (a first screen that never takes focus must not keep them all)."""

SETTINGS_CHECK_EVERY = 2.0
"""Seconds between two looks at the settings files while the app is open (two small reads)."""

UNASKED_AFTER = 0.5
"""Seconds a call may wait before the app says no screen shown asks it (the session's screen takes
the live event at once)."""

UNASKED_TITLE_SHOWN = 24
"""Characters of the waiting session's title that notice shows (a longer one ends with "…")."""

UNASKED_NOTICE_SECONDS = 60
"""How long that notice stays at most: the task waits until the person answers (it goes as soon as
the call is answered or its session's screen shows)."""

UNASKED_CHECK_EVERY = 0.25
"""Seconds between two looks at whether that notice still holds."""

RESUME_PREFIX = 8
"""Digits of a session id the resume line after quitting shows (as the transcript's links do)."""

SERVER_SIDE_MODULES = ("harnez.settings", "harnez.server.server", "harnez.server.factory")
"""Modules the start-up worker imports off the event loop."""


def run_tui(
    open_server: ServerOpener,
    workspace: Path,
    settings: Settings | None = None,
    *,
    resume: str | None = None,
    open_picker: bool = False,
    continue_latest: bool = False,
    model: str | None = None,
    load_settings: Callable[[], Settings] | None = None,
    database: Callable[[], Path] | None = None,
    early_database: Callable[[], Path | None] | None = None,
    session_dir: Path | None = None,
) -> int:
    """Run the TUI until the person quits; the process exit code (2 for an unknown session id or
    bad settings, whose one-line reason goes to stderr once the screen is restored). The line after
    quitting that says how to resume names `session_dir` (`--session-dir`) when one was given: a
    session kept there is not found without it."""
    app = HarnezApp(
        open_server,
        workspace,
        settings,
        resume=resume,
        open_picker=open_picker,
        continue_latest=continue_latest,
        model=model,
        load_settings=load_settings,
        database=database,
        early_database=early_database,
    )
    app.run()
    if app.failure:
        print(f"harnez: {app.failure}", file=sys.stderr)
    elif app.resume_id is not None:
        where = f" --session-dir {shlex.quote(str(session_dir))}" if session_dir is not None else ""
        print(f"Resume this session with: harnez --resume {app.resume_id}{where}")
    return app.return_code or 0
