"""The event feed of a harness (`GET /v1/harnesses/{id}/events`, Streaming §5), resumable.

A harness's feed is one numbered stream per principal and server process, shared by every
connection of that principal to it: from the first connection on, the events of each of the
principal's responses with the harness are relayed into it, each
naming its `response_id` and numbered 0, 1, 2, … in the order they were made. Because a number
means the same event on every connection, `Last-Event-ID: N` (or `?starting_after=N`) resumes after
event N exactly, as it does on a task's stream — including the events made while the client was
away (the latest FEED_KEPT are kept).

Only the links differ between connections: a cited file's `download_url` is kept relative in the
feed and made absolute, as each event is sent, under the base URL of the connection's own request,
so a client that reached the server under another name (`localhost`, a proxy) gets links it can
follow.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from harnez.http.principals import principal
from harnez.http.tasks import follow, numbered_stream, resume_after
from harnez.server.uhp import HarnessHost

log = logging.getLogger("harnez.http")

FEED_KEPT = 10_000
"""How many of a harness's latest feed events are kept for clients that resume."""
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class HarnessFeed:
    """The numbered events of one principal's responses with one harness, relayed from the moment
    it is made (a principal never sees another's work, with the built-in harness either)."""

    def __init__(self, host: HarnessHost, harness_id: str, owner: str, kept: int = FEED_KEPT) -> None:
        self._host = host
        self._events: deque[dict[str, Any]] = deque(maxlen=kept)
        self._next = 0
        self._running: dict[str, int] = {}
        """The number of the first event of each response whose terminal event is not in yet."""
        self._changed = asyncio.Event()
        self._relays: set[asyncio.Task[None]] = set()
        running, started, _ = host.watch_responses(harness_id, owner)
        for row in running:
            self._relay(row)
        self._admitting = asyncio.ensure_future(self._admit(started))

    async def _admit(self, started: asyncio.Queue[Any]) -> None:
        while True:
            self._relay(await started.get())

    def _relay(self, row: Any) -> None:
        task = asyncio.ensure_future(self._follow(row))
        self._relays.add(task)
        task.add_done_callback(self._relays.discard)

    async def _follow(self, row: Any) -> None:
        try:
            # `hide` False: following a `store: false` response here does not use up its one read
            # links relative (base ""): each connection makes them absolute under its own base URL
            async for event in follow(self._host, row, "", hide=False):
                self._append(row.id, event)
        except Exception:  # the server is closing, or a bug: the feed goes on without this response
            log.warning("the event feed stopped following response %s", row.id, exc_info=True)
            self._running.pop(row.id, None)

    def _append(self, response_id: str, event: dict[str, Any]) -> None:
        number = self._next
        self._next += 1
        self._running.setdefault(response_id, number)
        if event["type"] in TERMINAL_EVENTS:
            self._running.pop(response_id, None)
        self._events.append({**event, "response_id": response_id, "sequence_number": number})
        self._changed.set()
        self._changed = asyncio.Event()

    def start(self, after: int | None) -> int:
        """The first event a connection gets: the one after `after` (a number this feed gave), else the
        first event of the oldest response still running (each running response from its
        `response.created`), else the next one made."""
        if after is not None and after < self._next:
            return after + 1
        return min(self._running.values(), default=self._next)

    async def events(self, after: int | None, base_url: str) -> AsyncGenerator[dict[str, Any], None]:
        """The feed from `start(after)` on, live, until the client leaves, its links under `base_url`
        (the connection's own); events no longer kept are skipped (the numbers show the gap)."""
        cursor = self.start(after)
        base = base_url.rstrip("/")
        while True:
            oldest = self._next - len(self._events)
            cursor = max(cursor, oldest)
            if cursor < self._next:
                yield with_links(self._events[cursor - oldest], base)
                cursor += 1
            else:
                await self._changed.wait()


def with_links(value: Any, base: str) -> Any:
    """`value` (an event, or a part of one) with every relative `download_url` made absolute under
    `base`; copied, since the feed's events are shared by its connections."""
    if isinstance(value, dict):
        return {
            key: base + item
            if key == "download_url" and isinstance(item, str) and item.startswith("/")
            else with_links(item, base)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [with_links(item, base) for item in value]
    return value


def _feed(request: Request, harness_id: str) -> HarnessFeed:
    feeds: dict[tuple[str, str], HarnessFeed] = request.app.state.feeds
    owner = principal(request)
    if (harness_id, owner) not in feeds:
        host = request.app.state.host
        feeds[harness_id, owner] = HarnessFeed(host, harness_id, owner)
    return feeds[harness_id, owner]


async def harness_events(request: Request) -> Response:
    """A live feed of the harness's work (Streaming §5): the events of each of its responses that
    runs now or starts while the feed is open, from `response.created` to its terminal event, each
    naming its `response_id`; resumed after `Last-Event-ID` or `?starting_after=N`."""
    host: HarnessHost = request.app.state.host
    harness = await host.harnesses.get(request.path_params["harness_id"], owner=principal(request))
    after = resume_after(request)
    # the feed watches from now, before the answer's headers: a response started after them is in it
    feed = _feed(request, harness.id)
    return numbered_stream(feed.events(after if after >= 0 else None, str(request.base_url)))


routes = [Route("/v1/harnesses/{harness_id}/events", harness_events, methods=["GET"])]
