"""The index of every Harnez database this user opened: a small JSON file in the state folder.

It lets a listing span every project (`harnez sessions --all`, the picker's all-projects scope).
It holds paths and times only, never conversation text. It is written atomically (a temporary file
renamed over it, under an advisory lock, so two Harnez processes never lose each other's entry)
and privately (0600 in a 0700 folder: the paths name the person's projects). A damaged or
unreadable index counts as empty and is rewritten whole by the next database opened; the index is
only a list of places to look, and every database re-enters it when it is next opened.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harnez.errors import StoreError
from harnez.store.private import FILE_MODE, FOLDER_MODE

INDEX_VERSION = 1


@dataclass(frozen=True, slots=True)
class IndexedDatabase:
    """One database in the index."""

    path: Path
    added_at: float

    @property
    def project(self) -> Path:
        """The folder the database belongs to: the one holding its `.harnez`, else its own folder."""
        return project_of(self.path)


def project_of(database: Path) -> Path:
    """The project a database belongs to: `<project>/.harnez/harnez.sqlite` → `<project>`; a database
    kept elsewhere (HARNEZ_DATABASE_PATH, --session-dir) belongs to its own folder."""
    folder = Path(database).parent
    return folder.parent if folder.name == ".harnez" else folder


class DatabaseIndex:
    """Reads and atomic rewrites of the index file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def entries(self) -> list[IndexedDatabase]:
        """The databases in the index, oldest entry first; [] when there is no index (or it is damaged)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return []
        rows = data.get("databases") if isinstance(data, dict) else None
        found: list[IndexedDatabase] = []
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("path"), str) and os.path.isabs(row["path"]):
                added = row.get("added_at")
                found.append(
                    IndexedDatabase(
                        Path(row["path"]), float(added) if isinstance(added, (int, float)) else 0.0
                    )
                )
        return found

    def remember(self, database: Path) -> bool:
        """Add a database (by its absolute path) unless it is there already; True when the file changed.

        Raises StoreError (with what to do) when the state folder cannot be written.
        """
        database = Path(os.path.abspath(database))
        if any(entry.path == database for entry in self.entries()):
            return False  # the common case: one small read, no write, no lock
        with self._locked():
            entries = self.entries()
            if any(entry.path == database for entry in entries):
                return False
            self._write([*entries, IndexedDatabase(database, time.time())])
        return True

    def forget(self, databases: Iterable[Path]) -> None:
        """Drop databases that moved or vanished."""
        gone = {Path(path) for path in databases}
        if not gone:
            return
        with self._locked():
            entries = self.entries()
            kept = [entry for entry in entries if entry.path not in gone]
            if len(kept) != len(entries):
                self._write(kept)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive advisory lock beside the index, held while it is read, changed and written."""
        folder = self.path.parent
        try:
            if not folder.is_dir():
                folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
                os.chmod(folder, FOLDER_MODE)  # mkdir's mode is filtered by the umask
            handle = os.open(self.path.with_name(self.path.name + ".lock"), os.O_CREAT | os.O_RDWR, FILE_MODE)
        except OSError as exc:
            raise StoreError(
                f"Cannot write the index of databases in {folder} ({exc.strerror}). Make the folder "
                "writable, or set HARNEZ_STATE_HOME to a folder you can write."
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # closing releases the lock

    def _write(self, entries: list[IndexedDatabase]) -> None:
        data = {
            "version": INDEX_VERSION,
            "databases": [{"path": str(entry.path), "added_at": entry.added_at} for entry in entries],
        }
        fd, temporary = tempfile.mkstemp(prefix=".databases-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:  # mkstemp makes it 0600
                json.dump(data, file, indent=1)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise StoreError(
                f"Cannot write the index of databases {self.path} ({exc.strerror}). Free some "
                "space or make the folder writable."
            ) from None
