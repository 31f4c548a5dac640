"""Keyword titles in a process of their own, so YAKE's import and work never hold this interpreter's lock.

`python -m harnez.titles.worker` reads a prompt (UTF-8) on stdin and writes `{"title": …}` on stdout:
the title `keyword_title` gives. `KeywordWorker.title` runs one such process per title and kills it
when it takes too long or its caller is cancelled (the server closing), so none outlives the naming.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harnez.errors import HarnezError

__all__ = ["WORKER_TIMEOUT", "KeywordWorker", "TitleWorkerError", "worker_command"]

WORKER_TIMEOUT = 30.0
"""Seconds a worker may take: YAKE's import is 0.6 s on a quiet machine, several under heavy load."""
STDERR_SHOWN = 200
"""Characters of a failed worker's last stderr line that its error quotes."""
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding this `harnez` package: the worker starts there, so it imports this very code
(not a `harnez` folder in the workspace, nor another installed copy)."""


class TitleWorkerError(HarnezError):
    """The keyword worker crashed, hung or answered something that is not a title."""


def worker_command() -> tuple[str, ...]:
    """The command of a keyword worker: this interpreter running this module."""
    return (sys.executable, "-m", "harnez.titles.worker")


@dataclass(frozen=True)
class KeywordWorker:
    """How keyword titles are computed: the worker's command and how long one may take."""

    command: tuple[str, ...] = field(default_factory=worker_command)
    timeout: float = WORKER_TIMEOUT

    async def title(self, prompt: str) -> str:
        """The keyword title of `prompt`, from a fresh worker process; raises TitleWorkerError."""
        process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=PACKAGE_ROOT,
        )
        try:
            data = prompt.encode("utf-8", errors="replace")
            out, err = await asyncio.wait_for(process.communicate(data), self.timeout)
        except TimeoutError:
            raise TitleWorkerError(
                f"the keyword title worker gave no title within {self.timeout:g} s and was stopped"
            ) from None
        finally:
            await _stop(process)
        return _read_answer(process.returncode, out, err)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the worker if it still runs, and reap it."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def _read_answer(returncode: int | None, out: bytes, err: bytes) -> str:
    """The title a worker wrote, or TitleWorkerError saying how it failed."""
    if returncode != 0:
        lines = err.decode("utf-8", errors="replace").strip().splitlines()
        detail = f": {lines[-1][:STDERR_SHOWN]}" if lines else ""
        raise TitleWorkerError(f"the keyword title worker exited with status {returncode}{detail}")
    try:
        title = json.loads(out)["title"]
    except (ValueError, TypeError, KeyError):
        title = None
    if not isinstance(title, str):
        raise TitleWorkerError(f"the keyword title worker answered {out[:STDERR_SHOWN]!r}, not a title")
    return title


def main() -> None:
    """Read a prompt on stdin, write its keyword title as JSON on stdout."""
    from harnez.titles.keywords import keyword_title

    prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    sys.stdout.write(json.dumps({"title": keyword_title(prompt)}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
