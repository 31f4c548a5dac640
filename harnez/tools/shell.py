"""The shell tool: `bash -c` in the workspace, in its own process group, timeout, tail-kept output."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from harnez.errors import HarnezError, ToolError
from harnez.redaction import command_environment
from harnez.tools.base import Tool, ToolCancelled, ToolContext, ToolParams, ToolResult, WorkspacePath

OUTPUT_CAP_BYTES = 32 * 1024
"""Only the last this-many bytes of output are kept: errors and summaries come at the end."""
DEFAULT_TIMEOUT = 120.0
TERM_GRACE = 0.5
"""Seconds the process group gets to exit after SIGTERM before SIGKILL."""
EOF_GRACE = 0.5
"""Seconds to wait for the output to close after the command itself exited."""
QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class ShellParams(ToolParams):
    command: str = Field(min_length=1, description="Bash command line, run with `bash -c` in the workspace.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT, gt=0, le=600, description="Seconds before the command is killed."
    )


@dataclass
class OutputTail:
    """The last `cap` bytes of a stream, and how many bytes before them were dropped."""

    cap: int = OUTPUT_CAP_BYTES
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        excess = len(self.data) - self.cap
        if excess > 0:
            del self.data[:excess]
            self.dropped += excess

    def text(self) -> str:
        body = bytes(self.data).decode("utf-8", errors="replace")
        if not self.dropped:
            return body
        return f"[… {self.dropped} earlier bytes of output dropped; the last {len(self.data)} follow]\n{body}"


class StartInterrupted(asyncio.CancelledError):
    """A cancellation that arrived while a command started; `job` is the started command."""

    def __init__(self, job: ShellJob) -> None:
        super().__init__("cancelled while starting")
        self.job = job


class ShellJob:
    """One running command: its process group, and a pump copying its output into a tail."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        transport: asyncio.ReadTransport,
        reader: asyncio.StreamReader,
        on_output: Callable[[str], None] | None,
    ) -> None:
        self.process = process
        self.transport = transport
        self.tail = OutputTail()
        self.pump = asyncio.create_task(self._copy(reader, on_output))

    @classmethod
    async def start(
        cls,
        command: str,
        workspace: Path,
        on_output: Callable[[str], None] | None,
        pass_env: frozenset[str] = frozenset(),
    ) -> ShellJob:
        """Start the command. A cancellation meanwhile lets the start finish, then arrives as
        `StartInterrupted` carrying the job, so the caller stops it like any running command (a
        half-started one would be left running, its output unread)."""
        starting = asyncio.ensure_future(cls._start(command, workspace, on_output, pass_env))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            raise StartInterrupted(await starting) from None

    @classmethod
    async def _start(
        cls,
        command: str,
        workspace: Path,
        on_output: Callable[[str], None] | None,
        pass_env: frozenset[str],
    ) -> ShellJob:
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=workspace,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                preexec_fn=_die_with_harnez if _PRCTL is not None else None,
                env={**command_environment(pass_env), **QUIET_ENV},
            )
        except OSError as exc:
            os.close(read_fd)
            raise ToolError(f"Could not start bash in {workspace}: {exc}.") from exc
        finally:
            os.close(write_fd)
        reader = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
        return cls(process, transport, reader, on_output)

    async def _copy(self, reader: asyncio.StreamReader, on_output: Callable[[str], None] | None) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await reader.read(65536):
            self.tail.add(chunk)
            if on_output is not None:
                on_output(decoder.decode(chunk))

    async def wait(self, timeout: float) -> bool:
        """Wait for the command to exit; False if the timeout came first."""
        waiter = asyncio.ensure_future(self.process.wait())
        done, _ = await asyncio.wait([waiter], timeout=timeout)
        if not done:
            waiter.cancel()
        return bool(done)

    async def kill(self) -> None:
        """SIGTERM the whole process group, then SIGKILL whatever is left after a short grace."""
        try:
            _signal_group(self.process.pid, signal.SIGTERM)
            deadline = time.monotonic() + TERM_GRACE
            while _group_alive(self.process.pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        finally:
            if _group_alive(self.process.pid):
                _signal_group(self.process.pid, signal.SIGKILL)
        await self.process.wait()

    async def finish_output(self, grace: float) -> None:
        """Collect the rest of the output; stop reading if it stays open (a background job holds it)."""
        done, _ = await asyncio.wait([self.pump], timeout=grace)
        if not done:
            self.pump.cancel()
            await asyncio.wait([self.pump])
        self.transport.close()
        if not self.pump.cancelled():
            self.pump.result()  # re-raises a failure of the output callback


def stop_orphaned_group(pgid: int, leader_start: int | None) -> int:
    """Kill what is left of a command's process group after the Harnez that ran it died; how many.

    Only processes of that group that started no earlier than its leader are touched, so a process
    group id reused by something else since is left alone. Linux only (needs /proc).
    """
    members = [
        pid
        for pid, group, start in _processes()
        if group == pgid and (leader_start is None or start >= leader_start)
    ]
    for pid in members:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(members)


def _processes() -> list[tuple[int, int, int]]:
    """(pid, process group, start time in ticks) of every process this user can see."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if len(fields) > 19 and fields[0] not in ("Z", "X"):
            found.append((int(entry.name), int(fields[2]), int(fields[19])))
    return found


def _die_with_harnez() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGKILL the command when the Harnez that started it dies (kill -9 included)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:  # Harnez died before the request took effect
            os._exit(137)


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # resolved now, not in the forked child
    except (OSError, AttributeError):
        return None


_PR_SET_PDEATHSIG = 1
_PRCTL = _load_prctl()


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return  # every process of the group has already exited


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class ShellTool(Tool):
    name: ClassVar[str] = "shell"
    description: ClassVar[str] = (
        "Run a bash command line in the workspace (`bash -c`, no stdin, stdout and stderr merged). "
        f"Only the last {OUTPUT_CAP_BYTES // 1024} KiB of output are kept. Reports the exit code and "
        "duration. Killed with its whole process group on timeout. Background jobs should redirect "
        "their output to a file."
    )
    parameters: ClassVar[type[ToolParams]] = ShellParams
    kind = "shell"
    operation = "execute"

    def targets(self, args: ToolParams, workspace: Path) -> list[WorkspacePath]:
        return []

    async def run(self, args: ShellParams, ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        try:
            job = await ShellJob.start(args.command, ctx.workspace, ctx.on_output, ctx.pass_env)
        except StartInterrupted as interrupted:
            raise await _stopped(interrupted.job, args, started) from None
        token = None
        try:
            if ctx.processes is not None:
                with contextlib.suppress(HarnezError):  # unrecorded, it still runs under our watch
                    token = await ctx.processes.started(job.process.pid, args.command)
            exited = await job.wait(args.timeout)
            if not exited:
                await job.kill()
            await job.finish_output(grace=EOF_GRACE if exited else 0.2)
        except asyncio.CancelledError:
            raise await _stopped(job, args, started) from None
        finally:
            if ctx.processes is not None and token is not None:
                with contextlib.suppress(HarnezError):  # a failed write is reported by the task itself
                    await asyncio.shield(ctx.processes.ended(token))
        return _result(job, args, started, timed_out=not exited)


async def _stopped(job: ShellJob, args: ShellParams, started: float) -> ToolCancelled:
    """Kill a cancelled command's group; the cancellation to raise, carrying what it printed."""
    await job.kill()
    await job.finish_output(grace=0.2)
    return ToolCancelled(_result(job, args, started, cancelled=True))


def _result(
    job: ShellJob, args: ShellParams, started: float, *, cancelled: bool = False, timed_out: bool = False
) -> ToolResult:
    duration = round(time.monotonic() - started, 3)
    code = job.process.returncode
    details = {
        "command": args.command,
        "exit_code": code,
        "duration": duration,
        "timed_out": timed_out,
        "cancelled": cancelled,
        "dropped_bytes": job.tail.dropped,
    }
    if cancelled:
        trailer = (
            f"[cancelled by the user after {duration:.1f} s; the command and its process group were killed]"
        )
    elif timed_out:
        trailer = (
            f"[timed out after {args.timeout:g} s; the command and its process group were killed. "
            "Raise `timeout` or run something quicker.]"
        )
    elif code is not None and code < 0:
        trailer = f"[killed by signal {-code} after {duration:.1f} s]"
    else:
        trailer = f"[exit code {code} after {duration:.1f} s]"
    output = job.tail.text()
    content = f"{output.rstrip()}\n{trailer}" if output.strip() else f"(no output)\n{trailer}"
    failed = timed_out or cancelled or code != 0
    return ToolResult(content, details, is_error=failed, cancelled=cancelled)
