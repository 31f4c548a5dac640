"""HTTP clients that live as long as the process: one per provider, shared by every task."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket

import httpx

from harnez.settings import RetrySettings
from harnez.wires.catalogue import Endpoint
from harnez.wires.http import new_client, tls_context

WARM_UP_WAIT = 0.005
"""Seconds the warm-up's request waits for an answer that never comes (a listener that never reads):
the connection is open and the request written by then, so the imports are done; the start-up waits
for the warm-up before a new session shows."""


class HttpClients:
    """One `httpx.AsyncClient` per provider (and timeouts), made on first use, closed by `aclose`.

    A client per task cost every task a new connection pool and a new TCP (and TLS) connection to
    the provider; a shared one keeps connections alive from one task to the next. Closing empties
    the set: a client asked for afterwards is a new one, closed by the next `aclose`.
    """

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str, float, float], httpx.AsyncClient] = {}

    def __len__(self) -> int:
        return len(self._clients)

    def client(self, endpoint: Endpoint, retry: RetrySettings) -> httpx.AsyncClient:
        """The client of this provider, made now if it is the first call."""
        key = (endpoint.provider, endpoint.base_url, retry.connect_timeout, retry.read_timeout)
        found = self._clients.get(key)
        if found is None or found.is_closed:
            found = self._clients[key] = new_client(retry, endpoint.base_url)
        return found

    async def aclose(self) -> None:
        """Close every client (their connections too)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


@functools.cache
def warm_up(tls: bool = True) -> None:
    """Import and build, in the calling thread, what a first model request needs (once a process);
    with `tls`, the TLS context too (a provider over https).

    httpx imports its transport (httpcore, h11) when a client is made and the async backend when the
    first connection opens, and the TLS context loads the certificate store: about 100 ms on a quiet
    machine, which the first prompt of a process used to pay on the event loop. Run this in a worker
    thread before a prompt is likely (the app runs it before a new session shows). The request it
    makes goes to a loopback listener of its own that never answers: nothing leaves the machine.
    Where no loopback listener can be made, the first request pays what this could not do.
    """
    with contextlib.suppress(OSError), socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"

        async def touch() -> None:
            retry = RetrySettings(read_timeout=WARM_UP_WAIT, connect_timeout=1)
            async with new_client(retry, url) as client:
                with contextlib.suppress(httpx.HTTPError):
                    await client.get(url)

        asyncio.run(touch())
    if tls:
        tls_context()
