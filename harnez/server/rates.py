"""How many tasks each principal may create per minute (UHP Security §5: task creation is rate-limited
per principal, and the limit is told through `rate_limit_error`, not by failing opaquely).

A sliding window of the last 60 seconds: a principal that created `limit` tasks in it waits until
the oldest of them leaves it. A place is taken before the task starts and given back when it does
not start (a refusal, a failure), so a burst of concurrent requests cannot all pass one check, and
a request that started nothing costs nothing. A repeated Idempotency-Key never asks (it starts
nothing either).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

TASKS_PER_MINUTE = 600
"""The default limit per principal. Generous on purpose: it stops a client stuck in a loop, never
real work. The heaviest bursts Harnez is checked with — the 50 concurrent streams of its tests and
benchmark (two rounds and warm-ups: about 120 tasks in some seconds), the conformance suite (about
a dozen tasks) — stay far below it, and so does a person or a CI job. `--max-tasks` bounds what
runs at once; this bounds how fast new work may arrive."""
WINDOW_SECONDS = 60.0


class CreationRate:
    """Task creations per principal within the last minute; `limit` None or 0 counts nothing."""

    def __init__(self, limit: int | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit or None
        self._clock = clock
        self._stamps: dict[str, deque[float]] = {}

    def take(self, principal: str) -> float | None:
        """Take a place for one task of `principal`: its stamp (for `give_back`), or None when there
        is no limit. Raises `RateExceeded` when the minute's places are all taken."""
        if self.limit is None:
            return None
        now = self._clock()
        stamps = self._stamps.setdefault(principal, deque())
        while stamps and stamps[0] <= now - WINDOW_SECONDS:
            stamps.popleft()
        if len(stamps) >= self.limit:
            raise RateExceeded(self.limit, max(1, math.ceil(stamps[0] + WINDOW_SECONDS - now)))
        stamps.append(now)
        return now

    def give_back(self, principal: str, stamp: float | None) -> None:
        """The task the place was taken for did not start: the place is free again."""
        stamps = self._stamps.get(principal)
        if stamp is not None and stamps is not None and stamp in stamps:
            stamps.remove(stamp)


class RateExceeded(Exception):
    """A principal created `limit` tasks within the last minute; one more may start in `retry_after` s."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(f"{limit} tasks per minute")
        self.limit, self.retry_after = limit, retry_after
