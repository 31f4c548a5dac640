"""The workspace's files as a person sees them: what git lists in a work tree, else a walk that skips
the heavy folders and honours the workspace's `.gitignore`. One listing for the `glob` and `grep`
tools and the TUI's `@` completion.

Inside a git work tree the listing is `git ls-files --cached --others --exclude-standard` (tracked
files, and untracked ones no ignore rule covers: nested `.gitignore` files, `.git/info/exclude` and
the person's global excludes all count). Outside one — or when git is missing, fails or is slow —
a walk lists every file and folder except the folders in HEAVY_DIRS and what the `.gitignore` at
the workspace root ignores (read with pathspec, which implements git's pattern rules). Either way
HEAVY_DIRS are left out, so Harnez's own `.harnez` never shows.

A listing is bounded: it stops at `limit` entries (and says it was truncated), git gets
GIT_TIMEOUT seconds, and a `stop` event ends it early. It blocks: run it in a thread.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import stat
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pathspec

HEAVY_DIRS = frozenset(
    {
        ".git",
        ".harnez",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Folders never listed: version control, Harnez's own, dependencies and caches."""
LIST_LIMIT = 200_000
"""The most entries one listing holds; a larger tree is cut there (and the listing says so)."""
GIT_TIMEOUT = 3.0
"""Seconds `git ls-files` may take before the walk is used instead."""
WALK_VISITS = 1_000_000
"""The walk looks at no more names than this (ignored ones included), however few it lists."""


@dataclass(frozen=True, slots=True)
class WorkspaceEntry:
    """A file or folder, by its POSIX path relative to the listed folder."""

    path: str
    is_dir: bool


@dataclass(frozen=True, slots=True)
class WorkspaceListing:
    """The entries under a folder, sorted by path (folder by folder), and how they were found."""

    entries: list[WorkspaceEntry]
    truncated: bool
    """True when the limit (or a stop) cut the listing short."""
    source: Literal["git", "walk"]

    @property
    def files(self) -> list[str]:
        """The paths of the files alone."""
        return [entry.path for entry in self.entries if not entry.is_dir]


def list_workspace(
    folder: Path,
    workspace: Path | None = None,
    *,
    limit: int = LIST_LIMIT,
    directories: bool = True,
    stop: threading.Event | None = None,
    git_timeout: float = GIT_TIMEOUT,
) -> WorkspaceListing:
    """Everything under `folder` a person would call part of the workspace `workspace` (default: the folder).

    With `directories=False` only files are listed (and counted against `limit`).
    """
    stop = stop or threading.Event()
    listed = _git_listing(folder, limit, directories, stop, git_timeout)
    if listed is not None:
        return listed
    return _walk_listing(folder, workspace or folder, limit, directories, stop)


def path_order(path: str) -> list[str]:
    """The sort key of a listing: folder by folder, so `a/z.txt` comes before `a.txt` and `a-b/c.txt`."""
    return path.split("/")


# ----------------------------------------------------------------------------- git's view


def _git_listing(
    folder: Path, limit: int, directories: bool, stop: threading.Event, timeout: float
) -> WorkspaceListing | None:
    """What git lists under `folder`; None outside a work tree, or when git is missing, fails or is slow."""
    found = _git_paths(folder, limit, stop, timeout)
    if found is None:
        return None
    names, truncated = found
    entries: dict[str, WorkspaceEntry] = {}
    for name in names:
        if any(part in HEAVY_DIRS for part in name.split("/")):
            continue
        is_dir = _is_dir(folder / name)
        if is_dir is None:
            continue  # tracked, but deleted from the disk
        entries[name] = WorkspaceEntry(name, is_dir)
        if directories:
            for parent in _parents(name):
                entries.setdefault(parent, WorkspaceEntry(parent, True))
    ordered = sorted(entries.values(), key=lambda entry: path_order(entry.path))
    if not directories:
        ordered = [entry for entry in ordered if not entry.is_dir]
    return WorkspaceListing(ordered[:limit], truncated or len(ordered) > limit, "git")


def _git_paths(
    folder: Path, limit: int, stop: threading.Event, timeout: float
) -> tuple[list[str], bool] | None:
    """`git ls-files -z` run in `folder`, read to its end or past `limit` names; (names, cut short)."""
    command = ["git", "-C", str(folder), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    expired = threading.Event()
    timer = threading.Timer(timeout, _expire, (process, expired))
    timer.start()
    output = process.stdout
    assert isinstance(output, io.BufferedReader)  # Popen's stdout pipe, unbuffered text off
    names: dict[str, None] = {}
    pending, cut = b"", False
    try:
        while chunk := output.read1(1 << 16):
            *complete, pending = (pending + chunk).split(b"\0")
            names.update(dict.fromkeys(os.fsdecode(name) for name in complete if name))
            if len(names) > limit or stop.is_set():
                cut = True
                _kill(process)
                break
        code = process.wait()
    finally:
        timer.cancel()
        output.close()
    if expired.is_set() or (code != 0 and not cut):
        return None
    return list(names), cut


def _expire(process: subprocess.Popen[bytes], expired: threading.Event) -> None:
    expired.set()
    _kill(process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill git and whatever it started (a hook, a pager) so that nothing holds its output open."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _is_dir(path: Path) -> bool | None:
    """Whether a listed path is a folder (a submodule, a link to a folder); None when it is gone."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False if os.path.lexists(path) else None  # a dangling link is still listed, as a file


def _parents(name: str) -> Iterator[str]:
    parts = name.split("/")
    for end in range(1, len(parts)):
        yield "/".join(parts[:end])


# ----------------------------------------------------------------------------- the walk


def _walk_listing(
    folder: Path, workspace: Path, limit: int, directories: bool, stop: threading.Event
) -> WorkspaceListing:
    ignored = _Ignored(workspace, folder)
    entries: list[WorkspaceEntry] = []
    visits = 0
    for entry in _walk(folder, ignored, stop):
        visits += 1
        if entry is None:
            if visits >= WALK_VISITS:
                return WorkspaceListing(entries, True, "walk")
            continue
        if entry.is_dir and not directories:
            continue
        if len(entries) >= limit:
            return WorkspaceListing(entries, True, "walk")
        entries.append(entry)
    return WorkspaceListing(entries, stop.is_set(), "walk")


def _walk(folder: Path, ignored: _Ignored, stop: threading.Event) -> Iterator[WorkspaceEntry | None]:
    """Depth first in name order (so folder by folder); None for each name looked at and ignored.

    Links to folders are listed but not followed, as `os.walk` does.
    """
    stack = [("", _children(folder))]
    while stack and not stop.is_set():
        prefix, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        path = prefix + child.name
        is_dir = _entry_is_dir(child)
        if (is_dir and child.name in HEAVY_DIRS) or ignored(path, is_dir):
            yield None
            continue
        yield WorkspaceEntry(path, is_dir)
        if is_dir and not child.is_symlink():
            stack.append((path + "/", _children(Path(child.path))))


def _children(folder: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return iter(())
    return iter(found)


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


class _Ignored:
    """The `.gitignore` at the workspace root, for paths under `folder`; ignores nothing without one."""

    def __init__(self, workspace: Path, folder: Path) -> None:
        self.spec = _gitignore(workspace / ".gitignore")
        try:
            relative = folder.resolve().relative_to(workspace.resolve()).as_posix()
        except ValueError:
            self.spec = None  # a folder outside the workspace: its rules do not reach there
            relative = "."
        self.prefix = "" if relative == "." else relative + "/"

    def __call__(self, path: str, is_dir: bool) -> bool:
        if self.spec is None:
            return False
        return self.spec.match_file(self.prefix + path + ("/" if is_dir else ""))


def _gitignore(path: Path) -> pathspec.GitIgnoreSpec | None:
    """The patterns of a `.gitignore`; lines git would not accept either are skipped."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    # Imported when a walk first reads a `.gitignore`: the grep and glob tools import this module,
    # and with them the server side a new session waits for (pathspec: 36 modules, 11–21 ms).
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True
