"""Finding sessions: under a HOME in each harness's own layout, or from a path given on the command line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harnez.errors import SessionFormatError
from harnez.importers.base import Reader, SourceRef
from harnez.importers.claude_code import ClaudeCodeReader
from harnez.importers.codex import CodexReader, is_json_rollout
from harnez.importers.jsonl import first_records
from harnez.importers.normalized import HARNESSES
from harnez.importers.opencode import DATABASE, OpenCodeReader, is_store
from harnez.importers.pi import PiReader

SQLITE_HEADER = b"SQLite format 3\x00"
CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "system",
        "attachment",
    }
)
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
PI_TYPES = frozenset(
    {
        "model_change",
        "thinking_level_change",
        "session_info",
        "compaction",
        "branch_summary",
        "custom_message",
        "label",
    }
)


def check_harness(name: str | None) -> str | None:
    """A harness name as given on the command line; a clear error when it is unknown."""
    if name is not None and name not in HARNESSES:
        raise SessionFormatError(f"Unknown harness {name!r}; use one of {', '.join(HARNESSES)}.")
    return name


@dataclass
class Readers:
    """One reader per harness, sharing state for one run (OpenCode's database copies); close when done."""

    readers: dict[str, Reader] = field(
        default_factory=lambda: {
            "claude-code": ClaudeCodeReader(),
            "codex": CodexReader(),
            "opencode": OpenCodeReader(),
            "pi": PiReader(),
        }
    )

    def __getitem__(self, harness: str) -> Reader:
        return self.readers[harness]

    def close(self) -> None:
        opencode = self.readers["opencode"]
        if isinstance(opencode, OpenCodeReader):
            opencode.close()

    def __enter__(self) -> Readers:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def locate(self, home: Path, harnesses: Iterable[str] = HARNESSES) -> Iterator[SourceRef]:
        """Every session under a HOME, harness by harness."""
        for harness in harnesses:
            yield from self.readers[harness].locate(home)

    def refs_for(self, path: Path, harness: str | None = None) -> list[SourceRef]:
        """The sessions of a path: one session file, an OpenCode database or store folder, or a HOME
        (or any folder) to search."""
        path = Path(path).expanduser()
        if not path.exists():
            raise SessionFormatError(
                f"{path} does not exist; give a session file, an OpenCode database or "
                "store folder, or a HOME folder to search."
            )
        if path.is_dir():
            return self._folder(path, harness)
        found = harness or detect(path)
        if found is None and path.is_file() and path.stat().st_size == 0:
            raise SessionFormatError(f"{path} is empty: there is no session in it to read.")
        if found is None:
            raise SessionFormatError(
                f"{path} is not a session file of {', '.join(HARNESSES)} that Harnez "
                "recognises; name its format with --harness."
            )
        return self.readers[found].refs_for(path)

    def _folder(self, path: Path, harness: str | None) -> list[SourceRef]:
        if is_store(path) and harness in (None, "opencode"):
            return self.readers["opencode"].refs_for(path)
        harnesses = [harness] if harness else list(HARNESSES)
        refs = list(self.locate(path, harnesses))
        if refs:
            return refs
        for candidate in sorted(path.rglob("*")):
            if candidate.is_dir() and harness in (None, "opencode") and is_store(candidate):
                refs += self.readers["opencode"].refs_for(candidate)
            elif (
                candidate.suffix in (".jsonl", ".db") or is_json_rollout(candidate)
            ) and candidate.is_file():
                found = harness or detect(candidate)
                if found is not None and (harness is None or found == harness):
                    refs += self.readers[found].refs_for(candidate)
        return refs


def detect(path: Path) -> str | None:
    """Which harness wrote a file, from its first records (or the SQLite header of OpenCode's database)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError:
        return None
    if head == SQLITE_HEADER:
        return "opencode" if path.name == DATABASE or _has_opencode_tables(path) else None
    if is_json_rollout(path):
        return "codex"
    for record in first_records(path, 8):
        kind = record.get("type")
        if kind in CODEX_TYPES and "payload" in record:
            return "codex"
        if record.get("record_type") == "state" or (kind is None and {"id", "instructions"} <= set(record)):
            return "codex"  # a rollout from before the type/payload envelope
        if kind == "session" and ("cwd" in record or "version" in record):
            return "pi"
        if kind in PI_TYPES or (kind == "message" and "parentId" in record):
            return "pi"
        if "sessionId" in record or kind in CLAUDE_TYPES:
            return "claude-code"
    return None


def _has_opencode_tables(path: Path) -> bool:
    """Whether a SQLite file has OpenCode's tables (read from a private copy)."""
    reader = OpenCodeReader()
    try:
        reader.refs_for(path)
        return True
    except SessionFormatError:
        return False
    finally:
        reader.close()
