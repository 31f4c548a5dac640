"""File helpers shared by the file tools: existence checks, binary detection, text loading, diffs,
and running file work off the event loop."""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harnez.errors import ToolError
from harnez.tools.base import ToolCancelled, ToolResult

SNIFF_BYTES = 8192
"""How much of a file is inspected to decide whether it is binary."""

TEXT_BYTES_CAP = 10 * 1024 * 1024
"""Files larger than this are not loaded whole (edit refuses them; write shows no diff)."""

DIFF_LINES_CAP = 1000
"""A diff is computed only when each side's changed region has at most this many lines: difflib's
time grows with the square of it (20,000 interleaved changes took 97 s)."""

T = TypeVar("T")
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.M)


async def scan_in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run blocking read-only work in a thread; on cancellation tell it to stop and re-raise."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    finally:
        stop.set()


async def change_in_thread(change: Callable[[], ToolResult]) -> ToolResult:
    """Run a file change in a thread. It cannot be stopped halfway, so a cancellation waits for it
    to end and re-raises carrying its result (`ToolCancelled`): the record says what changed."""
    running = asyncio.ensure_future(asyncio.to_thread(change))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        try:
            result = await running
        except (ToolError, OSError):
            raise asyncio.CancelledError from None  # it changed nothing: a plain cancellation
        raise ToolCancelled(dataclasses.replace(result, cancelled=True)) from None


def looks_binary(sample: bytes) -> bool:
    """Whether a leading sample of a file is binary: a NUL byte, or bytes that are not UTF-8."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the end of the sample is still text.
        return exc.start < len(sample) - 3
    return False


def require_file(path: Path, shown: str) -> None:
    """Raise a `ToolError` unless `path` is an existing regular file."""
    if not path.exists():
        raise ToolError(f"{shown} does not exist. Use glob or list to find the right path.")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file. Use list to see what it contains.")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe); it cannot be read.")


def refuse_binary(path: Path, shown: str) -> None:
    """Raise a `ToolError` if the file looks binary."""
    with path.open("rb") as handle:
        sample = handle.read(SNIFF_BYTES)
    if looks_binary(sample):
        size = path.stat().st_size
        raise ToolError(
            f"{shown} is a binary file ({size} bytes); it cannot be shown as text. "
            "Use the shell tool (e.g. `file`, `xxd | head`) if you need to inspect it."
        )


def load_text(path: Path, shown: str) -> str:
    """The whole text of a UTF-8 file, line endings untouched; refuses missing, binary and huge files."""
    require_file(path, shown)
    refuse_binary(path, shown)
    size = path.stat().st_size
    if size > TEXT_BYTES_CAP:
        raise ToolError(
            f"{shown} is {size / 1024 / 1024:.1f} MiB; files over {TEXT_BYTES_CAP // 1024 // 1024} MiB are not "
            "edited as a whole. Use the shell tool (e.g. `sed -i`) for a change in a file this large."
        )
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not valid UTF-8 (bad byte at offset {exc.start}); it cannot be edited as text."
        ) from exc


def unified_diff(before: str, after: str, shown: str, context: int = 3) -> str | None:
    """A unified diff between two versions of a file, for the UI; None when too big to compute.

    Only the region between the common first and last lines is compared (with `context` lines
    around it), so a small change in a large file costs little.
    """
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if max(len(old), len(new)) - head - tail > DIFF_LINES_CAP:
        return None
    start = max(0, head - context)
    lines = difflib.unified_diff(
        old[start : len(old) - max(0, tail - context)],
        new[start : len(new) - max(0, tail - context)],
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
        n=context,
    )
    marker = "\n\\ No newline at end of file\n"
    text = "".join(line if line.endswith("\n") else line + marker for line in lines)
    return _HUNK.sub(lambda m: _shifted(m, start), text) if start else text


def _shifted(hunk: re.Match[str], offset: int) -> str:
    """A hunk header of a diff over a slice, renumbered for the whole file."""
    old_start, old_len, new_start, new_len = hunk.groups()
    return f"@@ -{int(old_start) + offset}{old_len or ''} +{int(new_start) + offset}{new_len or ''} @@"


def count_lines(text: str) -> int:
    """The number of lines in a text, counting a last line without a newline."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
