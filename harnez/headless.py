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

from harnez.errors import HarnezError
from harnez.events import StoredEvent
from harnez.server import Server
from harnez.settings import Settings, parse_model_ref

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


@contextlib.asynccontextmanager
async def open_headless_server(opts: RunOptions) -> AsyncIterator[Server]:
    """The server for a headless run; with --no-session, over a throw-away database."""
    scratch = Path(tempfile.mkdtemp(prefix="harnez-no-session-")) if opts.no_session else None
    if scratch is not None:
        database = scratch / "harnez.sqlite"
    elif opts.session_dir is not None:
        database = opts.session_dir / "harnez.sqlite"
    else:
        database = opts.settings.database_file(opts.workspace, os.environ)
    from harnez.agent.work import AgentWork
    from harnez.titles.model import make_model_titler

    server = await Server.open(database, opts.settings, AgentWork(opts.settings, approve=opts.approve))
    for notice in server.notices:
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
    if opts.resume is None or opts.no_session:
        return server.create_session(opts.workspace, opts.model or opts.settings.model).id, 0
    record = (await server.newest_session(opts.workspace) if opts.resume == "latest"
              else await server.get_session(opts.resume))
    return record.id, await server.store.events.last_seq(record.num)


class TaskPrinter:
    """Prints one task's events: JSON Lines, or the answer's text as it streams."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self._printed_in_turn = False

    def show(self, event: StoredEvent) -> None:
        """Print one event."""
        if self.as_json:
            self.out.write(event.dumps() + "\n")
            self.out.flush()
            return
        if event.kind == "text-delta":
            self.out.write(event.payload.get("text", ""))
            self.out.flush()
            self._printed_in_turn = True
        elif event.kind == "turn-retried":
            void = "; the partial answer above is void" if self._printed_in_turn else ""
            print(f"{chr(10) if self._printed_in_turn else ''}harnez: retrying (attempt {event.payload.get('attempt')}): {event.payload.get('reason')}{void}",
                  file=sys.stderr)
            self._printed_in_turn = False
        elif event.kind in ("turn-completed", "turn-started"):
            if event.kind == "turn-completed" and self._printed_in_turn:
                self.out.write("\n")
            self._printed_in_turn = False
        elif event.kind == "error" or (event.kind == "warning" and event.payload.get("code") not in QUIET_CODES):
            print(f"harnez: {event.kind}: {event.payload.get('message')}", file=sys.stderr)
        elif event.kind == "approval-required":
            print(f"harnez: {event.payload.get('tool')} needs approval; this run answers "
                  f"per --approve", file=sys.stderr)
        elif event.kind == "finished" and event.payload.get("error"):
            print(f"harnez: task {event.payload['stop']}: {event.payload['error']}", file=sys.stderr)


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
        raise HarnezError("Nothing to run: pass --input TEXT or pipe the prompt on stdin.")
    async with open_headless_server(opts) as server:
        session_id, after = await _session_for(server, opts)
        stop = await run_task(server, session_id, after, prompt, opts, TaskPrinter(out, opts.json))
    return EXIT_BY_STOP.get(stop, 1)


async def chat(opts: RunOptions, lines: Callable[[], str], out: TextIO = sys.stdout) -> int:
    """`harnez chat`: each stdin line is a follow-up in one session; `exit` or EOF ends."""
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
