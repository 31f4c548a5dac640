"""Run the UHP application with uvicorn in the process (and event loop) of the `Server` it serves."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from harnez.errors import UsageError
from harnez.http import DEFAULT_VERSION
from harnez.http.app import JSON_TYPE, create_app
from harnez.http.errors import ApiError
from harnez.server.rates import TASKS_PER_MINUTE
from harnez.server.server import Server
from harnez.server.uhp import MAX_RUNNING_TASKS, HarnessHost

LOOPBACK_NAMES = frozenset({"localhost"})
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MAX_HEAD_BYTES = 16 * 1024
"""How much of a request head (request line and headers) is read waiting for its end: h11's default,
said in the 431 answer (a longer head that arrives whole in one read is still served)."""


class Uvicorn(uvicorn.Server):
    """uvicorn's server, except that SIGINT, SIGTERM and SIGHUP (the terminal it was started from
    closed) end `serve()` rather than being raised again after it (or killing the process): the caller
    then closes the Harnez server itself (tasks cancelled and recorded, database closed).

    `on_exit` runs at the first signal: it cancels the running tasks, so that open streams end with
    their terminal event at once instead of waiting out the graceful-shutdown timeout.
    """

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], object] | None = None) -> None:
        super().__init__(config)
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        first = not self.should_exit
        super().handle_exit(sig, frame)
        if first and self._on_exit is not None:
            self._on_exit()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)


class EnvelopeProtocol(H11Protocol):
    """uvicorn's h11 protocol, except that a request too malformed to reach the application (h11
    cannot parse it: a bad request line or header, headers too large) gets the UHP error envelope
    (Errors §1: every non-2xx has it) with `UHP-Version`, instead of uvicorn's plain-text body.

    uvicorn takes a protocol class (`Config(http=...)`), and `send_400_response` is the method both of
    its HTTP protocols answer such a request with; this one closes the connection as uvicorn's does,
    with the envelope as its body, and answers headers too large with the 431 h11 hints at (uvicorn
    says 400 to every refusal).
    """

    def send_400_response(self, msg: str) -> None:
        # called in uvicorn's `except h11.RemoteProtocolError`, whose status hint tells a request head
        # too large to read (431) from one that is not HTTP (400)
        error = refusal_of(sys.exc_info()[1])
        body = json.dumps(error.envelope()).encode()
        headers = [
            (b"content-type", JSON_TYPE),
            (b"content-length", str(len(body)).encode()),
            (b"uhp-version", DEFAULT_VERSION.encode()),
            (b"connection", b"close"),
        ]
        reason = b"Request Header Fields Too Large" if error.status == 431 else b"Bad Request"
        for event in (
            h11.Response(status_code=error.status, headers=headers, reason=reason),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


def refusal_of(error: BaseException | None) -> ApiError:
    """The answer to a request h11 refused: 431 `harnez_headers_too_large` when its head (request line
    and headers) outgrew MAX_HEAD_BYTES, else 400 `invalid_input`."""
    if isinstance(error, h11.RemoteProtocolError) and error.error_status_hint == 431:
        return ApiError(
            "harnez_headers_too_large",
            f"The request line and headers did not end within the {MAX_HEAD_BYTES} bytes this server "
            "reads; send shorter headers (a long cookie or token?) and try again.",
            detail={"max_bytes": MAX_HEAD_BYTES},
            status=431,
        )
    return ApiError.invalid("The request is not valid HTTP/1.1, so this server could not read it.")


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server on this machine."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; a clear error (exit 2) when the address is taken or unknown."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        raise UsageError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port or --host."
        ) from None
    sock.setblocking(False)
    return sock


async def serve(
    server: Server,
    *,
    host: str,
    port: int,
    principals: dict[str, str],
    workspaces: Path,
    fixed_workspace: Path | None = None,
    max_tasks: int | None = None,
    tasks_per_minute: int | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM; prints `listening on URL` on stdout once the port is bound.

    `principals` maps each principal's name to its bearer token; empty serves without tokens.
    `tasks_per_minute` None is the default rate (`TASKS_PER_MINUTE`), 0 no limit."""
    sock = bind(host, port)
    harness_host = await HarnessHost(
        server,
        workspaces,
        fixed_workspace,
        max_tasks or MAX_RUNNING_TASKS,
        TASKS_PER_MINUTE if tasks_per_minute is None else tasks_per_minute,
    ).open()
    config = uvicorn.Config(
        create_app(harness_host, principals),
        http=EnvelopeProtocol,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=30,
    )
    runner = Uvicorn(config, on_exit=lambda: asyncio.ensure_future(harness_host.cancel_all()))
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    while not runner.started and not serving.done():
        await asyncio.sleep(0.01)
    if runner.started:
        bound_host, bound_port = sock.getsockname()[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        print(f"harnez serve: listening on http://{shown}:{bound_port}", flush=True)
        if not principals:
            print(
                "harnez serve: no token is set, so any local process can use this server; set one with "
                "--token-env NAME",
                file=sys.stderr,
                flush=True,
            )
    await serving
