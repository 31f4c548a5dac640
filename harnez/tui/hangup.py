"""The terminal went away (SIGHUP: its window or tab closed, an ssh connection dropped) or the process
was asked to stop (SIGTERM): Harnez closes as it does on Ctrl+Q instead of dying on the spot.

Dying on the spot lost the events waiting for their group commit (the last words streamed) and left
the running task for the next open to find and call interrupted. Closed this way, the running tasks
are cancelled (their shell commands' process groups stopped), what is pending is committed, the
database is closed (no -wal/-shm left) and the process exits with 128 + the signal's number. After a
hang-up nothing is written to the terminal any more (it is gone). If closing takes longer than
`CLOSE_WITHIN`, the process ends regardless: what is committed stays, and the next open finds the
task as after a kill.

A terminal that is not the process's controlling terminal (a program that started Harnez in a pty
of its own, in a new session) sends no SIGHUP when it closes: reads of it return end-of-file at
once, and Textual's input thread read it again and again (~60 % of a core, forever). The app asks
`check_terminal` every `CHECK_EVERY` seconds, which takes a terminal that no longer answers (EIO)
as a hang-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import termios
import threading
from collections.abc import Callable, Coroutine
from typing import Any

CLOSE_WITHIN = 10.0
"""Seconds the close gets after the signal before the process exits regardless."""
SIGNALS = (signal.SIGHUP, signal.SIGTERM)
CHECK_EVERY = 1.0
"""Seconds between two checks that the terminal is still there (one `tcgetattr`)."""


class SignalClose:
    """Installs the handlers on the running loop; the first of the signals starts `close(exit_code)`,
    later ones are ignored (a second SIGHUP often follows the first)."""

    def __init__(
        self,
        close: Callable[[int], Coroutine[Any, Any, None]],
        driver: Callable[[], Any],
        end: Callable[[int], object] = os._exit,
    ) -> None:
        self._close = close
        self._driver = driver
        self._end = end
        """Ends the process when closing outlives `CLOSE_WITHIN`."""
        self.received: int | None = None
        """The signal being handled, once one came."""
        self._closing: asyncio.Task[None] | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._received, sig)

    def check_terminal(self) -> None:
        """Handle a terminal that went away without a SIGHUP as one."""
        fileno = getattr(self._driver(), "fileno", None)
        if self.received is not None or not isinstance(fileno, int):
            return
        try:
            termios.tcgetattr(fileno)
        except termios.error as exc:
            if exc.args and exc.args[0] == errno.EIO:  # gone; ENOTTY: no terminal ever (stdin a file)
                self._received(signal.SIGHUP)

    def _received(self, sig: int) -> None:
        if self.received is not None:
            return
        self.received = sig
        code = 128 + sig
        if sig == signal.SIGHUP:
            self._stop_writing()
        deadline = threading.Timer(CLOSE_WITHIN, self._end, (code,))
        deadline.daemon = True
        deadline.start()
        # Kept: the loop holds its tasks only weakly, and this one must run to its end.
        self._closing = asyncio.get_running_loop().create_task(self._close(code))

    def _stop_writing(self) -> None:
        """The terminal is gone: drop what would be written to it (a write to a hung-up terminal fails,
        and Textual's writer thread would stop with a queue that then fills)."""
        driver = self._driver()
        if driver is not None:
            setattr(driver, "write", _discard)  # noqa: B010 - an instance attribute over the method
            setattr(driver, "flush", _nothing)  # noqa: B010


def _discard(data: str) -> None:
    del data


def _nothing() -> None:
    return None
