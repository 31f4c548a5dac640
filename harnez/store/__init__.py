"""SQLite storage: migrations, the event log, sessions, tasks, ledgers, context records, search.

The names below load on first use (PEP 562), so that a reader of one table (`harnez.store.sessions`,
the resume picker's first page) imports that table, not every table, the event vocabulary and
aiosqlite's whole write path. `from harnez.store import Store` works as before.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harnez.store.db import Database
    from harnez.store.events import EventLog
    from harnez.store.ledger import Ledger, ModelCall, ToolExecution
    from harnez.store.search import SearchPage
    from harnez.store.sessions import SessionPage, SessionRecord
    from harnez.store.store import Store
    from harnez.store.tasks import TaskRecord

__all__ = [
    "Database",
    "EventLog",
    "Ledger",
    "ModelCall",
    "SearchPage",
    "SessionPage",
    "SessionRecord",
    "Store",
    "TaskRecord",
    "ToolExecution",
]

_HOMES = {
    "Database": "harnez.store.db",
    "EventLog": "harnez.store.events",
    "Ledger": "harnez.store.ledger",
    "ModelCall": "harnez.store.ledger",
    "SearchPage": "harnez.store.search",
    "SessionPage": "harnez.store.sessions",
    "SessionRecord": "harnez.store.sessions",
    "Store": "harnez.store.store",
    "TaskRecord": "harnez.store.tasks",
    "ToolExecution": "harnez.store.ledger",
}
"""Where each name lives."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harnez.store' has no attribute {name!r}")
    return getattr(import_module(home), name)
