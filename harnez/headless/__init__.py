"""Headless front ends: `harnez run` (one task, text or JSON Lines) and `harnez chat` (a line at a time)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn, TextIO

from harnez.errors import SessionNotFoundError, StartInterrupted, UsageError
from harnez.events import (
    Answered,
    AnswerNudged,
    ApprovalResolved,
    Error,
    EventBody,
    Finished,
    HookRan,
    StoredEvent,
    TextDelta,
    TurnCompleted,
    TurnRetried,
    TurnStarted,
    WarningEvent,
)
from harnez.headless.provider import AdHocProvider
from harnez.outcome import Stop
from harnez.server import Server, SessionRecord
from harnez.settings import Settings, parse_model_ref
from harnez.text import json_line, printable

QUIET_CODES = frozenset({"unpriced-model"})
"""Warnings the text output leaves to --json: they would repeat on every run of a local model."""

NAMING_GRACE = 10.0
"""Seconds a headless command waits, after its task, for the session's title before exiting."""

EXIT_BY_STOP = {"completed": 0, "failed": 1, "interrupted": 1, "incomplete": 3, "cancelled": 130}


@dataclass
class RunOptions:
    """What `harnez run` and `harnez chat` were asked."""

    workspace: Path
    settings: Settings
    model: str | None = None
    resume: str | None = None
    no_session: bool = False
    session_dir: Path | None = None
    max_steps: int | None = None
    timeout: float | None = None
    approve: Literal["deny", "allow"] = "deny"
    json: bool = False
    output_schema: dict[str, Any] | None = None
    """`--output-schema`: the task answers through the answer tool; text mode prints that answer only."""
    trust_hooks: bool = False
    """`--trust-hooks`: trust the project's hooks as they are now (remembered, docs/hooks.md)."""
    provider: AdHocProvider = field(default_factory=AdHocProvider)
    """`--base-url`, `--wire`, `--api-key-env`: the provider of this run's model (never saved)."""
    programs: tuple[str, ...] | None = None
    """`--programs`: the only programs the shell tool may start (None: settings decide)."""
    fixed_workspace: bool = False
    """Whether `--workspace` named the workspace (a resumed session must then be one of its own)."""
    task_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.no_session and self.resume is not None:
            raise UsageError(
                "--no-session starts from nothing and keeps nothing, so it cannot continue a session: "
                "drop --resume for a throw-away run, or drop --no-session to continue it."
            )
        if self.model:
            parse_model_ref(self.model)  # a bad reference is a usage error before anything opens
        if self.provider.given and (self.model or not self.resuming):
            name = self.provider.provider_of(self.model or self.settings.model)
            self.settings = self.provider.apply(self.settings, name)
        self.task_options = {"max_steps": self.max_steps, "timeout": self.timeout, "approve": self.approve}
        if self.output_schema is not None:
            self.task_options["output_schema"] = self.output_schema

        if self.programs is not None:
            self.task_options["programs"] = list(self.programs)

    @property
    def resuming(self) -> bool:
        """Whether the run continues a saved session (`--resume`)."""
        return self.resume is not None

    @property
    def database(self) -> Path:
        """The database a saved run uses: `--session-dir`, else the settings' or the workspace's."""
        if self.session_dir is not None:
            return self.session_dir / "harnez.sqlite"
        return self.settings.database_file(self.workspace, os.environ)


def check_before_opening(opts: RunOptions) -> None:
    """Refuse what cannot run before any database is opened or created (each a CLI exit 2).

    A session to resume needs a database; the model a new session (or `--model`) names needs a
    configured provider and its key variable. A resumed session's own model is known only once
    its database is open, so it is checked when the task starts.
    """
    from harnez.server.models import check_model

    if opts.resuming and not opts.database.exists():
        wanted = "No saved session" if opts.resume == "latest" else f"No session {opts.resume!r}"
        raise SessionNotFoundError(
            f"{wanted} in {opts.workspace}: there is no database at {opts.database}. "
            "Start one without --resume."
        )
    if opts.model or not opts.resuming:
        check_model(opts.settings, opts.model)  # --model, else the settings' default


@contextlib.asynccontextmanager
async def open_headless_server(opts: RunOptions) -> AsyncIterator[Server]:
    """The server for a headless run; with --no-session, over a throw-away database."""
    scratch = Path(tempfile.mkdtemp(prefix="harnez-no-session-")) if opts.no_session else None
    database = opts.database if scratch is None else scratch / "harnez.sqlite"
    from harnez.server.factory import open_agent_server

    server = await open_agent_server(database, opts.settings, approve=opts.approve, remember=scratch is None)
    for notice in server.notices:
        print(f"harnez: note: {notice}", file=sys.stderr)
    try:
        yield server  # each task's run waited for its naming (`run_task`)
    finally:
        await server.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


async def _session_for(server: Server, opts: RunOptions) -> tuple[str, int]:
    """(session id, the cursor to print after) — a new session, the newest, or one by id."""
    if not opts.resuming:
        return server.create_session(opts.workspace, opts.model or opts.settings.model).id, 0
    wanted = opts.resume or "latest"
    record = await _newest_session(server, opts) if wanted == "latest" else await server.get_session(wanted)
    _resume_under_flags(server, record.id, record.workspace, record.model, opts)
    return record.id, await server.last_seq(record.id)


async def _newest_session(server: Server, opts: RunOptions) -> SessionRecord:
    """`--resume latest`: the workspace's newest session. None is said in the run's words (the server's
    own told to start one with `harnez`, the full-screen app)."""
    try:
        return await server.newest_session(opts.workspace)
    except SessionNotFoundError:
        raise SessionNotFoundError(
            f"No saved session in {opts.workspace} to resume: drop --resume to start one."
        ) from None


def _resume_under_flags(
    server: Server, session_id: str, workspace: str, model: str | None, opts: RunOptions
) -> None:
    """A resumed session keeps its own workspace; an ad-hoc provider serves the model it runs (`--model`,
    else its own), whichever workspace's settings it runs under. Each problem is a usage error."""
    from harnez.server.models import check_model

    if opts.fixed_workspace and Path(workspace) != opts.workspace:
        raise UsageError(
            f"Session {session_id[:12]} works in {workspace}; --workspace {opts.workspace} cannot move it. "
            "Drop --workspace to continue it there, or start a new session without --resume."
        )
    if opts.provider.given:
        name = opts.provider.provider_of(opts.model or model)
        server.overlay_settings(lambda settings: opts.provider.apply(settings, name))
        check_model(server.settings_for(workspace), opts.model or model)


class TaskPrinter:
    """Prints one task's events: JSON Lines, or the answer's text: as it streams to a terminal, a turn at
    a time to a pipe or a file (a retried turn's partial text must not stay in what a script reads).

    Everything printed is made safe for a terminal first (`harnez.text`): a model, a tool or a
    provider's message cannot retitle, clear or reorder the screen.
    """

    def __init__(
        self, out: TextIO, as_json: bool, answer_only: bool = False, no_session: bool = False
    ) -> None:
        self.out = out
        self.as_json = as_json
        self.no_session = no_session
        """`--no-session`: an incomplete task has no session to continue (`ended_line`)."""
        self.answer_only = answer_only
        """Text mode of `--output-schema`: stdout is kept for the answer, printed by `print_answer`."""
        self.answer: Answered | None = None
        """The newest `answered` event of the task."""
        self._printed_in_turn = False
        self._held: list[str] | None = None if _is_terminal(out) else []
        """The text of the turn in progress, held when stdout is no terminal: written when the turn
        completes (or the task ends), dropped when the turn is retried. A terminal shows it as it comes,
        and a retry there starts on a line of its own, the partial one said void on stderr."""

    def show(self, event: StoredEvent) -> None:
        """Print one event."""
        if self.as_json:
            self.out.write(event.dumps() + "\n")
            self.out.flush()
            if isinstance(event.body, Finished) and event.body.error:
                self._say(ended_line(event.body.stop, event.body.error, event.session, self.no_session))
            return
        self._show_text(event.body, event.session)

    def _show_text(self, body: EventBody, session_id: str) -> None:
        """The answer on stdout as it streams; what went wrong (and what the run decided) on stderr."""
        if isinstance(body, Finished) and self._printed_in_turn:  # a turn cut short: what it said is kept
            self._end_turn()
            self._printed_in_turn = False
        match body:
            case Answered() as answered:
                self.answer = answered
            case TextDelta(text=text) if not self.answer_only:
                if self._held is None:
                    self.out.write(printable(text))
                    self.out.flush()
                else:
                    self._held.append(printable(text))
                self._printed_in_turn = True
            case TurnRetried(attempt=attempt, delay=delay, reason=reason):
                # The wait is said (as the app says it): a 429's Retry-After can hold the run for
                # `retry.max_delay` (30 s) a time with nothing else on the screen.
                shown = self._printed_in_turn and self._held is None
                if shown:
                    self.out.write("\n")
                    self.out.flush()
                elif self._held:
                    self._held.clear()
                void = "; the partial answer above is void" if shown else ""
                self._say(f"retrying (attempt {attempt}, in {delay:.1f} s): {reason}{void}")
                self._printed_in_turn = False
            case TurnStarted() | TurnCompleted():
                if self._printed_in_turn:
                    self._end_turn()
                self._printed_in_turn = False
            case Error(message=message):
                self._say(f"error: {message}")
            case WarningEvent(code=code, message=message) if code not in QUIET_CODES:
                self._say(f"warning: {message}")
            case ApprovalResolved(name=name, verdict=verdict, by="policy"):
                self._say(policy_line(name, verdict))
            case HookRan(decision="block", hook=hook, command=command, reason=reason):
                self._say(f"the {hook} hook `{command}` blocked{': ' + reason if reason else ''}")
            case AnswerNudged():
                self._say(
                    "the model ended without an answer; it is told once more to answer through the tool"
                )
            case Finished(stop=stop, error=error) if error:
                self._say(ended_line(stop, error, session_id, self.no_session))

    def print_answer(self, stop: Stop) -> int:
        """`--output-schema` without `--json`: the answer alone on stdout; the exit code."""
        if stop != "completed":
            return EXIT_BY_STOP.get(stop, 1)
        if self.answer is None:
            self._say("the task completed without a valid answer through the answer tool")
            return EXIT_BY_STOP["failed"]
        self.out.write(json_line(self.answer.answer) + "\n")
        self.out.flush()
        return EXIT_BY_STOP["completed"]

    def _end_turn(self) -> None:
        """A turn's text is complete: written now when it was held, and its line ended."""
        if self._held:
            self.out.write("".join(self._held))
            self._held.clear()
        self.out.write("\n")
        self.out.flush()

    def _say(self, text: str) -> None:
        """A notice on stderr, `harnez: …`."""
        print(f"harnez: {printable(text)}", file=sys.stderr, flush=True)


BUDGET_FLAGS = {"(max_steps)": "--max-steps", "time budget": "--timeout"}
"""How an incomplete task's stored reason names its budget, and the flag of `run` that sets it."""


def ended_line(stop: Stop, error: str, session_id: str, no_session: bool) -> str:
    """Why a task ended, for stderr. An incomplete one's stored reason is the app's: it names the settings
    `max_steps` and `timeout` and says to continue the session; a run says the flag that sets the budget
    for a run and the command that continues the session, or, under `--no-session`, that nothing is kept."""
    if stop != "incomplete":
        return f"task {stop}: {error}"
    fact = error.split(";")[0].split(" Continue the session")[0].rstrip(".")
    flag = next((flag for words, flag in BUDGET_FLAGS.items() if words in fact), None)
    if flag is None:  # not a budget of the run (a stop hook's limit): the stored reason says what to raise
        advice = "raise hooks.stop_limit"
    else:
        fact = fact.replace("(max_steps)", "(--max-steps)")
        advice = f"raise {flag}"
    if no_session:
        return f"task incomplete: {fact}; {advice} and run it again (--no-session kept nothing to continue)"
    return f'task incomplete: {fact}; continue with `harnez run --resume {session_id[:12]} "…"`, or {advice}'


def _is_terminal(out: TextIO) -> bool:
    """Whether `out` is a terminal (a stream without a descriptor, as in tests, is not)."""
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def policy_line(name: str, verdict: str) -> str:
    """What `--approve` answered for a call that needed approval, and how to have it answered otherwise
    (the refusal was said only as "needs approval; this run answers per --approve": nothing said the
    call did not run, nor how to let it)."""
    if verdict == "deny":
        return (
            f"{name} did not run: it needs approval and this run cannot ask (--approve deny); "
            "run with --approve allow to let such calls run"
        )
    return f"{name} needs approval: allowed without asking (--approve allow)"


async def run_task(
    server: Server, session_id: str, after: int, prompt: str, opts: RunOptions, printer: TaskPrinter
) -> Stop:
    """Submit one prompt and print every event the session stores after `after`, in order and with no
    gap: the prompt, the task up to its `finished`, then what the run waits for (naming) before it
    ends. Returns the task's stop."""
    events = server.subscribe(session_id, after=after)
    try:
        pending = asyncio.ensure_future(anext(events))  # subscribed before the prompt is stored
        await asyncio.sleep(0)
        try:
            task_id = await server.submit(session_id, prompt, model=opts.model, options=opts.task_options)
        except BaseException:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)  # its error is the one being raised
            raise
        with _cancel_on_interrupt(server, session_id, opts.no_session):
            end = await _print_task(events, await pending, task_id, printer)
        await _wait_for_naming(server)
        newest, printed = await server.last_seq(session_id), end.seq
        try:
            while printed < newest:  # a title chosen after the end, a naming warning
                event = await anext(events)
                printer.show(event)
                printed = event.seq
        except BrokenPipeError:
            # A reader that took the task's result (`sed '/"finished"/q'`, as the contract allows) and
            # left: the rest goes nowhere, and the exit code stays the task's, not 1.
            write_nowhere(printer.out)
        assert isinstance(end.body, Finished)
        return end.body.stop
    finally:
        await events.aclose()


async def _print_task(
    events: AsyncIterator[StoredEvent], first: StoredEvent, task_id: int, printer: TaskPrinter
) -> StoredEvent:
    """Print from `first` on until the task's `finished` (printed too), which is returned."""
    event = first
    printer.show(event)
    while not (isinstance(event.body, Finished) and event.task == task_id):
        event = await anext(events)
        printer.show(event)
    return event


def write_nowhere(out: TextIO) -> None:
    """Send what is still written to `out` (its unflushed rest included) to /dev/null: its reader went
    away, and a later write or the flush at exit would raise again."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, out.fileno())
    finally:
        os.close(null)


@contextlib.contextmanager
def _cancel_on_interrupt(server: Server, session_id: str, no_session: bool) -> Any:
    """Ctrl-C (SIGINT), SIGTERM or a hang-up of the terminal (SIGHUP) cancels the running task cleanly
    instead of killing the process. A second one, while the cancel has not finished (a tool that ignores
    it, a database another process holds), quits at once: it only asked for the cancel again, and the
    run could wait for good."""
    loop = asyncio.get_running_loop()
    pending: list[asyncio.Task[bool]] = []

    def cancel() -> None:
        if pending:
            _quit_now(server, session_id, no_session)
        pending.append(loop.create_task(server.cancel(session_id)))

    with _on_interrupt(cancel):
        yield


def _quit_now(server: Server, session_id: str, no_session: bool) -> NoReturn:
    """End the process at once, exit 130: the task stays running in the database, and the next open of
    the session marks it interrupted (what was saved is kept), as after a crash."""
    kept = (
        "--no-session kept nothing"
        if no_session
        else f'its session keeps what was saved: `harnez run --resume {session_id[:12]} "…"` continues it'
    )
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    print(
        "harnez: interrupted again while the task was being cancelled: quit at once; the task is left "
        f"interrupted ({kept})",
        file=sys.stderr,
        flush=True,
    )
    if no_session:
        shutil.rmtree(server.database.parent, ignore_errors=True)  # the throw-away database's folder
    os._exit(EXIT_BY_STOP["cancelled"])


async def _wait_for_naming(server: Server) -> None:
    """Wait up to NAMING_GRACE seconds for the session's title. A signal ends the wait, not the process:
    the task has ended, and the run exits with its code (Ctrl-C there was exit 130, as if the completed
    task had been cancelled, and SIGTERM, its handler gone, killed the process)."""
    stop = asyncio.Event()
    waits = [asyncio.ensure_future(server.wait_for_titles(NAMING_GRACE)), asyncio.ensure_future(stop.wait())]
    with _on_interrupt(stop.set):
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)


@contextlib.contextmanager
def _on_interrupt(act: Callable[[], None]) -> Any:
    """Ctrl-C (SIGINT), SIGTERM and a hang-up of the terminal (SIGHUP) call `act` while in the block."""
    loop = asyncio.get_running_loop()
    installed = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        before = signal.getsignal(sig)
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, act)
            installed[sig] = before
    try:
        yield
    finally:
        for sig, before in installed.items():
            loop.remove_signal_handler(sig)
            # The loop leaves SIGTERM and SIGHUP to their default, which kills the process without a word
            # between two such blocks; the handler before (the command line's: exit 130) is put back.
            if before is not None:
                signal.signal(sig, before)


async def run(opts: RunOptions, prompt: str, out: TextIO = sys.stdout) -> int:
    """`harnez run`: one task; the exit code follows its stop."""
    if not prompt.strip():
        raise UsageError(
            "Nothing to run: give the prompt as an argument or with --input TEXT, or pipe it on stdin."
        )
    check_before_opening(opts)
    printer = TaskPrinter(
        out,
        opts.json,
        answer_only=opts.output_schema is not None and not opts.json,
        no_session=opts.no_session,
    )
    async with contextlib.AsyncExitStack() as stack:
        server, session_id, after = await _start(stack, opts)
        stop = await run_task(server, session_id, after, prompt, opts, printer)
    return printer.print_answer(stop) if printer.answer_only else EXIT_BY_STOP.get(stop, 1)


async def _start(stack: contextlib.AsyncExitStack, opts: RunOptions) -> tuple[Server, str, int]:
    """Open the server (closed by `stack`) and the session, under a signal that ends the start-up: Ctrl-C
    there said nothing and SIGTERM killed the process outright (no handler was installed yet). The
    server is closed on the way out, and nothing was sent."""
    task = asyncio.current_task()
    assert task is not None
    interrupted: list[bool] = []

    def stop() -> None:
        interrupted.append(True)
        task.cancel()

    try:
        with _on_interrupt(stop):
            server = await stack.enter_async_context(open_headless_server(opts))
            trust_hooks(server, opts)
            session_id, after = await _session_for(server, opts)
    except asyncio.CancelledError:
        if not interrupted:
            raise
        task.uncancel()
        raise StartInterrupted() from None
    return server, session_id, after


def trust_hooks(server: Server, opts: RunOptions) -> None:
    """`--trust-hooks`: trust the hooks of this workspace's project file as they are now, and say which."""
    review = server.untrusted_hooks(opts.workspace) if opts.trust_hooks else None
    if review is None:
        return
    server.trust_hooks(review)
    commands = "; ".join(review.lines())
    print(
        f"harnez: note: trusted the hooks of {review.settings_file}: {printable(commands)}", file=sys.stderr
    )


async def chat(opts: RunOptions, lines: Callable[[], str], out: TextIO = sys.stdout) -> int:
    """`harnez chat`: each stdin line is a follow-up in one session; `exit` or EOF ends."""
    check_before_opening(opts)
    async with contextlib.AsyncExitStack() as stack:
        server, session_id, after = await _start(stack, opts)
        printer = TaskPrinter(out, opts.json, no_session=opts.no_session)
        # The first task that did not complete gives the exit code: the last task's hid an earlier
        # failure behind a later success (0), where a script piping its questions needs to know.
        first_problem: Stop = "completed"
        while True:
            line = await _next_line(lines)
            if line is None:  # Ctrl-C, SIGTERM or a hang-up while it waited for a line
                return EXIT_BY_STOP["cancelled"]
            if not line or line.strip() == "exit":
                break
            if not line.strip():
                continue
            stop = await run_task(server, session_id, after, line.strip(), opts, printer)
            after = await server.last_seq(session_id)
            if stop == "cancelled":
                return EXIT_BY_STOP["cancelled"]
            if first_problem == "completed":
                first_problem = stop
    return EXIT_BY_STOP.get(first_problem, 1)


async def _next_line(lines: Callable[[], str]) -> str | None:
    """The next line of `chat`'s input, or None when a signal comes first. The line is read in a daemon
    thread: read in the loop's executor, a Ctrl-C at the prompt was held until a line or the end of
    input came (the executor's threads are joined at exit), so Ctrl-C needed Enter after it."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def settle(text: str, error: BaseException | None) -> None:  # in the loop
        if line.done():
            return
        if error is not None:
            line.set_exception(error)
        else:
            line.set_result(text)

    def read() -> None:  # in the thread
        text, error = "", None
        try:
            text = lines()
        except (OSError, ValueError) as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: the chat ended without this line
            loop.call_soon_threadsafe(settle, text, error)

    threading.Thread(target=read, name="harnez-chat-input", daemon=True).start()
    stop = asyncio.Event()
    waits: list[asyncio.Future[Any]] = [line, asyncio.ensure_future(stop.wait())]
    with _on_interrupt(stop.set):
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waits[1].cancel()
    return line.result() if line.done() else None
