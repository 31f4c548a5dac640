"""Windows of a session's stored events, as the transcript renders them (newest first, then older),
and the screens' frame pacing."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.timer import Timer

    from harnez.events import EventBody, StoredEvent
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


STREAMED = frozenset({"text-delta", "reasoning-delta", "tool-arguments-delta"})
"""The kinds that continue the block before them (an answer, a reasoning, a call's arguments)."""


async def events_before(
    server: Server, session_id: str, before: int, limit: int = WINDOW_EVENTS
) -> EventWindow:
    """Up to `limit` events older than `before`, oldest first; more when the oldest of them fall
    inside a turn whose start is older (`_from_turn_start`)."""
    events = await _from_turn_start(server, session_id, await server.events_before(session_id, before, limit))
    return EventWindow(events, bool(events) and events[0].seq > 1)


def _starts_a_turn(event: StoredEvent) -> bool:
    """A turn's start, or a prompt's (a steering message does not end the answer it came during)."""
    if event.kind == "user-message":
        return getattr(event.body, "mode", None) != "steering"
    return event.kind == "turn-started"


async def _from_turn_start(server: Server, session_id: str, events: list[StoredEvent]) -> list[StoredEvent]:
    """`events`, begun at the start of the turn they begin in when streamed deltas of it come before
    any turn's start in them: while a turn streams, each delta is an event, so a window of the newest
    200 cut a long answer where it began — its head drawn from the older page as an answer of its
    own, the rest as another, the Markdown parsed in two. (A completed turn's deltas are one row.)"""
    while events and events[0].seq > 1:
        head = next((i for i, event in enumerate(events) if _starts_a_turn(event)), len(events))
        if not any(event.kind in STREAMED for event in events[:head]):
            return events
        older = await server.events_before(session_id, events[0].seq, WINDOW_EVENTS)
        if not older:
            return events
        start = next((i for i in range(len(older) - 1, -1, -1) if _starts_a_turn(older[i])), None)
        events = older[start or 0 :] + events
        if start is not None:
            return events
    return events


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


HOLD_MOST = 0.1
"""Seconds a prompt's frames may be held for its answer (`RequestFirst`): the longest the person's
prompt may wait to be painted when the model is slower than that."""

WAIT_FOR_REQUEST = 0.05
"""The longest a held prompt's mount waits for its task's request to leave (`RequestFirst.before_prompt`)."""

ON_THE_WAY = frozenset({"user-message", "started", "turn-started"})
"""The events a task stores on its way to the model's first output: they do not end a hold."""


class RequestFirst:
    """Holds a screen's frames from a prompt's Enter until its task's first output, for at most
    `HOLD_MOST`: the task's request leaves before anything is painted, and its answer's first words
    are painted in the frame that paints the prompt.

    A frame lays out and paints the whole transcript (10-30 ms on two cores) and runs on the event
    loop the server shares: a prompt's frame, started while the task was reading the session's link
    and history, held each of those reads' answers, and with them the request (the second prompt's
    request left 30-50 ms after Enter, 20-30 ms of it behind that frame); the answer's block then
    needed a second full frame. Held, the request leaves ~15 ms sooner, the model works while the
    prompt and its answer are laid out once, and a model slower than `HOLD_MOST` sees its prompt
    painted that much later (docs/performance.md, "The prompt's frame held for its request").
    """

    def __init__(self, most: float = HOLD_MOST) -> None:
        self.most = most
        self._batch: contextlib.ExitStack | None = None
        self._screen: Screen | None = None
        self._timer: Timer | None = None

    @property
    def holding(self) -> bool:
        return self._batch is not None

    def hold(self, screen: Screen) -> None:
        """Hold `screen`'s app's frames (Textual's `batch_update`) until `release`, `seen` or the time
        limit; a hold already on is kept as it is."""
        if self._batch is not None:
            return
        batch = contextlib.ExitStack()
        batch.enter_context(screen.app.batch_update())
        self._batch, self._screen = batch, screen
        self._timer = screen.set_timer(self.most, self.release, name="request first")

    async def before_prompt(self, body: EventBody, server: Server, session_id: str) -> None:
        """Before a held prompt is mounted: wait until its task's request has left (at most
        `WAIT_FOR_REQUEST`), so that the prompt's mount (5-10 ms of Textual's work) runs while the
        model works, not between the task's reads and its request. (A fixed 10 ms wait did that in a
        short session, but a long one's reads took longer and the mount came between them.)"""
        if self._batch is not None and body.kind == "user-message":
            await server.request_on_its_way(session_id, WAIT_FOR_REQUEST)

    def seen(self, body: EventBody) -> None:
        """An event of the session was shown: the task's first output (anything past `ON_THE_WAY`)
        ends the hold."""
        if self._batch is not None and body.kind not in ON_THE_WAY:
            self.release()

    def release(self) -> None:
        """Paint what the hold kept back, now (no-op when nothing is held)."""
        batch, screen, timer = self._batch, self._screen, self._timer
        if batch is None or screen is None:
            return
        self._batch = self._screen = self._timer = None
        if timer is not None:
            timer.stop()
        batch.close()
        paint_after_batch(screen)
