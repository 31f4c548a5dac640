"""Ordered schema migrations: found in `migrations/`, applied statement by statement in one transaction."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from harnez.errors import MigrationError, SchemaTooNewError
from harnez.store.private import create_private

log = logging.getLogger(__name__)

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")

VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


@dataclass(frozen=True)
class Migration:
    """One numbered `.sql` file."""

    version: int
    name: str
    sql: str

    def statements(self) -> list[str]:
        """Split the file into complete SQL statements (triggers stay whole)."""
        statements: list[str] = []
        pending = ""
        for line in self.sql.splitlines(keepends=True):
            if not pending and line.strip().startswith("--"):
                continue
            pending += line
            if sqlite3.complete_statement(pending):
                statements.append(pending.strip())
                pending = ""
        if pending.strip():
            raise MigrationError(
                f"Migration {self.name} ends with an incomplete statement: {pending.strip()[:80]!r}"
            )
        return statements


def migrations_dir() -> Path:
    """The migrations folder: inside the installed package, else the checkout's top-level folder.

    Found beside this module's package on disk (`importlib.resources` would cost the picker's first
    page its import, with zipfile's, for the same folder: Harnez is never imported from a zip)."""
    packaged = Path(__file__).parent.parent / "migrations"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "migrations"
    if checkout.is_dir():
        return checkout
    raise MigrationError(
        "Harnez cannot find its migrations folder; reinstall the package (pip install harnez)."
    )


def load_migrations(folder: Path | None = None) -> list[Migration]:
    """Every migration in `folder`, ordered by version, checked for gaps and duplicates."""
    folder = folder or migrations_dir()
    found: list[Migration] = []
    for path in sorted(folder.glob("*.sql")):
        match = _NAME.match(path.name)
        if not match:
            raise MigrationError(f"Migration file {path} is not named NNNN_name.sql.")
        found.append(Migration(int(match.group(1)), path.name, path.read_text(encoding="utf-8")))
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(
                f"Migrations in {folder} skip or repeat version {expected} (found {migration.name})."
            )
    return found


def schema_version(path: Path) -> int:
    """The schema version of an existing database, read without writing to it (0 when blank)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    conn = sqlite3.connect(_read_only_uri(path), uri=True)
    try:
        row = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        if row is None:
            return 0
        (version,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
        return int(version)
    except sqlite3.DatabaseError as exc:
        raise MigrationError(
            f"{path} is not a Harnez database ({exc}). Move it away or set HARNEZ_DATABASE_PATH."
        ) from exc
    finally:
        conn.close()


def _read_only_uri(path: Path) -> str:
    """A URI that reads `path` and leaves its folder as it was.

    A read-only connection to a WAL database creates its `-wal` and `-shm` files and, unable to
    checkpoint, leaves them behind when it closes (a database refused as newer kept two new files).
    With no `-wal` beside it no connection has the database open (the last one to close deletes it),
    so everything committed is in the file itself: it is read as immutable, creating nothing. With a
    `-wal` present, it may hold commits, so it is read through it (both files exist already)."""
    if Path(f"{path}-wal").exists():
        return f"file:{quote(os.fsencode(path))}?mode=ro"
    return f"file:{quote(os.fsencode(path))}?mode=ro&immutable=1"


def check_not_newer(path: Path, current: int, head: int) -> None:
    """Refuse a database written by a newer Harnez; it is never written to."""
    if current > head:
        from harnez.install import upgrade_advice  # reads the installation's metadata: only when refusing

        raise SchemaTooNewError(
            f"The database {path} has schema version {current}, but this Harnez knows only up to "
            f"version {head}. It was written by a newer Harnez: {upgrade_advice()}, "
            f"or point HARNEZ_DATABASE_PATH at another file. The database was not changed."
        )


def backup(path: Path, version: int) -> Path:
    """Copy an existing database next to itself before migrating it, using SQLite's backup API."""
    target = path.with_name(f"{path.name}.v{version}-{time.strftime('%Y%m%d-%H%M%S')}.bak")
    create_private(target)
    source = sqlite3.connect(path)
    try:
        dest = sqlite3.connect(target)
        with dest:
            source.backup(dest)
        dest.close()
    finally:
        source.close()
    return target


def apply(conn: sqlite3.Connection, migration: Migration) -> None:
    """Apply one migration (its statements, then its Python step if it has one: harnez/store/upgrades.py)
    and record it, all in one transaction (never executescript)."""
    from harnez.store.upgrades import STEPS  # the Python steps read events and documents: only when migrating

    statements = migration.statements()
    step = STEPS.get(migration.version)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements:
            conn.execute(statement)
        if step is not None:
            step(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, time.time()),
        )
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
            conn.execute("ROLLBACK")
        raise MigrationError(
            f"Migration {migration.name} failed ({exc}); the database stays at version "
            f"{migration.version - 1}.{_advice(exc)}"
        ) from exc


def compact(conn: sqlite3.Connection) -> None:
    """Give the space a migration freed back to the file system (VACUUM). Without room for the copy
    VACUUM makes, the file keeps its size and SQLite reuses the free pages for new rows."""
    try:
        conn.execute("VACUUM")
    except sqlite3.Error as exc:
        log.warning(
            "The migrated database could not be compacted (%s); its free pages are reused instead.", exc
        )


def migrate(path: Path, folder: Path | None = None) -> int:
    """Bring the database at `path` to the newest schema; returns the version it ends at."""
    migrations = load_migrations(folder)
    head = len(migrations)
    current = schema_version(path)
    check_not_newer(path, current, head)
    if current == head:
        return current
    from harnez.store.upgrades import SHRINKS

    try:
        if current > 0:
            backup(path, current)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(VERSION_TABLE)
            for migration in migrations[current:]:
                apply(conn, migration)
            if any(m.version in SHRINKS for m in migrations[current:]) and current > 0:
                compact(conn)
        finally:
            conn.close()
    except (sqlite3.Error, OSError) as exc:
        raise MigrationError(
            f"Cannot prepare the database {path} ({exc}); it stays at version "
            f"{schema_version(path) if path.exists() else 0}.{_advice(exc)}"
        ) from exc
    return head


def _advice(exc: BaseException) -> str:
    return " Free some disk space, then start Harnez again." if "full" in str(exc).lower() else ""
