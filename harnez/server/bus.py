"""Fan-out of committed events to live subscribers, per session."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable

from harnez.errors import StoreError
from harnez.events import LiveOutput, StoredEvent

log = logging.getLogger(__name__)

Delivery = StoredEvent | StoreError | None
"""What a subscriber's queue holds: an event, the error that ended saving, or None (session deleted)."""


class EventBus:
    """Delivers each committed event to every queue registered for its session."""

    def __init__(self) -> None:
        self._queues: dict[str, set[asyncio.Queue[Delivery]]] = defaultdict(set)
        self._failure: StoreError | None = None
        self._watchers: dict[str, list[Callable[[LiveOutput], None]]] = defaultdict(list)

    def register(self, session_id: str) -> asyncio.Queue[Delivery]:
        """A new queue that receives the session's events from now on."""
        queue: asyncio.Queue[Delivery] = asyncio.Queue()
        if self._failure is not None:
            queue.put_nowait(self._failure)
        self._queues[session_id].add(queue)
        return queue

    def unregister(self, session_id: str, queue: asyncio.Queue[Delivery]) -> None:
        """Stop delivering to a queue."""
        queues = self._queues.get(session_id)
        if queues is not None:
            queues.discard(queue)
            if not queues:
                del self._queues[session_id]

    def publish(self, events: list[StoredEvent]) -> None:
        """Called after each group commit, in commit order."""
        for event in events:
            for queue in self._queues.get(event.session, ()):
                queue.put_nowait(event)

    def fail(self, failure: StoreError) -> None:
        """Saving failed for good: every subscription, now and later, ends with this error."""
        self._failure = failure
        for queues in self._queues.values():
            for queue in queues:
                queue.put_nowait(failure)

    def close_session(self, session_id: str) -> None:
        """End every subscription of a session (it was deleted)."""
        for queue in self._queues.pop(session_id, set()):
            queue.put_nowait(None)

    # live output: never stored, only for whoever watches now --------------------------------------

    def watch_live(self, session_id: str, watcher: Callable[[LiveOutput], None]) -> Callable[[], None]:
        """Call `watcher` with each `LiveOutput` of the session from now on; returns the unwatch."""
        self._watchers[session_id].append(watcher)

        def unwatch() -> None:
            watchers = self._watchers.get(session_id)
            if watchers is not None and watcher in watchers:
                watchers.remove(watcher)
                if not watchers:
                    del self._watchers[session_id]

        return unwatch

    def publish_live(self, output: LiveOutput) -> None:
        """Hand `output` to the session's watchers (a watcher that fails is logged and skipped: the
        command it shows goes on)."""
        for watcher in tuple(self._watchers.get(output.session, ())):
            try:
                watcher(output)
            except Exception:
                log.exception("a live output watcher failed")
