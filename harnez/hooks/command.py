"""One hook command run to its end: bash in the workspace, the event on stdin, its output and exit code kept."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harnez.errors import HookError
from harnez.redaction import command_environment
from harnez.text import valid_text

OUTPUT_CAP = 64 * 1024
"""Bytes of stdout and of stderr kept from a hook, the last ones (a decision is a few lines)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a hook command ended: its exit code (None when killed at its timeout) and what it printed."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False


async def run_command(
    command: str, stdin: bytes, workspace: Path, timeout: float, pass_env: Iterable[str] = ()
) -> CommandResult:
    """Run `bash -c command` in its own process group with the shell tool's credential-free
    environment; past `timeout` seconds, or when the task is cancelled, the whole group is killed."""
    started = time.monotonic()
    try:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=command_environment(pass_env),
        )
    except OSError as exc:
        raise HookError(
            f"Could not start the hook `{command}` in {workspace}: {exc.strerror or exc}."
        ) from None
    try:
        out, err = await asyncio.wait_for(_exchange(process, stdin), timeout)
    except TimeoutError:
        await _kill_group(process)
        return CommandResult(None, "", "", round(time.monotonic() - started, 3), timed_out=True)
    except asyncio.CancelledError:
        await _kill_group(process)
        raise
    return CommandResult(process.returncode, _text(out), _text(err), round(time.monotonic() - started, 3))


async def _exchange(process: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes]:
    """Write the event, read both outputs to their end (keeping only their tails), wait for the exit."""
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    out, err, _ = await asyncio.gather(
        _tail(process.stdout), _tail(process.stderr), _feed(process.stdin, stdin)
    )
    await process.wait()
    return out, err


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    """The event on stdin, then end of input; a hook that does not read it is fine."""
    try:
        pipe.write(data)
        await pipe.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        pipe.close()


async def _tail(stream: asyncio.StreamReader) -> bytes:
    """Everything a stream gives until its end, of which only the last OUTPUT_CAP bytes are kept."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        kept += chunk
        del kept[:-OUTPUT_CAP]
    return bytes(kept)


def _text(data: bytes) -> str:
    return valid_text(data.decode("utf-8", errors="replace"))


async def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the hook and everything it started, then collect it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
