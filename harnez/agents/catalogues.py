"""Agent catalogues kept between tasks: a workspace's agent files are read again only once one changed.

Every task offers the agents of its workspace (docs/agents.md), so every task used to read both agents
folders in a thread before its system prompt. A catalogue is now kept per workspace with the state of
the files it was read from — each folder's `*.md` entries by name, with their modification time (ns),
size and inode — and reused while that state is the same. The state is taken with one `scandir` per
folder and a `stat` per file, on the caller's thread (no file is opened), before the files are read,
so an edit made while they are read is seen at the next task.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Collection, Mapping
from pathlib import Path

from harnez.agents.definitions import AgentCatalogue, agent_folders, find_agents

FilesState = tuple[tuple[tuple[str, int, int, int], ...], ...]
"""Per agents folder, its `*.md` files as (name, mtime in ns, size, inode), sorted by name."""


def agent_files_state(workspace: Path, env: Mapping[str, str] | None = None) -> FilesState | None:
    """What says whether a workspace's agent files changed; None when a folder or file cannot be
    looked at (its catalogue is then read every time, and shows the problem)."""
    try:
        return tuple(_folder_state(folder) for folder in agent_folders(workspace, env))
    except OSError:
        return None


def _folder_state(folder: Path) -> tuple[tuple[str, int, int, int], ...]:
    """One folder's `*.md` files (a missing folder has none); an unreadable one raises OSError."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return ()
    files = []
    for entry in entries:
        if entry.name.endswith(".md"):
            found = entry.stat()  # follows a symbolic link, as reading the file does
            files.append((entry.name, found.st_mtime_ns, found.st_size, found.st_ino))
    return tuple(sorted(files))


class AgentCatalogues:
    """The agent catalogue of each workspace (and set of configured providers), read again when its
    files changed."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env
        self._kept: dict[tuple[Path, tuple[str, ...] | None], tuple[FilesState, AgentCatalogue]] = {}

    async def find(self, workspace: Path, providers: Collection[str] | None = None) -> AgentCatalogue:
        """The workspace's agents as `find_agents` reads them: the kept catalogue while no agent
        file changed, else read again (in a thread: they are files)."""
        key = (workspace, None if providers is None else tuple(sorted(providers)))
        state = agent_files_state(workspace, self._env)
        kept = self._kept.get(key)
        if state is not None and kept is not None and kept[0] == state:
            return kept[1]
        catalogue = await asyncio.to_thread(find_agents, workspace, providers, self._env)
        if state is None:
            self._kept.pop(key, None)
        else:
            self._kept[key] = (state, catalogue)
        return catalogue
