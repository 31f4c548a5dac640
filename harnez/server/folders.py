"""Workspace folders of HTTP sessions: one per session, what is placed in it, and what its tasks wrote."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harnez.server.harnesses import Harness, Refusal

INPUTS_DIR = ".uhp-inputs"
"""Where files sent as task input are placed in a workspace (the prompt names them with `@path`)."""
SKILLS_DIR = ".uhp-skills"
"""Where a harness's skill folders are written in a workspace, one folder per harness. Not the
workspace's own `.harnez/skills`: only a task run with that harness is offered them (its
`skills_dir` option), never another task of the same folder."""
OLD_SKILLS_DIR = Path(".harnez") / "skills"
"""Where versions before `.uhp-skills` wrote a harness's skill folders in a workspace: the workspace's own
skills, so every task of that folder was offered them. A session folder's copies there are dropped
before its first task that writes `.uhp-skills` (`write_harness_skills`)."""
HIDDEN = frozenset({".harnez", INPUTS_DIR, SKILLS_DIR, ".git"})
"""Top-level folders that are never artifacts."""
ARTIFACT_LIMIT = 1000
"""The most artifacts one session lists."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """A file in a workspace: its path relative to the workspace (with `/`), size and change time."""

    path: str
    bytes: int
    modified: float


def safe_name(filename: str) -> str:
    """A file name fit for a path the agent can mention: no folders, no spaces, never empty or dotted."""
    name = _UNSAFE.sub("_", Path(filename.replace("\\", "/")).name).strip("._") or "file"
    return name[:120]


class SessionFolders:
    """The folders under `root` (the `--workspaces` directory) that HTTP sessions work in."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def new(self) -> Path:
        """A fresh, empty folder for a new session."""
        folder = self.root / uuid.uuid4().hex
        folder.mkdir(parents=True)
        return folder

    def owns(self, workspace: str | Path) -> bool:
        """Whether a workspace is one of this server's session folders (and so its own to delete)."""
        path = Path(workspace).resolve()
        return path.parent == self.root

    def place_input(self, workspace: Path, file_id: str, filename: str, content: bytes) -> str:
        """Write an input file into the workspace; the path to mention it by, relative to the workspace."""
        relative = f"{INPUTS_DIR}/{file_id}/{safe_name(filename)}"
        target = workspace / relative
        unsafe = Refusal(
            "harnez_workspace_unsafe",
            f"{INPUTS_DIR} in the session's workspace leads outside "
            "it (a link); remove it, then send the file again. Nothing was written.",
        )
        if not _inside(workspace, workspace / INPUTS_DIR):
            raise unsafe
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(workspace, target.parent) or target.is_symlink():
            raise unsafe
        target.write_bytes(content)
        return relative

    def scan(self, workspace: Path) -> list[WorkspaceFile]:
        """Every file in a session folder except the hidden ones, sorted by path (at most ARTIFACT_LIMIT)."""
        found: list[WorkspaceFile] = []
        for directory, folders, files in os.walk(workspace):
            here = Path(directory)
            if here == workspace:
                folders[:] = [f for f in folders if f not in HIDDEN]
            folders.sort()
            for name in sorted(files):
                path = here / name
                if path.is_symlink() or not path.is_file():
                    continue
                stat = path.stat()
                found.append(
                    WorkspaceFile(path.relative_to(workspace).as_posix(), stat.st_size, stat.st_mtime)
                )
                if len(found) >= ARTIFACT_LIMIT:
                    return found
        return found

    def existing(self, workspace: Path, paths: Iterable[str]) -> list[WorkspaceFile]:
        """Those of `paths` (relative or absolute) that are files inside the workspace now."""
        found: dict[str, WorkspaceFile] = {}
        for raw in paths:
            target = self.open(workspace, raw)
            if target is not None:
                relative = target.relative_to(workspace.resolve()).as_posix()
                stat = target.stat()
                found.setdefault(relative, WorkspaceFile(relative, stat.st_size, stat.st_mtime))
        return sorted(found.values(), key=lambda f: f.path)

    def open(self, workspace: Path, relative: str) -> Path | None:
        """The file at `relative` when it is a regular file inside the workspace (symlinks resolved)."""
        root = Path(workspace).resolve()
        target = (root / relative).resolve()
        if not _inside(root, target) or not target.is_file():
            return None
        return target

    def remove(self, workspace: str | Path) -> None:
        """Delete a session folder of this server (never a fixed workspace)."""
        if self.owns(workspace):
            shutil.rmtree(workspace, ignore_errors=True)

    def remove_inputs(self, workspace: Path, file_ids: list[str]) -> None:
        """Delete the input folders `place_input` made for these files (a request refused after placing
        them); a folder reached through a link out of the workspace is left alone."""
        for file_id in file_ids:
            folder = workspace / INPUTS_DIR / file_id
            if _inside(workspace, folder) and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)


def write_harness_skills(workspace: Path, harness: Harness, *, session_folder: bool = False) -> Path:
    """Write the harness's enabled skill folders whole under `<workspace>/.uhp-skills/<harness id>/`,
    replacing what an earlier task left there (a skill since disabled or removed is gone); the folder,
    for the task's `skills_dir`. Never written through a link out of the workspace: Refusal.

    In a session folder (`session_folder`: one the server made for an HTTP session) that has no
    `.uhp-skills` yet, the copies an older version wrote to `.harnez/skills` are dropped first
    (`drop_old_skill_copies`): once, as `.uhp-skills` is there after."""
    folder = Path(workspace) / SKILLS_DIR / harness.id
    if not _inside(workspace, folder) or folder.is_symlink():
        raise Refusal(
            "harnez_workspace_unsafe",
            f"{SKILLS_DIR} in the session's workspace leads outside it (a link); remove it, then send "
            "the task again. Nothing was written.",
        )
    if session_folder and not (Path(workspace) / SKILLS_DIR).exists():
        drop_old_skill_copies(Path(workspace), harness)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for skill in harness.skills:
        if not skill.enabled:
            continue
        for file in skill.files:
            target = folder / skill.name / file.path
            if not _inside(folder, target):
                continue  # refused when the harness was saved; checked again here all the same
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.content)
    return folder


def drop_old_skill_copies(workspace: Path, harness: Harness) -> list[str]:
    """Remove from `<workspace>/.harnez/skills` the folders named after the harness's skills (an older
    version wrote each there before every task, replacing whatever had that name); the names removed.
    Any other skill there is left as it is (the person's or the agent's own, or a skill the harness no
    longer has: nothing tells them apart), and so is anything reached through a link."""
    old = workspace / OLD_SKILLS_DIR
    if not old.is_dir() or not _inside(workspace, old) or old.is_symlink():
        return []
    dropped = []
    for skill in harness.skills:
        copy = old / skill.name
        if copy.is_dir() and not copy.is_symlink() and _inside(old, copy):
            shutil.rmtree(copy)
            dropped.append(skill.name)
    if dropped and not any(old.iterdir()):
        old.rmdir()
    return dropped


def _inside(root: Path, target: Path) -> bool:
    try:
        target.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
