"""What every reader offers: where its harness keeps sessions, a constant-memory summary, a full read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harnez.importers.normalized import Entry, Session, SessionInfo, Summary, Tally

StreamKey = str | None
"""Which conversation of a source an entry belongs to: None for the session itself, else a key of
another conversation in the same source (a Claude Code 1.x inline sidechain)."""


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where one session (or, for a file holding several, one file) is stored."""

    harness: str
    path: Path
    key: str | None = None
    """The session inside a database or a store folder (OpenCode); None for a session file."""
    subagent: bool = False
    """A sub-agent's own file."""
    fingerprint: str = ""
    """Changes whenever the stored session changes (file size and modification time, or the harness's
    own update time and counts): an import skips what it already has."""
    modified: float = 0.0
    """When the session last changed, Unix seconds."""

    @property
    def label(self) -> str:
        return f"{self.path}#{self.key}" if self.key else str(self.path)


def file_ref(harness: str, path: Path, *, subagent: bool = False) -> SourceRef:
    """A session file, fingerprinted by size and modification time."""
    stat = path.stat()
    return SourceRef(harness, path, None, subagent, f"{stat.st_size}:{stat.st_mtime_ns}", stat.st_mtime)


class Reader:
    """A harness's session format. Subclasses say where sessions live and how to parse one."""

    harness: str = ""

    def locate(self, home: Path) -> Iterator[SourceRef]:
        """Every session stored under a HOME folder, in the harness's own layout."""
        raise NotImplementedError

    def refs_for(self, path: Path) -> list[SourceRef]:
        """The sessions of a path given directly (a session file, a database, a store folder)."""
        raise NotImplementedError

    def parse(
        self, ref: SourceRef, infos: dict[StreamKey, SessionInfo], *, strict: bool = False, full: bool = False
    ) -> Iterator[tuple[StreamKey, Entry]]:
        """The entries of a source in order, tagged with their conversation; `infos` is filled
        (main conversation first) while they are read. `full` asks for what only a full read
        needs (pi's entry tree); a summary leaves it out to stay in constant memory."""
        raise NotImplementedError

    def summarize(self, ref: SourceRef, *, strict: bool = False) -> list[Summary]:
        """The figures of the source's sessions, read in one streaming pass (constant memory)."""
        infos: dict[StreamKey, SessionInfo] = {}
        tallies: dict[StreamKey, Tally] = {}
        for key, entry in self.parse(ref, infos, strict=strict):
            tally = tallies.get(key)
            if tally is None:
                tally = tallies[key] = Tally()
            tally.add(entry)
        return [Summary(info, tallies.get(key) or Tally()) for key, info in infos.items()]

    def read(self, ref: SourceRef, *, strict: bool = False) -> list[Session]:
        """The source's sessions at full fidelity (nothing truncated)."""
        infos: dict[StreamKey, SessionInfo] = {}
        entries: dict[StreamKey, list[Entry]] = {}
        for key, entry in self.parse(ref, infos, strict=strict, full=True):
            entries.setdefault(key, []).append(entry)
        return [Session(info, entries.get(key, [])) for key, info in infos.items()]
