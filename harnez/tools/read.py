"""The read tool (a file's lines, numbered, in ranges) and the list tool (one directory)."""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from harnez.errors import ToolError
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult, resolve_path
from harnez.tools.files import refuse_binary, require_file

READ_DEFAULT_LIMIT = 2000
READ_CHAR_CAP = 50_000
"""At most this many characters of file text are returned by one read."""
LINE_CHAR_CAP = 2000
"""Longer lines are cut, with a marker, so one minified line cannot flood the context."""
LIST_CAP = 1000


class ReadParams(ToolParams):
    path: str = Field(description="File to read, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="First line to show (1-based).")
    limit: int = Field(
        default=READ_DEFAULT_LIMIT, ge=1, le=10_000, description="How many lines to show at most."
    )


@dataclass
class _Window:
    """Lines collected from a file between `offset` and the caps."""

    offset: int
    limit: int
    lines: list[str] = field(default_factory=list)
    chars: int = 0
    total: int = 0
    capped: bool = False

    def take(self, number: int, text: str) -> None:
        self.total = number
        if number < self.offset or len(self.lines) >= self.limit or self.capped:
            return
        if len(text) > LINE_CHAR_CAP:
            text = text[:LINE_CHAR_CAP] + f" … [line cut, {len(text) - LINE_CHAR_CAP} more characters]"
        if self.lines and self.chars + len(text) > READ_CHAR_CAP:
            self.capped = True
            return
        self.lines.append(f"{number:>6}\t{text}")
        self.chars += len(text) + 1

    @property
    def last(self) -> int:
        return self.offset + len(self.lines) - 1


class ReadTool(Tool):
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file. Lines are numbered (`number<TAB>text`); the numbers are not part of the "
        f"file. Shows up to {READ_DEFAULT_LIMIT} lines from `offset`; a note says how to continue "
        "when the file is longer. Binary files are refused."
    )
    parameters: ClassVar[type[ToolParams]] = ReadParams
    kind = "read"

    async def run(self, args: ReadParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        shown = target.display(ctx.workspace)
        require_file(target.path, shown)
        refuse_binary(target.path, shown)
        window = _Window(offset=args.offset, limit=args.limit)
        with target.path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                window.take(number, line.rstrip("\r\n"))
        details = {"path": shown, "start_line": args.offset, "end_line": window.last,
                   "total_lines": window.total}
        if window.total == 0:
            return ToolResult(f"{shown} is empty.", {**details, "end_line": 0})
        if args.offset > window.total:
            raise ToolError(
                f"offset {args.offset} is past the end of {shown}, which has {window.total} lines."
            )
        return ToolResult(_with_note(window, shown), {**details, "truncated": window.last < window.total})


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

    async def run(self, args: ListParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        shown = target.display(ctx.workspace)
        if not target.path.exists():
            raise ToolError(f"{shown} does not exist. List its parent or use glob to find it.")
        if not target.path.is_dir():
            raise ToolError(f"{shown} is a file, not a directory. Use read to see its content.")
        entries = sorted(target.path.iterdir(), key=lambda entry: entry.name)
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
