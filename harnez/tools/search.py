"""The glob tool (find paths by pattern) and the grep tool (find lines by regex), in pure Python, over
the workspace listing (`harnez.workspace`: what git lists, else a walk honouring `.gitignore`)."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import ClassVar

from pydantic import Field

from harnez.errors import ToolError
from harnez.tools.base import (
    Tool,
    ToolContext,
    ToolParams,
    ToolResult,
    WorkspacePath,
    is_inside,
    resolve_path,
)
from harnez.tools.files import SNIFF_BYTES, looks_binary, scan_in_thread
from harnez.workspace import LIST_LIMIT, list_workspace

GLOB_CAP = 1000
GREP_DEFAULT_LIMIT = 200
GREP_LINE_CAP = 300
GREP_FILE_BYTES_CAP = 10 * 1024 * 1024
"""Files larger than this are not searched by grep."""
SKIPPED = (
    "Files git ignores (outside a git repository: those the workspace's .gitignore names) and folders "
    "such as .git, .harnez, node_modules and .venv are skipped."
)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex for a glob over `/`-separated relative paths: `*`, `?`, `[...]`, and `**` for any depth."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] in "*?":
            out.append("[^/]*" if pattern[index] == "*" else "[^/]")
            index += 1
        elif pattern[index] == "[" and "]" in pattern[index + 2 :]:
            end = pattern.index("]", index + 2)
            body = pattern[index + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            index = end + 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _shown(path: Path, workspace: Path) -> str:
    return WorkspacePath(path=path, inside=is_inside(workspace, path)).display(workspace)


def _search_root(ctx: ToolContext, raw: str) -> tuple[Path, str]:
    target = resolve_path(ctx.workspace, raw)
    shown = target.display(ctx.workspace)
    if not target.path.exists():
        raise ToolError(f"{shown} does not exist. Use list on its parent to see what is there.")
    return target.path, shown


class GlobParams(ToolParams):
    pattern: str = Field(
        description="Glob relative to `path`: `*`, `?`, `[abc]`, `**` for any depth, e.g. `src/**/*.py`."
    )
    path: str = Field(default=".", description="Directory to search from, relative to the workspace.")


class GlobTool(Tool):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files and directories whose path (relative to `path`) matches a glob. Results are "
        f"sorted, relative to the workspace, capped at {GLOB_CAP}. {SKIPPED}"
    )
    parameters: ClassVar[type[ToolParams]] = GlobParams
    kind = "read"
    operation = "search"

    async def run(self, args: GlobParams, ctx: ToolContext) -> ToolResult:
        pure = PurePosixPath(args.pattern)
        if pure.is_absolute() or ".." in pure.parts:
            raise ToolError("The pattern must be relative and without `..`; set `path` to search elsewhere.")
        root, shown = _search_root(ctx, args.path)
        if not root.is_dir():
            raise ToolError(f"{shown} is a file, not a directory; give a directory as `path`.")
        regex = compile_glob(args.pattern.removeprefix("./"))

        def find(stop: threading.Event) -> tuple[list[str], bool]:
            listing = list_workspace(root, ctx.workspace, limit=LIST_LIMIT, stop=stop)
            found = [
                _shown(root / entry.path, ctx.workspace) + ("/" if entry.is_dir else "")
                for entry in listing.entries
                if regex.match(entry.path)
            ]
            return sorted(found), listing.truncated

        matches, incomplete = await scan_in_thread(find)
        details = {"path": shown, "pattern": args.pattern, "matches": len(matches), "incomplete": incomplete}
        note = "\n" + _incomplete_note(shown) if incomplete else ""
        if not matches:
            return ToolResult(f"No paths under {shown} match {args.pattern}." + note, details)
        content = "\n".join(matches[:GLOB_CAP])
        if len(matches) > GLOB_CAP:
            content += f"\n[{len(matches) - GLOB_CAP} more matches not shown; use a narrower pattern.]"
        return ToolResult(content + note, {**details, "truncated": len(matches) > GLOB_CAP})


def _incomplete_note(shown: str) -> str:
    return (
        f"[The listing of {shown} stopped at {LIST_LIMIT:,} paths, so the rest was not searched; "
        "give a narrower `path`.]"
    )


class GrepParams(ToolParams):
    pattern: str = Field(description="Python regular expression searched in each line.")
    path: str = Field(default=".", description="File or directory to search, relative to the workspace.")
    glob: str = Field(
        default="",
        description="Only files matching this glob: `*.py` matches the file name at any depth; a "
        "pattern with `/` matches the path relative to `path`. Empty: every file.",
    )
    ignore_case: bool = Field(default=False, description="Match without regard to case.")
    limit: int = Field(
        default=GREP_DEFAULT_LIMIT, ge=1, le=2000, description="Most matching lines to return."
    )


class GrepTool(Tool):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents with a regular expression. Prints `path:line:text` per matching line, "
        f"in path order, up to `limit`. Binary files are skipped. {SKIPPED}"
    )
    parameters: ClassVar[type[ToolParams]] = GrepParams
    kind = "read"
    operation = "search"

    async def run(self, args: GrepParams, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"The pattern is not a valid regular expression: {exc}.") from exc
        root, shown = _search_root(ctx, args.path)
        search = _GrepSearch(root, regex, args, ctx.workspace)
        await scan_in_thread(search.run)
        details = {
            "path": shown,
            "pattern": args.pattern,
            "matches": len(search.hits),
            "files_searched": search.files,
            "truncated": search.truncated,
            "unreadable": search.unreadable,
            "incomplete": search.incomplete,
        }
        notes = []
        if search.truncated:
            notes.append(f"[Stopped at {args.limit} matches; narrow the pattern, path or glob.]")
        if search.unreadable:
            listed = ", ".join(search.unreadable[:5])
            notes.append(f"[Could not read {len(search.unreadable)} files: {listed}]")
        if search.incomplete:
            notes.append(_incomplete_note(shown))
        if not search.hits:
            return ToolResult("\n".join([f"No lines match {args.pattern} under {shown}.", *notes]), details)
        return ToolResult("\n".join([*search.hits, *notes]), details)


class _GrepSearch:
    """One grep run: walks files, collects `path:line:text` hits up to the limit."""

    def __init__(self, root: Path, regex: re.Pattern[str], args: GrepParams, workspace: Path) -> None:
        self.root, self.regex, self.limit, self.workspace = root, regex, args.limit, workspace
        self.filter = compile_glob(args.glob.removeprefix("./")) if args.glob else None
        self.filter_by_name = "/" not in args.glob
        self.hits: list[str] = []
        self.files = 0
        self.unreadable: list[str] = []
        self.truncated = False
        self.incomplete = False
        """The workspace listing stopped at its limit: some files were not searched."""

    def run(self, stop: threading.Event) -> None:
        for path in self._files(stop):
            if stop.is_set() or self.truncated:
                return
            self._search(path)

    def _files(self, stop: threading.Event) -> Iterator[Path]:
        if self.root.is_file():
            yield self.root
            return
        real_root = Path(os.path.realpath(self.root))
        listing = list_workspace(self.root, self.workspace, limit=LIST_LIMIT, directories=False, stop=stop)
        self.incomplete = listing.truncated
        for name in listing.files:
            path = self.root / name
            if not self._wanted(path):
                continue
            real = Path(os.path.realpath(path))
            if path.is_symlink() and real != real_root and real_root not in real.parents:
                continue  # a link leading out of the searched tree would bypass path approval
            yield path

    def _wanted(self, path: Path) -> bool:
        if self.filter is None:
            return True
        subject = path.name if self.filter_by_name else path.relative_to(self.root).as_posix()
        return self.filter.match(subject) is not None

    def _search(self, path: Path) -> None:
        try:
            self._search_file(path)
        except OSError as exc:
            self.unreadable.append(f"{_shown(path, self.workspace)} ({exc.strerror or exc})")

    def _search_file(self, path: Path) -> None:
        if not path.is_file() or path.stat().st_size > GREP_FILE_BYTES_CAP:
            return
        with path.open("rb") as handle:
            if looks_binary(handle.read(SNIFF_BYTES)):
                return
        self.files += 1
        shown = _shown(path, self.workspace)
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if self.regex.search(line):
                    if len(self.hits) >= self.limit:
                        self.truncated = True
                        return
                    text = line.rstrip("\r\n")
                    text = text if len(text) <= GREP_LINE_CAP else text[:GREP_LINE_CAP] + " …"
                    self.hits.append(f"{shown}:{number}:{text}")
