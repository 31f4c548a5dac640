"""Windows of a session's stored events, as the transcript renders them (newest first, then older)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harnez.events import StoredEvent
    from harnez.server.server import Server

WINDOW_EVENTS = 200
"""How many of the newest events are rendered when a session opens, and per scroll-back page."""

_NEWEST = 2**62


@dataclass(frozen=True, slots=True)
class EventWindow:
    """A run of consecutive stored events and whether older ones exist."""

    events: list[StoredEvent]
    has_older: bool

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest event (0 when empty): the live cursor."""
        return self.events[-1].seq if self.events else 0


async def newest_events(server: Server, session_id: str, limit: int = WINDOW_EVENTS) -> EventWindow:
    """The newest `limit` events of a session (none for a session not yet saved)."""
    return await events_before(server, session_id, _NEWEST, limit)


async def events_before(server: Server, session_id: str, before: int, limit: int = WINDOW_EVENTS) -> EventWindow:
    """Up to `limit` events older than `before`, oldest first."""
    events = await server.events_before(session_id, before, limit)
    return EventWindow(events, bool(events) and events[0].seq > 1)
