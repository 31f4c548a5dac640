"""The read tool (a file's lines, numbered, in ranges) and the list tool (one directory)."""

from __future__ import annotations

import stat
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from harnez.errors import ToolError
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult, resolve_path
from harnez.tools.files import refuse_binary, require_file, scan_in_thread

READ_DEFAULT_LIMIT = 2000
READ_CHAR_CAP = 50_000
"""At most this many characters of file text are returned by one read."""
LINE_CHAR_CAP = 2000
"""Longer lines are cut, with a marker, so one minified line cannot flood the context."""
LIST_CAP = 1000
CHUNK_BYTES = 1 << 20
"""The file is read in pieces of this size: memory stays flat whatever the file or its lines."""
_LINE_BYTES_KEPT = LINE_CHAR_CAP * 4 + 4
"""Bytes of one line kept for decoding: enough for LINE_CHAR_CAP characters of any UTF-8."""
_CONTINUATION = bytes(range(0x80, 0xC0))
"""UTF-8 continuation bytes: a line's characters are its bytes without these."""


class ReadParams(ToolParams):
    path: str = Field(description="File to read, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="First line to show (1-based).")
    limit: int = Field(
        default=READ_DEFAULT_LIMIT, ge=1, le=10_000, description="How many lines to show at most."
    )


@dataclass
class _Window:
    """Lines collected from a file, fed in chunks of bytes, between `offset` and the caps.

    Only the lines shown are decoded, and of each only what can be shown: a 300 MB line costs
    its count of characters, not its text. Every other line is only counted.
    """

    offset: int
    limit: int
    lines: list[str] = field(default_factory=list)
    chars: int = 0
    total: int = 0
    """Lines ended so far (and, after `finish`, the file's line count)."""
    capped: bool = False
    _open: bool = False
    """Bytes of a line not yet ended have been fed."""
    _kept: bytearray = field(default_factory=bytearray)
    _more: int = 0
    """Characters of the current line beyond the kept bytes."""
    _last: int = 0
    """The last byte fed of the current line (a CR before the newline is not part of the line)."""

    @property
    def last(self) -> int:
        return self.offset + len(self.lines) - 1

    def _wants(self, number: int) -> bool:
        return number >= self.offset and len(self.lines) < self.limit and not self.capped

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of the file."""
        position = 0
        while position < len(chunk):
            number = self.total + 1
            if not self._wants(number):
                position = self._skip(chunk, position, number)
                continue
            end = chunk.find(b"\n", position)
            self._keep(chunk[position:] if end == -1 else chunk[position:end])
            if end == -1:
                return
            self._end_line(number)
            position = end + 1

    def finish(self) -> None:
        """The file ended: a last line without a newline still counts."""
        if not self._open:
            return
        if self._wants(self.total + 1):
            self._end_line(self.total + 1)
        else:
            self.total, self._open = self.total + 1, False

    def _skip(self, chunk: bytes, position: int, number: int) -> int:
        """Count lines outside the window; returns where the next line to show starts (or the end)."""
        before_window = self.offset - number
        newlines = chunk.count(b"\n", position)
        if before_window <= 0 or newlines < before_window:
            # Past the window, or its first line starts in a later chunk: only the count matters.
            self.total += newlines
            self._open = chunk[-1] != 0x0A
            return len(chunk)
        for _ in range(before_window):
            position = chunk.index(b"\n", position) + 1
        self.total, self._open = self.total + before_window, False
        return position

    def _keep(self, piece: bytes) -> None:
        if not piece:
            return
        self._open, self._last = True, piece[-1]
        room = _LINE_BYTES_KEPT - len(self._kept)
        if room > 0:
            self._kept += piece[:room]
            piece = piece[room:]
        if piece:
            self._more += len(piece.translate(None, _CONTINUATION))

    def _end_line(self, number: int) -> None:
        text, more = self._kept.decode("utf-8", errors="replace"), self._more
        if self._open and self._last == 0x0D:  # CRLF: the carriage return is not part of the line
            text, more = (text, more - 1) if more else (text[:-1], more)
        self._kept, self._more, self._open, self._last = bytearray(), 0, False, 0
        self.total = number
        more += max(0, len(text) - LINE_CHAR_CAP)
        if more:
            text = text[:LINE_CHAR_CAP] + f" … [line cut, {more} more characters]"
        if self.lines and self.chars + len(text) > READ_CHAR_CAP:
            self.capped = True
            return
        self.lines.append(f"{number:>6}\t{text}")
        self.chars += len(text) + 1


class ReadTool(Tool):
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file. Lines are numbered (`number<TAB>text`); the numbers are not part of the "
        f"file. Shows up to {READ_DEFAULT_LIMIT} lines from `offset`; a note says how to continue "
        "when the file is longer. Binary files are refused."
    )
    parameters: ClassVar[type[ToolParams]] = ReadParams
    kind = "read"
    operation = "read"

    async def run(self, args: ReadParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        shown = target.display(ctx.workspace)
        window = await scan_in_thread(partial(_read_window, target.path, shown, args))
        details = {
            "path": shown,
            "start_line": args.offset,
            "end_line": window.last,
            "total_lines": window.total,
        }
        if window.total == 0:
            return ToolResult(f"{shown} is empty.", {**details, "end_line": 0})
        if args.offset > window.total:
            raise ToolError(
                f"offset {args.offset} is past the end of {shown}, which has {window.total} lines."
            )
        return ToolResult(_with_note(window, shown), {**details, "truncated": window.last < window.total})


def _read_window(path: Path, shown: str, args: ReadParams, stop: threading.Event) -> _Window:
    """The lines to show of a file, read in chunks (in a worker thread; `stop` ends it early)."""
    require_file(path, shown)
    refuse_binary(path, shown)
    window = _Window(offset=args.offset, limit=args.limit)
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            if stop.is_set():
                break
            window.feed(chunk)
    window.finish()
    return window


def _with_note(window: _Window, shown: str) -> str:
    text = "\n".join(window.lines)
    if window.last >= window.total:
        return text
    reason = f"the {READ_CHAR_CAP}-character cap" if window.capped else "the line limit"
    return (
        f"{text}\n\n[{shown}: showing lines {window.offset}-{window.last} of {window.total}, "
        f"stopped by {reason}. Read again with offset={window.last + 1} to continue.]"
    )


class ListParams(ToolParams):
    path: str = Field(default=".", description="Directory to list, relative to the workspace.")


class ListTool(Tool):
    name: ClassVar[str] = "list"
    description: ClassVar[str] = (
        "List one directory: entries sorted by name, directories end with `/`, symlinks show their "
        "target. Not recursive; use glob to search a tree."
    )
    parameters: ClassVar[type[ToolParams]] = ListParams
    kind = "read"
    operation = "search"

    async def run(self, args: ListParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        return await scan_in_thread(partial(_list, target.path, target.display(ctx.workspace)))


def _list(path: Path, shown: str, stop: threading.Event) -> ToolResult:
    """One directory's entries (in a worker thread)."""
    if not path.exists():
        raise ToolError(f"{shown} does not exist. List its parent or use glob to find it.")
    if not path.is_dir():
        raise ToolError(f"{shown} is a file, not a directory. Use read to see its content.")
    entries = sorted(path.iterdir(), key=lambda entry: entry.name)
    lines = [_describe(entry) for entry in entries[:LIST_CAP]]
    if len(entries) > LIST_CAP:
        lines.append(f"[{len(entries) - LIST_CAP} more entries not shown; use glob to narrow down.]")
    content = "\n".join(lines) if lines else f"{shown} is empty."
    return ToolResult(content, {"path": shown, "entries": len(entries)})


def _describe(entry: Path) -> str:
    mode = entry.lstat().st_mode
    if stat.S_ISLNK(mode):
        return f"{entry.name} -> {entry.readlink()}"
    if stat.S_ISDIR(mode):
        return f"{entry.name}/"
    return entry.name
