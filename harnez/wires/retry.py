"""Retries around any wire: backoff with jitter, retry-after honoured, a `Retry` event per attempt."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, Awaitable, Callable

from harnez.settings import RetrySettings, WireName
from harnez.wires.base import Failure, Retry, Wire, WireEvent, WireRequest


class RetryingWire:
    """Wraps a wire; retryable failures start a new attempt instead of reaching the caller.

    Each new attempt is announced by a `Retry` event: the caller discards what the failed attempt
    streamed. Failures that are not retryable, and the last one, pass through unchanged except
    that the last names how many attempts were made.
    """

    def __init__(
        self,
        inner: Wire,
        settings: RetrySettings | None = None,
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.inner = inner
        self.name: WireName = inner.name
        self.settings = settings or RetrySettings()
        self._sleep = sleep
        self._rng = rng or random.Random()

    def __repr__(self) -> str:
        return f"RetryingWire({self.inner!r}, max_attempts={self.settings.max_attempts})"

    async def aclose(self) -> None:
        await self.inner.aclose()

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """The wait before attempt `attempt + 1`: retry-after if given, else exponential with jitter."""
        if retry_after is not None:
            return min(retry_after, self.settings.max_delay)
        ceiling = self.settings.base_delay * (2 ** (attempt - 1))
        return min(self.settings.max_delay, ceiling * self._rng.uniform(0.5, 1.0))

    def stream(self, request: WireRequest) -> AsyncGenerator[WireEvent, None]:
        return self.attempts(lambda: self.inner.stream(request))

    async def attempts(
        self, start: Callable[[], AsyncGenerator[WireEvent, None]]
    ) -> AsyncGenerator[WireEvent, None]:
        """The events of `start()`, started again after each retryable failure (up to
        `max_attempts`), each new attempt announced by a `Retry`."""
        attempt = 1
        while True:
            failure: Failure | None = None
            # Closed as soon as the attempt ends: a failed attempt's response is released before the
            # wait and the next attempt, not whenever the abandoned generator is collected.
            async with contextlib.aclosing(start()) as events:
                async for event in events:
                    if isinstance(event, Failure) and event.retryable:
                        failure = event
                        break
                    yield event
            if failure is None:
                return
            if attempt >= self.settings.max_attempts:
                yield Failure(
                    f"{failure.message} (gave up after {attempt} attempt{'s' if attempt > 1 else ''})",
                    failure.status,
                    retryable=False,
                    retry_after=failure.retry_after,
                )
                return
            delay = self.backoff(attempt, failure.retry_after)
            attempt += 1
            yield Retry(attempt, delay, failure.message)
            await self._sleep(delay)
