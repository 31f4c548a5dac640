"""The edit tool: exact string replacement in a file, refusing missing and ambiguous matches."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from harnez.errors import ToolError
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult, resolve_path
from harnez.tools.files import change_in_thread, load_text, unified_diff


class EditParams(ToolParams):
    path: str = Field(description="File to edit, relative to the workspace.")
    old_string: str = Field(description="Exact text to replace, including whitespace and indentation.")
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of requiring exactly one."
    )


class EditTool(Tool):
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace exact text in an existing file. `old_string` must occur exactly once (copy it from "
        "a read, without the line-number prefix) unless `replace_all` is true. Use write to create "
        "a new file."
    )
    parameters: ClassVar[type[ToolParams]] = EditParams
    kind = "edit"
    operation = "edit"

    async def run(self, args: EditParams, ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.path)
        if args.old_string == "":
            raise ToolError("old_string is empty. To create a file or replace all of it, use write.")
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are identical; there is nothing to change.")
        return await change_in_thread(partial(_edit, target.path, target.display(ctx.workspace), args))


def _edit(path: Path, shown: str, args: EditParams) -> ToolResult:
    """Replace the text (in a worker thread) and describe what changed."""
    before = load_text(path, shown)
    old, new = _matching_line_endings(before, args.old_string, args.new_string)
    lines = _occurrence_lines(before, old)
    if not lines:
        raise ToolError(_not_found_message(before, old, shown))
    if len(lines) > 1 and not args.replace_all:
        raise ToolError(
            f"old_string occurs {len(lines)} times in {shown}, at lines {_join(lines)}; include "
            "more surrounding lines to make it unique, or set replace_all to true."
        )
    after = before.replace(old, new)
    path.write_bytes(after.encode("utf-8"))
    count = len(lines)
    noun, where = ("occurrence", "line") if count == 1 else ("occurrences", "lines")
    details = {
        "path": shown,
        "replacements": count,
        "lines": lines,
        "diff": unified_diff(before, after, shown),
    }
    return ToolResult(f"Edited {shown}: replaced {count} {noun} at {where} {_join(lines)}.", details)


def _matching_line_endings(text: str, old: str, new: str) -> tuple[str, str]:
    """Translate `\\n` to `\\r\\n` in both strings when the file uses CRLF and only that matches."""
    if old in text or "\r\n" not in text or "\r\n" in old:
        return old, new
    crlf_old = old.replace("\n", "\r\n")
    if crlf_old in text:
        return crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new


def _occurrence_lines(text: str, needle: str) -> list[int]:
    """The 1-based line number where each non-overlapping occurrence of `needle` starts."""
    lines: list[int] = []
    start = text.find(needle)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + len(needle))
    return lines


def _not_found_message(text: str, old: str, shown: str) -> str:
    message = f"old_string was not found in {shown}."
    stripped = old.strip()
    if stripped and stripped != old and stripped in text:
        return (
            f"{message} It matches when its leading/trailing whitespace is ignored; copy the exact "
            "indentation and line breaks from a fresh read."
        )
    squeezed = _squeeze(old)
    if squeezed and any(squeezed == _squeeze(line) for line in text.splitlines()):
        return f"{message} A line matches apart from spacing; copy its exact whitespace from a read."
    return f"{message} Read the file again and copy the exact text, including whitespace and indentation."


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _join(numbers: list[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:20])
    return shown if len(numbers) <= 20 else f"{shown}, …"
