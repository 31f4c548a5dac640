"""The in-process server: sessions, events with cursors, and the running tasks.

The names below load on first use, so that a light submodule (`harnez.server.totals`) can be
imported without the server and everything it pulls in (settings, wires, httpx).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harnez.hooks.trust import HookReview
    from harnez.server.runner import TaskOutcome, TaskRun, TaskWork
    from harnez.server.server import Draft, Server
    from harnez.store.sessions import SessionPage, SessionRecord
    from harnez.store.tasks import TaskRecord

__all__ = [
    "Draft",
    "HookReview",
    "Server",
    "SessionPage",
    "SessionRecord",
    "TaskOutcome",
    "TaskRecord",
    "TaskRun",
    "TaskWork",
]

_HOMES = {
    "Draft": "harnez.server.server",
    "HookReview": "harnez.hooks.trust",
    "Server": "harnez.server.server",
    "TaskOutcome": "harnez.server.runner",
    "TaskRun": "harnez.server.runner",
    "TaskWork": "harnez.server.runner",
    "SessionRecord": "harnez.store.sessions",
    "SessionPage": "harnez.store.sessions",
    "TaskRecord": "harnez.store.tasks",
}
"""Where each name lives; the session and task records are the store's, and a review of a project's hooks
is the hooks', handed out through the server."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harnez.server' has no attribute {name!r}")
    return getattr(import_module(home), name)
