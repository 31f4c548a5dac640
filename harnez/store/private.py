"""The database is private: its folder 0700, its files (database, WAL, SHM, backups) 0600.

Conversations hold source code, commands and their output; another local user must not read them.
SQLite creates the WAL and SHM files with the database file's mode, so a database created 0600
keeps them 0600 too. Files left readable by an older Harnez (or a loose umask) are tightened on
open, and the person is told once: the next open finds nothing to tighten.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from harnez.errors import StoreError

FILE_MODE = 0o600
FOLDER_MODE = 0o700
OWN_FOLDER = ".harnez"
"""A folder of this name is Harnez's own and made private; any other folder is only created so."""
COMPANIONS = ("-wal", "-shm", "-journal")


def prepare(path: Path) -> list[str]:
    """Create the database's folder and file privately, tighten what exists; notices for the person.

    Raises StoreError (with what to do) when the location cannot hold a database.
    """
    notices: list[str] = []
    if path.exists() and not path.is_file():
        what = "a folder" if path.is_dir() else "not a regular file"
        raise StoreError(
            f"Cannot use {path} as the database: it is {what}. Point HARNEZ_DATABASE_PATH (or "
            "--session-dir) at a file in a folder you can write."
        )
    folder = path.parent
    if path.exists() and not (os.access(path, os.W_OK) and os.access(folder, os.W_OK)):
        which = "the database file" if not os.access(path, os.W_OK) else "its folder"
        raise StoreError(
            f"Cannot open {path}: {which} is read-only, and Harnez writes to every database it "
            "opens (its journal too). Make it writable, or set HARNEZ_DATABASE_PATH (or "
            "--session-dir) to a file in a folder you can write."
        )
    created = _make_folder(folder)
    if not created and folder.name == OWN_FOLDER and _loose(folder, FOLDER_MODE):
        _tighten(folder, FOLDER_MODE)
        notices.append(f"Made {folder} private (mode 700): other users could list it.")
    loose = [p for p in _database_files(path) if _loose(p, FILE_MODE)]
    for file in loose:
        _tighten(file, FILE_MODE)
    if loose:
        names = ", ".join(p.name for p in loose)
        notices.append(
            f"Made the database files private (mode 600) in {folder}: {names} were readable by other users."
        )
    if not path.exists():
        create_private(path)
    return notices


def _make_folder(folder: Path) -> bool:
    """Create the folder (and its parents) 0700; True when it did not exist."""
    if folder.is_dir():
        return False
    try:
        folder.mkdir(mode=FOLDER_MODE, parents=True)
    except FileExistsError:
        if folder.is_dir():
            return False
        raise StoreError(
            f"Cannot keep the database in {folder}: it exists and is not a folder. Move it "
            "away or set HARNEZ_DATABASE_PATH to another file."
        ) from None
    except OSError as exc:
        raise StoreError(
            f"Cannot create the folder {folder} for the database ({exc.strerror}). Make it "
            "writable, or set HARNEZ_DATABASE_PATH (or --session-dir) to a folder you can "
            "write."
        ) from None
    os.chmod(folder, FOLDER_MODE)  # mkdir's mode is filtered by the umask; make it exact
    return True


def create_private(path: Path) -> None:
    """Create an empty file readable by its owner only (before SQLite opens it)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
    except OSError as exc:
        raise StoreError(
            f"Cannot create the database {path} ({exc.strerror}). Make its folder writable, "
            "or set HARNEZ_DATABASE_PATH (or --session-dir) to a folder you can write."
        ) from None


def _database_files(path: Path) -> list[Path]:
    candidates = [path, *(path.with_name(path.name + suffix) for suffix in COMPANIONS)]
    candidates += sorted(path.parent.glob(f"{path.name}.v*.bak"))
    return [p for p in candidates if p.is_file()]


def _loose(path: Path, mode: int) -> bool:
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return False
    return bool(current & ~mode & 0o777)


def _tighten(path: Path, mode: int) -> None:
    try:
        os.chmod(path, stat.S_IMODE(path.stat().st_mode) & mode)
    except OSError:
        pass  # not ours to change (another owner): reading it is still up to that owner
