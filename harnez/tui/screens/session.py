"""The session screen: title bar, transcript, prompt and status line, all driven by server events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static

from harnez.errors import HarnezError, SessionBusyError, SessionNotFoundError, StoreError
from harnez.server.totals import SessionTotals
from harnez.text import printable
from harnez.tui import bridge
from harnez.tui.commands import SlashCommand, SlashCommandError, parse_slash
from harnez.tui.notices import keep_toasts_above
from harnez.tui.widgets.blocks import RunningShell
from harnez.tui.widgets.completion import CompletionMenu
from harnez.tui.widgets.delegation import DelegationPanel
from harnez.tui.widgets.origin import OriginLine, harness_name, read_origin
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine, TitleBar
from harnez.tui.widgets.transcript import Transcript

if TYPE_CHECKING:  # the event vocabulary (~100 ms of dataclass set-up) is imported after the first frame
    from harnez import events as ev
    from harnez.events import LiveOutput, StoredEvent
    from harnez.server.server import Server
    from harnez.tui.screens.approval import ApprovalAnswer, ApprovalRequest, ApprovalScreen

NEW_SESSION_TITLE = "New session"
FOLLOW_POLL = 1.0
"""Seconds between reads of the store for events appended by another process."""
SHOW_RUNNING_AFTER = 0.15
"""Seconds a `!command` runs before its live block shows (a quick one shows only its result)."""
OLDER_PROMPTS = 100
"""What the person sent before the events a reopened session shows, read for Up (the newest ones)."""
ELSEWHERE_RECHECK = 3.0
"""Seconds between checks that the process running this session's task elsewhere still lives: one
killed mid-task writes no `finished`."""
OUTPUT_BELOW = "↓ new output below (Ctrl+End)"

STEERING_WAITS = "steering, for the model's next turn: "
"""What marks a steering message sent and not yet read by the model (above the prompt)."""
"""Shown above the prompt while the transcript is scrolled up and output arrived since."""


def slash_command_provider() -> type:
    """The command-palette provider of the slash commands, imported when the palette first opens
    (`textual.command` is not needed for the first frame)."""
    from harnez.tui.palette import SlashCommandProvider

    return SlashCommandProvider


def _history_text(body: ev.EventBody) -> str | None:
    """What Up recalls of a sent event: a prompt as typed, a `!` line with its bangs; None for others."""
    from harnez import events as ev

    match body:
        case ev.UserMessage(text=text) | ev.PromptQueued(text=text):
            return text
        case ev.ShellLine(command=command, shared=shared):
            return ("!!" if shared else "!") + command
    return None


def _other_process(pid: int | None) -> str:
    return f"Another Harnez process (pid {pid})" if pid else "Another Harnez process"


class SessionHost(Protocol):
    """What the session screen asks of its app (harnez.tui.app.HarnezApp)."""

    @property
    def server(self) -> Server: ...

    @property
    def permission_mode(self) -> str: ...

    async def open_new_session(self) -> None: ...

    async def open_session(self, id_or_prefix: str) -> None: ...

    def open_picker(self, at_start: bool = False) -> None: ...

    async def quit_harnez(self) -> None: ...

    def open_setup(self, then: Callable[[str], Awaitable[None]] | None = None) -> None: ...


class SessionScreen(Screen[None]):
    """One session: renders its events as they are stored and sends what the person types."""

    COMMANDS = Screen.COMMANDS | {slash_command_provider}
    AUTO_FOCUS = "PromptInput"
    BINDINGS = [
        # Before the prompt's own (its cursor by pages): the transcript is what a page key is for.
        Binding("pageup", "scroll_transcript(-1)", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", "Scroll down", show=False, priority=True),
        Binding("ctrl+end", "transcript_end", "Jump to the end", show=False, priority=True),
    ]

    def __init__(self, session_id: str | None, title: str | None, model: str | None) -> None:
        super().__init__()
        self.session_id: str = session_id or ""
        """The session shown (it may still be an unsaved draft); empty until `attach`."""
        self.attached = session_id is not None
        """Whether the screen shows a session. A screen made before the server opened (the first
        frame of `harnez`) takes keys at once and is attached when the server is ready."""
        self._early: list[PromptInput.Submitted] = []
        """What was sent before the screen was attached, sent in order once it is."""
        self._request_first = bridge.RequestFirst()
        """Holds the frames of a prompt that starts a task until its first output (harnez/tui/bridge.py)."""
        self.session_title = title or NEW_SESSION_TITLE
        self.model = model
        self.totals = SessionTotals()
        """Tokens, cost and context of the whole session (stored totals, then live events)."""
        self.queued = 0
        self.task_running = False
        self.elsewhere = False
        """Whether the task running is another process's (`harnez run --resume`, another terminal's
        app, `harnez serve`): this process can neither queue behind it nor stop it."""
        self._shell_lines = 0
        """`!` lines running on past their first moments (shown as a running block)."""
        self._approvals: list[ApprovalRequest] = []
        """Calls waiting for an answer behind the prompt shown (one prompt at a time)."""
        self._approval_screen: ApprovalScreen | None = None
        self._unwatch_output: Callable[[], None] | None = None
        """Stops showing the session's running commands' output live (`Server.watch_output`)."""

    @property
    def harnez(self) -> SessionHost:
        """The app, as this screen uses it."""
        return cast(SessionHost, self.app)

    @property
    def server(self) -> Server:
        """The in-process server."""
        return self.harnez.server

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title-bar")
        yield OriginLine(id="origin")
        yield Transcript(id="transcript")
        yield Static(OUTPUT_BELOW, id="output-below")
        yield Static(id="steering-waits", markup=False)
        yield CompletionMenu(id="completion")
        yield PromptInput(id="prompt")
        yield StatusLine(id="status")

    def on_unmount(self) -> None:
        # A hold's timer dies with the screen: end it here, or the app would never paint again.
        self._request_first.release()
        self._stop_watching_output()

    def _stop_watching_output(self) -> None:
        if self._unwatch_output is not None:
            self._unwatch_output()
            self._unwatch_output = None

    def _live_output(self, output: LiveOutput) -> None:
        """A running command of one of this session's tool calls printed `output`: shown under its call."""
        if self.is_attached:
            self.query_one(Transcript).live_output(output.call_id, output.text)

    def on_mount(self) -> None:
        self.set_title(self.session_title)
        status = self.query_one(StatusLine)
        status.model = self.model or ""
        status.mode = self.harnez.permission_mode
        self.watch(self.app, "permission_mode", self._show_mode, init=False)
        self.query_one(PromptInput).menu = self.query_one(CompletionMenu)
        keep_toasts_above(
            self,
            self.query_one("#steering-waits"),
            self.query_one(CompletionMenu),
            self.query_one(PromptInput),
        )
        if self.attached:
            self._follow()
        else:
            status.state = "opening…"
        self.set_interval(ELSEWHERE_RECHECK, self._recheck_elsewhere, name="running elsewhere")

    async def attach(self, session_id: str, title: str | None, model: str | None) -> None:
        """Show this session (the server is open now), then send what was typed meanwhile."""
        self.session_id, self.attached = session_id, True
        self.model = model
        self.query_one(StatusLine).model = model or ""
        self.set_title(title or NEW_SESSION_TITLE)
        self._follow()
        early, self._early = self._early, []
        for message in early:
            await self.on_prompt_input_submitted(message)

    def show_model(self, model: str | None) -> None:
        """The model this session's next task runs (a new default taken by a session not sent yet)."""
        self.model = model
        if self.is_mounted:
            self.query_one(StatusLine).model = model or ""

    async def prepare_answer(self) -> None:
        """Mount the transcript's spare answer block now (the app's warm-up, before a new session is
        attached): the first one of a process parses the answer widgets' stylesheets (20-40 ms), which
        a prompt sent as soon as the session shows would otherwise wait for."""
        await self.query_one(Transcript).keep_spare()

    def _follow(self) -> None:
        self._stop_watching_output()
        self._unwatch_output = self.server.watch_output(self.session_id, self._live_output)
        self.task_running = self.server.running(self.session_id) is not None
        self._show_state()
        self.find_workspace()
        self.show_origin()
        self.follow_session()

    def _show_mode(self, mode: str) -> None:
        self.query_one(StatusLine).mode = mode

    # events -----------------------------------------------------------------------------------

    @work(group="follow", exclusive=True)
    async def follow_session(self) -> None:
        """Render the newest stored events, then every live event, in order."""
        try:
            await self._follow_events()
        except NoMatches:
            if self.is_attached and self.query(StatusLine):
                raise
            # The screen was closed (its widgets removed) while an event was being shown.
        except StoreError as exc:
            # Saving stopped (a full disk): say so and stay open; the transcript keeps what was shown.
            self.task_running = False
            self.query_one(StatusLine).state = "not saving"
            self.notify(exc.message, title="Harnez stopped saving", severity="error", timeout=60)
        except SessionNotFoundError:
            # Deleted while shown (another terminal's picker): the app crashed on it. What was shown
            # stays; a prompt sent now is refused with the same error, kept in the box.
            self.task_running = self.elsewhere = False
            self.query_one(StatusLine).state = "deleted"
            self.notify(
                "This session was deleted (by another Harnez window?): what it shows stays here, but "
                "nothing more can be sent to it. /new starts a new session.",
                title="Session deleted",
                severity="warning",
                timeout=30,
            )

    async def _follow_events(self) -> None:
        transcript = self.query_one(Transcript)
        window = await bridge.newest_events(self.server, self.session_id)
        if not self.task_running:  # read after the window: a task that ends later ends in a live event
            await self._note_elsewhere()
        for event in window.events:
            self._note(event, live=False)
        await transcript.follow(window.events, window.has_older)
        self.totals = await self.server.session_totals(self.session_id, up_to=window.last_seq)
        self.query_one(StatusLine).show_totals(self.totals)
        if window.has_older:  # Up recalls the prompts sent before the newest events too
            older = await self.server.prompts_before(self.session_id, window.events[0].seq, OLDER_PROMPTS)
            texts = (_history_text(event.body) for event in older)
            self.query_one(PromptInput).remember_older([text for text in texts if text])
        # Polling follows appends made by other processes too (a headless run, a rename elsewhere).
        async for event in self.server.subscribe(self.session_id, after=window.last_seq, poll=FOLLOW_POLL):
            await self._request_first.before_prompt(event.body, self.server, self.session_id)
            await transcript.apply(event)
            self._note(event, live=True)
            self._request_first.seen(event.body)

    async def _note_elsewhere(self) -> None:
        """Say so when another process runs a task in the session: `Server.running` knows only this
        process's, and the session showed idle until that task's next event. A task whose process
        died since this one opened is closed now (its `interrupted` comes as a live event)."""
        if await self.server.running_elsewhere(self.session_id) is not None:
            self.task_running, self.elsewhere = True, True
            self._show_state()
        else:
            await self.server.close_abandoned(self.session_id)

    async def _recheck_elsewhere(self) -> None:
        """While the status says another process runs the task: whether it still lives. One killed
        (kill -9, its terminal closed under it) writes no `finished`, and the session showed running
        elsewhere, refusing nothing but stopping nothing, until Esc."""
        if not (self.attached and self.elsewhere and self.is_attached):
            return
        # A busy or failing store: the next check tries again (a session deleted meanwhile: nothing to do).
        with contextlib.suppress(HarnezError):
            if await self.server.running_elsewhere(self.session_id) is None:
                await self._elsewhere_ended()

    async def _elsewhere_ended(self) -> None:
        """The process that ran the task elsewhere is gone: its task is closed as interrupted (whose
        `finished` shows like any other's) and the session is idle."""
        await self.server.close_abandoned(self.session_id)
        if self.elsewhere:  # unless a task of this process started meanwhile
            self.task_running, self.elsewhere = False, False
            self._show_state()

    def _note(self, event: StoredEvent, live: bool) -> None:
        """Update the title, status line and prompt history from an event."""
        from harnez import events as ev

        body = event.body
        if live and self.totals.add(body):
            self.query_one(StatusLine).show_totals(self.totals)
        match body:
            case ev.TitleChanged(title=title):
                self.set_title(title or NEW_SESSION_TITLE)
            case ev.Started(model=model, thinking=thinking):
                shown = f"{model}:{thinking}" if thinking and thinking != "off" else model
                self.query_one(StatusLine).model = shown
            case ev.ModelChanged(model=model):
                self.model = model
                self.query_one(StatusLine).model = model
            case ev.UserMessage() | ev.PromptQueued() | ev.ShellLine():
                self.query_one(PromptInput).remember(_history_text(body) or "")
            case ev.ApprovalRequired() | ev.ApprovalResolved() | ev.Finished():
                self._note_approval(body)
        if live:
            self._track_state(body, event.task)

    def _track_state(self, body: ev.EventBody, task: int | None) -> None:
        from harnez import events as ev

        match body:
            case ev.UserMessage(mode="prompt" | "command"):
                run = self.server.running(self.session_id)
                self.task_running, self.elsewhere = True, run is None or run.task_id != task
                self.queued = max(0, self.queued - 1)
            case ev.PromptQueued():
                self.queued += 1
            case ev.Finished(stop=stop):
                self.task_running, self.elsewhere = False, False
                if stop == "cancelled":
                    self.queued = 0
            case _:
                return
        self._show_state()

    def _show_state(self) -> None:
        if self.task_running:
            state = "running elsewhere" if self.elsewhere else "running"
        else:
            state = "command running" if self._shell_lines else "idle"
        if self.queued:
            state += f" · {self.queued} queued"
        self.query_one(StatusLine).state = state
        self.query_one(PromptInput).running = self.task_running

    def action_scroll_transcript(self, pages: int) -> None:
        """Scroll the transcript by a page (older events are read at its top; at its end it follows
        the stream again). At once, not after the next frame as Textual's `scroll_to` does: a position
        computed now would be wrong after a layout that mounted blocks above it (`Transcript.arrange`)."""
        transcript = self.query_one(Transcript)
        page = max(transcript.scrollable_content_region.height - 1, 1)
        transcript.scroll_to(y=transcript.scroll_y + pages * page, animate=False, immediate=True)

    def action_transcript_end(self) -> None:
        """Back to the transcript's end from wherever the person scrolled up to, following it again
        (End is the prompt's, for its line)."""
        self.query_one(Transcript).jump_to_end()

    def on_transcript_output_below(self, message: Transcript.OutputBelow) -> None:
        self.query_one("#output-below").display = message.arrived

    def on_transcript_steering_waits(self, message: Transcript.SteeringWaits) -> None:
        """Steering messages sent and not yet read by the model show above the prompt, not in the
        transcript below the answer still streaming (written before the model read them)."""
        shown = self.query_one("#steering-waits", Static)
        shown.update(
            Content("\n").join(
                Content.assemble((STEERING_WAITS, "italic"), printable(text, one_line=True))
                for text in message.texts
            )
        )
        shown.display = bool(message.texts)

    def set_title(self, title: str) -> None:
        """Show a new title in the title bar and the status line at once (control characters escaped:
        a title stored by an older Harnez may hold any)."""
        title = printable(title, one_line=True)
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

    # approvals --------------------------------------------------------------------------------

    def _note_approval(self, body: ev.ApprovalRequired | ev.ApprovalResolved | ev.Finished) -> None:
        """Queue a prompt for a call that waits for an answer; close prompts answered elsewhere.

        Stored events count too: a session reopened while one of its calls waits shows the prompt.
        """
        from harnez.events import ApprovalRequired, Finished

        if isinstance(body, ApprovalRequired):
            if self._waiting(body.call_id) and all(r.call_id != body.call_id for r in self._approvals):
                self._approvals.append(body)
                self._next_approval()
            return
        finished = isinstance(body, Finished)
        call_id = None if isinstance(body, Finished) else body.call_id
        if finished:
            self._approvals.clear()
        else:
            self._approvals = [r for r in self._approvals if r.call_id != call_id]
        shown = self._approval_screen
        if shown is not None and (finished or shown.request.call_id == call_id):
            shown.withdraw()

    def _waiting(self, call_id: str) -> bool:
        # A sub-agent's call waits under its parent's session: its own screen asks it too, or the
        # person who opened it from the parent's panel saw "Waiting for approval" and no prompt.
        return self.server.approvals.waits(self.session_id, call_id)

    def _asked_already(self, call_id: str) -> bool:
        """Whether another screen's prompt asks the call: a sub-agent's is asked by its own screen and
        by its parent's when that one stays beneath (the first screen shown), one answer for both."""
        from harnez.tui.screens.approval import ApprovalScreen

        waiting = self.server.approvals.key(self.session_id, call_id)
        return any(isinstance(s, ApprovalScreen) and s.waiting == waiting for s in self.app.screen_stack)

    def _next_approval(self) -> None:
        if self._approval_screen is not None:
            return
        while self._approvals:
            request = self._approvals.pop(0)
            if self._waiting(request.call_id) and not self._asked_already(request.call_id):
                from harnez.tui.screens.approval import ApprovalScreen

                waiting = self.server.approvals.key(self.session_id, request.call_id)
                self._approval_screen = ApprovalScreen(request, waiting)
                self.app.push_screen(self._approval_screen, partial(self._answered, request))
                return

    def _answered(self, request: ApprovalRequest, answer: ApprovalAnswer | None) -> None:
        self._approval_screen = None
        if answer is not None and answer.stop_task:
            self._approvals.clear()
            self.notify("Cancelling…", timeout=2)
            self.cancel_task()
            return
        if answer is not None:
            try:
                self.server.answer_approval(self.session_id, request.call_id, answer.verdict, answer.reason)
            except HarnezError as exc:
                self.notify(str(exc), severity="error")
        self._next_approval()

    # input ------------------------------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if not self.attached:
            self._early.append(message)
            self.query_one(StatusLine).state = f"opening… · {len(self._early)} waiting"
            return
        if message.text.startswith("!"):
            shared = message.text.startswith("!!")
            self._show_end()
            self.run_shell_line(message.text[2:] if shared else message.text[1:], shared)
            return
        try:
            command = parse_slash(message.text)
        except SlashCommandError as exc:
            self.notify(str(exc), severity="error")
            self._give_back(message.text)
            return
        if command is not None:
            if not await self.run_command(*command):
                self._give_back(message.text)
            return
        self._show_end()
        if not self.task_running:
            self._request_first.hold(self)  # a prompt that starts a task: its request goes first
        try:
            await self.server.submit(
                self.session_id,
                message.text,
                steer=message.steer and self.task_running,
                options={"mode": self.harnez.permission_mode},
            )
        except SessionBusyError as exc:
            self._request_first.release()
            self._refused_elsewhere(exc.pid)
            self._give_back(message.text)
        except HarnezError as exc:
            self._request_first.release()
            self.notify(str(exc), severity="error")
            self._give_back(message.text)

    def _refused_elsewhere(self, pid: int | None) -> None:
        """A prompt the server refused because another process runs a task here: the status says so
        (until that task's `finished`), and the notice says the prompt is kept for later."""
        self.task_running, self.elsewhere = True, True
        self._show_state()
        self.notify(
            f"{_other_process(pid)} runs a task in this session: your prompt was not sent and stays in "
            "the box. Send it when that task ends.",
            severity="warning",
            timeout=10,
        )

    def _give_back(self, text: str) -> None:
        """Put a prompt that was not taken back in the (empty) prompt, to be sent again or mended: the
        history alone kept it, and the refusal's notice did not say so."""
        prompt = self.query_one(PromptInput)
        if not prompt.text:
            prompt.load_text(text)
            prompt.move_cursor(prompt.document.end)

    def _show_end(self) -> None:
        """Bring the transcript back to its end (from wherever the person scrolled up to read): what
        is sent shows there, and the view follows what comes after it."""
        transcript = self.query_one(Transcript)
        if not transcript.is_vertical_scroll_end:  # at the end it follows already: nothing to do
            transcript.scroll_end(animate=False)

    async def on_prompt_input_cancel_requested(self, _: PromptInput.CancelRequested) -> None:
        if not self.attached:
            return
        if self.workers.cancel_group(self, "shell"):
            self.notify("Stopping the shell command…", timeout=2)
        if self.server.running(self.session_id) is not None:
            self.notify("Cancelling…", timeout=2)
            self.cancel_task()
        elif self.elsewhere:
            await self._cannot_cancel_elsewhere()

    async def _free_of_elsewhere(self, command: SlashCommand) -> bool:
        """Whether a command that writes into the session may run though it showed a task another
        process runs: /model wrote its change among that task's events, and /compact was refused with
        the store's words. True once that process is gone."""
        pid = await self.server.running_elsewhere(self.session_id)
        if pid is None:
            await self._elsewhere_ended()
            return True
        self.notify(
            f"{_other_process(pid)} runs a task in this session: wait for it to end (or stop it there), "
            f"then run /{command.name} again.",
            severity="warning",
            timeout=6,
        )
        return False

    async def _cannot_cancel_elsewhere(self) -> None:
        """Esc on a task another process runs: say it cannot be stopped from here (nothing is sent).
        A process that has ended meanwhile (killed before its `finished`) leaves the session idle."""
        pid = await self.server.running_elsewhere(self.session_id)
        if pid is None:
            await self._elsewhere_ended()
            self.notify("Nothing to stop: the task another Harnez process ran here has ended.", timeout=4)
            return
        self.notify(
            f"{_other_process(pid)} runs this task: it cannot be stopped from here. Stop it there, "
            "or wait for it to end.",
            severity="warning",
            timeout=8,
        )

    @property
    def command_running(self) -> bool:
        """Whether a `!command` of this screen runs (shown running): leaving the screen would stop it."""
        return self._shell_lines > 0

    @work(group="shell")
    async def run_shell_line(self, command: str, share: bool = False) -> None:
        """Run a `!command` on the server; its `shell-line` event shows it (the model sees it only when
        shared: `!!command`)."""
        running: RunningShell | None = None
        early: list[str] = []  # what printed before the running block was shown

        def show(text: str) -> None:
            if running is None:
                early.append(text)
            elif running.is_attached:
                running.tail.add(text)

        job = asyncio.ensure_future(
            self.server.run_shell(
                self.session_id, command, mode=self.harnez.permission_mode, share=share, on_output=show
            )
        )
        try:
            # A command refused or done at once shows only its line; one that runs on shows as it runs.
            await asyncio.wait({job}, timeout=SHOW_RUNNING_AFTER)
            if not job.done():
                running = await self.query_one(Transcript).show_running_shell(command.strip())
                for text in early:
                    running.tail.add(text)
                self._shell_lines += 1
                self._show_state()
            await job
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
        finally:
            if not job.done():  # Esc: the command is stopped; its partial line is still stored
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError, HarnezError):
                    await job
            if running is not None:
                self._shell_lines -= 1
                if self.is_attached:  # not when the screen was left (another session opened)
                    self._show_state()
                if running.is_mounted:
                    await running.remove()

    async def on_delegation_panel_opened(self, message: DelegationPanel.Opened) -> None:
        """Show the child session of a delegate call (the picker lists no child sessions)."""
        await self._open_linked(message.child)

    async def on_origin_line_opened(self, message: OriginLine.Opened) -> None:
        """Show the session an imported one was forked from, resumed from or ran under (or a sub-agent's
        parent)."""
        await self._open_linked(message.session_id)

    async def _open_linked(self, session_id: str) -> None:
        try:
            await self.harnez.open_session(session_id)
        except HarnezError as exc:
            self.notify(str(exc), severity="warning" if self.command_running else "error", timeout=6)

    @work(group="origin", exclusive=True)
    async def show_origin(self) -> None:
        """Say above the transcript where an imported session or a sub-agent's came from (nothing for
        Harnez's other sessions)."""
        try:
            origin = await read_origin(self.server, self.session_id)
        except HarnezError:
            return  # deleted meanwhile: there is nothing to say
        for line in self.query(OriginLine):  # none once the screen is gone (the app quit, another shown)
            line.show(origin)

    async def open_parent(self) -> None:
        """`/parent`: open the session this imported one was forked from, resumed from or ran under, or
        the one whose delegate call made this sub-agent's session."""
        try:
            origin = await read_origin(self.server, self.session_id)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        if origin is None or origin.relation is None:
            self.notify(
                "This session names no session it came from: /parent opens the session an imported fork, "
                "resumed session or sub-agent run came from.",
                severity="warning",
                timeout=6,
            )
        elif origin.parent is None:
            self.notify(
                f"This session is {origin.relation} {harness_name(origin.harness)} session "
                f"{origin.parent_original_id}, which is not imported: import it (`harnez import`), then "
                "/parent opens it.",
                severity="warning",
                timeout=8,
            )
        else:
            await self._open_linked(origin.parent)

    @work(group="workspace")
    async def find_workspace(self) -> None:
        """Tell the completion menu which workspace's files `@` offers."""
        menu, draft = self.query_one(CompletionMenu), self.server.draft(self.session_id)
        try:
            workspace = (
                draft.workspace if draft else (await self.server.get_session(self.session_id)).workspace
            )
        except HarnezError:
            return  # deleted meanwhile: `@` then offers no files
        menu.workspace = Path(workspace)

    def on_completion_menu_chosen(self, _: CompletionMenu.Chosen) -> None:
        self.query_one(PromptInput).accept_completion()

    @work(group="cancel", exclusive=True)
    async def cancel_task(self) -> None:
        """Ask the server to cancel the running task (and drop the queued ones)."""
        await self.server.cancel(self.session_id)

    def on_prompt_input_quit_requested(self, _: PromptInput.QuitRequested) -> None:
        self.app.call_next(self.harnez.quit_harnez)

    async def run_command(self, command: SlashCommand, argument: str) -> bool:
        """Run a slash command (typed, or chosen in the command palette); False when it was refused
        (the prompt then keeps what was typed)."""
        if not self.attached and command.name not in ("help", "quit"):
            self.notify(f"Still opening: /{command.name} works in a moment.", timeout=3)
            return False
        task = self.server.running(self.session_id) is not None
        if not command.during_task and (task or self.command_running):
            # /new and /resume left the task running unseen, its approvals waiting for nobody (and
            # stopped a `!` command: this screen's worker runs it).
            self.notify(
                f"{'A task' if task else 'A command'} is running: Esc stops it, or wait for it to end, "
                f"then run /{command.name} again.",
                severity="warning",
                timeout=6,
            )
            return False
        if command.changes_session and self.elsewhere and not await self._free_of_elsewhere(command):
            return False
        match command.name:
            case "session-name":
                if argument:
                    await self.rename(argument)
                else:
                    from harnez.tui.screens.dialogs import RenameDialog

                    self.app.push_screen(RenameDialog(self.session_title), self._renamed)
            case "new":
                await self.harnez.open_new_session()
            case "resume":
                self.harnez.open_picker()
            case "parent":
                await self.open_parent()
            case "model":
                if argument:
                    await self.choose_model(argument)
                else:
                    self.pick_model()
            case "compact":
                await self.compact()
            case "help":
                from harnez.tui.screens.dialogs import HelpScreen

                self.app.push_screen(HelpScreen())
            case "quit":
                self.app.call_next(self.harnez.quit_harnez)
        return True

    @work(group="model", exclusive=True)
    async def pick_model(self) -> None:
        """`/model` without an argument: choose from the configured models, or type one."""
        from harnez.tui.screens.model_picker import ModelPickerScreen

        choices = await self.server.model_choices()
        if not choices and not self.server.settings.providers:
            # Nothing configured (the first-run setup was closed): the setup again, for this session.
            self.harnez.open_setup(then=self.choose_model)
            return
        current = self.query_one(StatusLine).model or self.model
        self.app.push_screen(ModelPickerScreen(choices, current), self._model_chosen)

    async def _model_chosen(self, model: str | None) -> None:
        if model:
            await self.choose_model(model)

    async def choose_model(self, model: str) -> None:
        """Use `model` for this session's next tasks; it must name a configured provider."""
        try:
            record = await self.server.select_model(self.session_id, model)
        except HarnezError as exc:
            self.notify(exc.message, severity="error", timeout=8)
            return
        self.model = record.model
        self.query_one(StatusLine).model = record.model or ""
        self.notify(f"Model: {record.model}", timeout=3)

    async def compact(self) -> None:
        """`/compact`: summarise the older conversation now (a task of its own)."""
        try:
            await self.server.compact(self.session_id)
            self._show_end()
        except HarnezError as exc:
            self.notify(exc.message, severity="warning", timeout=6)

    async def _renamed(self, name: str | None) -> None:
        if name:
            await self.rename(name)

    async def rename(self, name: str) -> None:
        """Rename the session through the server and show the new title at once."""
        try:
            stored = await self.server.rename(self.session_id, name)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.set_title(stored)
