"""File helpers shared by the file tools: existence checks, binary detection, text loading, diffs."""

from __future__ import annotations

import difflib
from pathlib import Path

from harnez.errors import ToolError

SNIFF_BYTES = 8192
"""How much of a file is inspected to decide whether it is binary."""

SKIPPED_DIRS = frozenset({".git", ".harnez"})
"""Directories that glob, grep and list-walks never descend into."""


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
    """The whole text of a UTF-8 file, line endings untouched; refuses missing and binary files."""
    require_file(path, shown)
    refuse_binary(path, shown)
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not valid UTF-8 (bad byte at offset {exc.start}); it cannot be edited as text."
        ) from exc


def unified_diff(before: str, after: str, shown: str) -> str:
    """A unified diff between two versions of a file, for the UI."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{shown}",
        tofile=f"b/{shown}",
    )
    marker = "\n\\ No newline at end of file\n"
    return "".join(line if line.endswith("\n") else line + marker for line in lines)


def count_lines(text: str) -> int:
    """The number of lines in a text, counting a last line without a newline."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
