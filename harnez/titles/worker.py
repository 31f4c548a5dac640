"""Keyword titles in a process of their own, so YAKE's import and work never hold this interpreter's lock.

`python -m harnez.titles.worker` reads prompts, one JSON line each (`{"prompt": …}`), and answers each
with a line `{"title": …}`: the title `keyword_title` gives. `KeywordWorker` starts one such process at
the first title, keeps it for the next ones (YAKE is imported once), stops it after an idle minute,
and kills it when a title takes too long, when its caller is cancelled, or when the server closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

from harnez.errors import HarnezError

__all__ = ["IDLE_SECONDS", "WORKER_TIMEOUT", "KeywordWorker", "TitleWorkerError", "worker_command"]

WORKER_TIMEOUT = 30.0
"""Seconds a title may take, a fresh worker's YAKE import included (0.6 s quiet, several under load)."""
IDLE_SECONDS = 60.0
"""A worker with no title to make for this long is stopped (it holds YAKE: ~50 MB resident)."""
WORKER_NICE = 10
"""How much the worker lowers its priority (0 normal, 19 lowest)."""
SHOWN = 200
"""Characters of a failed worker's last stderr line, or of its answer, that its error quotes."""
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding this `harnez` package: the worker starts there, so it imports this very code
(not a `harnez` folder in the workspace, nor another installed copy)."""


class TitleWorkerError(HarnezError):
    """The keyword worker crashed, hung or answered something that is not a title."""


def worker_command() -> tuple[str, ...]:
    """The command of a keyword worker: this interpreter running this module."""
    return (sys.executable, "-m", "harnez.titles.worker")


class KeywordWorker:
    """Keyword titles from one worker process at a time, kept between titles and stopped when idle."""

    def __init__(
        self,
        command: tuple[str, ...] | None = None,
        timeout: float = WORKER_TIMEOUT,
        idle: float = IDLE_SECONDS,
    ) -> None:
        self.command = command or worker_command()
        self.timeout = timeout
        self.idle = idle
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()  # one title at a time through the pipe
        self._idle_stop: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """The running worker's process id, None when none runs."""
        return self._process.pid if self._process is not None else None

    async def title(self, prompt: str) -> str:
        """The keyword title of `prompt`; raises TitleWorkerError (the worker is then stopped)."""
        self._cancel_idle_stop()
        async with self._lock:
            try:
                title = await self._title(prompt)
            except BaseException:
                await self.close()  # failed, or cancelled mid-answer: the pipe is in an unknown state
                raise
            self._cancel_idle_stop()  # armed by a title that ended while this one waited for the lock
            self._idle_stop = asyncio.create_task(self._stop_when_idle(), name="harnez-title-worker-idle")
            return title

    async def _title(self, prompt: str) -> str:
        process = await self._running()
        try:
            line = await asyncio.wait_for(_ask(process, prompt), self.timeout)
        except TimeoutError:
            raise TitleWorkerError(
                f"the keyword title worker gave no title within {self.timeout:g} s and was stopped"
            ) from None
        if not line:
            raise await self._ended(process)
        return _read_answer(line)

    async def close(self) -> None:
        """Stop the worker, if one runs, and reap it."""
        self._cancel_idle_stop()
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def _running(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=PACKAGE_ROOT,
                start_new_session=True,  # its own scheduling group (Linux autogroup), not the TUI's share
            )
        return self._process

    async def _ended(self, process: asyncio.subprocess.Process) -> TitleWorkerError:
        """The error of a worker that closed its output: how it exited and its last stderr line."""
        assert process.stderr is not None
        returncode = await process.wait()
        lines = (await process.stderr.read()).decode("utf-8", errors="replace").strip().splitlines()
        detail = f": {lines[-1][:SHOWN]}" if lines else ""
        return TitleWorkerError(f"the keyword title worker exited with status {returncode}{detail}")

    def _cancel_idle_stop(self) -> None:
        if self._idle_stop is not None:
            self._idle_stop.cancel()
            self._idle_stop = None

    async def _stop_when_idle(self) -> None:
        """Stop the worker once no title has been asked for `idle` seconds."""
        await asyncio.sleep(self.idle)
        if self._lock.locked():
            return  # a title is under way: it arms the next stop when it ends
        self._idle_stop = None  # so that close() does not cancel this very task
        await self.close()


async def _ask(process: asyncio.subprocess.Process, prompt: str) -> bytes:
    """Send one prompt, read one answer line (b"" when the worker ended)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"prompt": prompt}).encode() + b"\n")
    with contextlib.suppress(ConnectionError):  # a dead worker: its output's end says how it died
        await process.stdin.drain()
    return await process.stdout.readline()


def _read_answer(line: bytes) -> str:
    """The title in a worker's answer line, or TitleWorkerError."""
    try:
        title = json.loads(line)["title"]
    except (ValueError, TypeError, KeyError):
        title = None
    if not isinstance(title, str):
        raise TitleWorkerError(f"the keyword title worker answered {line[:SHOWN]!r}, not a title")
    return title


def main() -> None:
    """Answer each prompt line on stdin with its keyword title line on stdout, until stdin ends."""
    from harnez.titles.keywords import keyword_title

    _yield_to_the_server()
    for line in sys.stdin.buffer:
        prompt = json.loads(line)["prompt"]
        sys.stdout.write(json.dumps({"title": keyword_title(prompt)}) + "\n")
        sys.stdout.flush()


def _yield_to_the_server() -> None:
    """Lower this worker's priority: a title can wait, the server's answer and keystrokes cannot.
    Linux's autogroup weighs a session as a whole, so a worker leading its own session (as
    `KeywordWorker` starts it) sets the session's nice value too (where allowed)."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)
    if os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(WORKER_NICE), encoding="ascii")


if __name__ == "__main__":
    main()
