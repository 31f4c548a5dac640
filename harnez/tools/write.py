"""The write tool: create or overwrite a whole file, making parent directories as needed."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from harnez.errors import ToolError
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult, resolve_path
from harnez.tools.files import TEXT_BYTES_CAP, change_in_thread, count_lines, unified_diff


class WriteParams(ToolParams):
    path: str = Field(description="File to write, relative to the workspace. Parents are created.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(Tool):
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write a whole file: creates it (and missing parent directories) or replaces its entire "
        "content. To change part of an existing file, prefer edit."
    )
    parameters: ClassVar[type[ToolParams]] = WriteParams
    kind = "edit"
    operation = "edit"

    async def run(self, args: WriteParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        return await change_in_thread(partial(_write, target.path, target.display(ctx.workspace), args))


def _write(path: Path, shown: str, args: WriteParams) -> ToolResult:
    """Write the file (in a worker thread) and describe what changed."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give the path of a file inside it.")
    if path.parent.exists() and not path.parent.is_dir():
        raise ToolError(f"{shown} cannot be created: {path.parent.name} is a file, not a directory.")
    created = not path.exists()
    before = None if created else _previous_text(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(args.content.encode("utf-8"))
    lines = count_lines(args.content)
    details: dict[str, object] = {
        "path": shown,
        "created": created,
        "lines": lines,
        "bytes": len(args.content.encode("utf-8")),
    }
    size = f"{lines} line" if lines == 1 else f"{lines} lines"
    if created:
        return ToolResult(f"Created {shown} ({size}).", details)
    details["diff"] = None if before is None else unified_diff(before, args.content, shown)
    return ToolResult(f"Overwrote {shown} ({size}).", details)


def _previous_text(path: Path) -> str | None:
    """The old content as text for the diff, or None when it was not UTF-8 text or too large."""
    if path.stat().st_size > TEXT_BYTES_CAP:
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None
