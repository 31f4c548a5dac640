"""`Store`: every table of one database behind one object with one write connection."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from harnez.events import StoredEvent
from harnez.store.commands import RunningCommands
from harnez.store.context import ContextRecords
from harnez.store.db import Database
from harnez.store.delegations import DelegationTable
from harnez.store.events import EventLog
from harnez.store.ledger import Ledger
from harnez.store.search import FullTextSearch
from harnez.store.sessions import SessionTable
from harnez.store.tasks import TaskTable

if TYPE_CHECKING:
    from harnez.store.imports import ImportedSessions


class Store:
    """Everything Harnez keeps, behind one object with one write connection."""

    def __init__(self, db: Database, on_commit: Callable[[list[StoredEvent]], None] | None = None) -> None:
        self.db = db
        self.events = EventLog(db, on_commit)
        db.on_failure = self.events.fail  # a failure met by any write stops the log too
        self.sessions = SessionTable(db)
        self.tasks = TaskTable(db)
        self.ledger = Ledger(db)
        self.context = ContextRecords(db)
        self.search = FullTextSearch(db)
        self.commands = RunningCommands(db)
        self.delegations = DelegationTable(db)

    @functools.cached_property
    def imports(self) -> ImportedSessions:
        """The imported sessions' table, made at first use: only `harnez import` and an imported
        session's origin read it, and its module is not needed before a first answer."""
        from harnez.store.imports import ImportedSessions

        return ImportedSessions(self.db)

    @classmethod
    async def open(
        cls,
        path: Path,
        on_commit: Callable[[list[StoredEvent]], None] | None = None,
        migrations: Path | None = None,
    ) -> Store:
        """Open (migrating first) and start the group-commit writer."""
        store = cls(await Database.open(path, migrations), on_commit)
        store.events.start()
        return store

    async def close(self) -> None:
        """Commit pending events and close."""
        try:
            await self.events.stop()
        finally:
            await self.db.close()
