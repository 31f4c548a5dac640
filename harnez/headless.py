"""Headless front ends: `harnez run` (one task, text or JSON Lines) and `harnez chat` (a line at a time)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from harnez.errors import SessionNotFoundError, UsageError
from harnez.events import StoredEvent
from harnez.server import Server
from harnez.settings import Settings, parse_model_ref
from harnez.text import printable

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
    approve: str = "deny"
    json: bool = False
    task_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.model:
            parse_model_ref(self.model)  # a bad reference is a usage error before anything opens
        self.task_options = {"max_steps": self.max_steps, "timeout": self.timeout, "approve": self.approve}

    @property
    def resuming(self) -> bool:
        """Whether the run continues a saved session (`--resume`, and not `--no-session`)."""
        return self.resume is not None and not self.no_session

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
    from harnez.agent.work import AgentWork

    if opts.resuming and not opts.database.exists():
        wanted = "No saved session" if opts.resume == "latest" else f"No session {opts.resume!r}"
        raise SessionNotFoundError(f"{wanted} in {opts.workspace}: there is no database at {opts.database}. "
                                   "Start one without --resume.")
    if opts.model or not opts.resuming:
        AgentWork(opts.settings).resolve(opts.model)  # --model, else the settings' default


@contextlib.asynccontextmanager
async def open_headless_server(opts: RunOptions) -> AsyncIterator[Server]:
    """The server for a headless run; with --no-session, over a throw-away database."""
    scratch = Path(tempfile.mkdtemp(prefix="harnez-no-session-")) if opts.no_session else None
    database = opts.database if scratch is None else scratch / "harnez.sqlite"
    from harnez.agent.work import AgentWork
    from harnez.titles.model import make_model_titler

    from harnez.server.projects import remember_database

    server = await Server.open(database, opts.settings, AgentWork(opts.settings, approve=opts.approve))
    remembered = remember_database(server.database) if scratch is None else None  # listed across projects
    for notice in filter(None, [*server.notices, remembered]):
        print(f"harnez: note: {notice}", file=sys.stderr)
    server.set_model_titler(make_model_titler(opts.settings, server.session_model))
    try:
        yield server
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.titles.wait_idle(), NAMING_GRACE)
    finally:
        await server.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


async def _session_for(server: Server, opts: RunOptions) -> tuple[str, int]:
    """(session id, the cursor to print after) — a new session, the newest, or one by id."""
    if not opts.resuming:
        return server.create_session(opts.workspace, opts.model or opts.settings.model).id, 0
    record = (await server.newest_session(opts.workspace) if opts.resume == "latest"
              else await server.get_session(opts.resume))
    return record.id, await server.store.events.last_seq(record.num)


class TaskPrinter:
    """Prints one task's events: JSON Lines, or the answer's text as it streams.

    Everything printed is made safe for a terminal first (`harnez.text`): a model, a tool or a
    provider's message cannot retitle, clear or reorder the screen.
    """

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self._printed_in_turn = False

    def show(self, event: StoredEvent) -> None:
        """Print one event."""
        if self.as_json:
            self.out.write(event.dumps() + "\n")
            self.out.flush()
            if event.kind == "finished" and event.payload.get("error"):
                self._say(f"task {event.payload.get('stop')}: {event.payload['error']}")
            return
        if event.kind == "text-delta":
            self.out.write(printable(event.payload.get("text", "")))
            self.out.flush()
            self._printed_in_turn = True
        elif event.kind == "turn-retried":
            void = "; the partial answer above is void" if self._printed_in_turn else ""
            self._say(f"retrying (attempt {event.payload.get('attempt')}): {event.payload.get('reason')}{void}",
                      new_line=self._printed_in_turn)
            self._printed_in_turn = False
        elif event.kind in ("turn-completed", "turn-started"):
            if event.kind == "turn-completed" and self._printed_in_turn:
                self.out.write("\n")
            self._printed_in_turn = False
        elif event.kind == "error" or (event.kind == "warning" and event.payload.get("code") not in QUIET_CODES):
            self._say(f"{event.kind}: {event.payload.get('message')}")
        elif event.kind == "approval-required":
            self._say(f"{event.payload.get('tool')} needs approval; this run answers per --approve")
        elif event.kind == "finished" and event.payload.get("error"):
            self._say(f"task {event.payload['stop']}: {event.payload['error']}")

    def _say(self, text: str, *, new_line: bool = False) -> None:
        """A notice on stderr, `harnez: …` (after a line break when streamed text left a line open)."""
        start = "\n" if new_line else ""
        print(f"{start}harnez: {printable(text)}", file=sys.stderr, flush=True)


async def run_task(server: Server, session_id: str, after: int, prompt: str, opts: RunOptions,
                   printer: TaskPrinter) -> str:
    """Submit one prompt and print its events until it finishes; returns the stop."""
    events = server.subscribe(session_id, after=after)
    stream = asyncio.ensure_future(events.__anext__())
    await asyncio.sleep(0)
    try:
        task_id = await server.submit(session_id, prompt, model=opts.model, options=opts.task_options)
    except BaseException:
        stream.cancel()
        await asyncio.gather(stream, return_exceptions=True)  # its error is the one being raised
        await events.aclose()
        raise
    stop = "failed"
    with _cancel_on_interrupt(server, session_id):
        while True:
            event = await stream
            stream = asyncio.ensure_future(events.__anext__())
            if event.task not in (task_id, None) or (event.kind == "user-message" and event.task == task_id):
                continue
            printer.show(event)
            if event.kind == "finished" and event.task == task_id:
                stop = event.payload.get("stop", "failed")
                break
    stream.cancel()
    await events.aclose()
    return stop


@contextlib.contextmanager
def _cancel_on_interrupt(server: Server, session_id: str) -> Any:
    """Ctrl-C (SIGINT) or SIGTERM cancels the running task cleanly instead of killing the process."""
    loop = asyncio.get_running_loop()
    pending: list[asyncio.Task[bool]] = []

    def cancel() -> None:
        pending.append(loop.create_task(server.cancel(session_id)))

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, cancel)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def run(opts: RunOptions, prompt: str, out: TextIO = sys.stdout) -> int:
    """`harnez run`: one task; the exit code follows its stop."""
    if not prompt.strip():
        raise UsageError("Nothing to run: give the prompt as an argument or with --input TEXT, or pipe it on stdin.")
    check_before_opening(opts)
    async with open_headless_server(opts) as server:
        session_id, after = await _session_for(server, opts)
        stop = await run_task(server, session_id, after, prompt, opts, TaskPrinter(out, opts.json))
    return EXIT_BY_STOP.get(stop, 1)


async def chat(opts: RunOptions, lines: Callable[[], str], out: TextIO = sys.stdout) -> int:
    """`harnez chat`: each stdin line is a follow-up in one session; `exit` or EOF ends."""
    check_before_opening(opts)
    async with open_headless_server(opts) as server:
        session_id, after = await _session_for(server, opts)
        printer = TaskPrinter(out, opts.json)
        stop = "completed"
        while True:
            line = await asyncio.to_thread(lines)
            if not line or line.strip() == "exit":
                break
            if not line.strip():
                continue
            stop = await run_task(server, session_id, after, line.strip(), opts, printer)
            after = await _last_seq(server, session_id)
            if stop == "cancelled":
                break
    return EXIT_BY_STOP.get(stop, 1)


async def _last_seq(server: Server, session_id: str) -> int:
    record = await server.get_session(session_id)
    return await server.store.events.last_seq(record.num)
