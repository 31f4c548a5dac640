"""Windows of a session's stored events, as the transcript renders them (newest first, then older),
and the screens' frame pacing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen

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


async def events_before(
    server: Server, session_id: str, before: int, limit: int = WINDOW_EVENTS
) -> EventWindow:
    """Up to `limit` events older than `before`, oldest first."""
    events = await server.events_before(session_id, before, limit)
    return EventWindow(events, bool(events) and events[0].seq > 1)


def paint_without_skipping(screen: Screen) -> None:
    """Let `screen` paint a frame as soon as one is asked for after a frame that ran long.

    Textual paints a screen from a 60 Hz timer that skips the ticks it missed, and its skip lands one
    tick too far: after any frame longer than the time left to the next tick, the next frame waits
    17-33 ms even with nothing else to do. While an answer streams, frames that lay the transcript
    out often run that long, and keystrokes waited for those skipped ticks (p50 15-20 ms; 4 ms with
    no skipping). Without skipping, a timer that fell behind ticks as soon as a refresh is asked for.
    The timer and its flag are private to Textual (8.x): where they do not exist, nothing changes.
    """
    timer = getattr(screen, "_update_timer", None)
    if timer is not None and isinstance(getattr(timer, "_skip", None), bool):
        timer._skip = False


def paint_after_batch(screen: Screen) -> None:
    """Have `screen` paint what was refreshed during an `App.batch_update` now that the batch is over.

    While a batch runs, the screen ignores its refreshes (it does not start its frame timer), and the
    batch's end wakes the app, not the screen (Textual 8): the frame waited until anything else sent
    the screen a message. A later prompt's first answer text was painted 15-24 ms after it was
    appended, the person's prompt as late, and the server's reads that the prompt's task awaited
    meanwhile came back only after that frame. The screen's idle check starts the timer of any
    pending layout or repaint at once.
    """
    screen.check_idle()
