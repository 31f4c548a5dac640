"""Full garbage collections run when the person pauses, so that fewer land between a key and its frame.

A full collection of the cyclic garbage collector walks every object not frozen at start-up: 7–60
ms once a session or the picker has been shown, enough to make one key in ten miss the picker's
30 ms (docs/performance.md, "Full collections between keys"). Python runs one when its generation
counts say so, wherever the app is. `IdleCollector` runs one when nobody has typed, clicked or
scrolled for `IDLE_AFTER` seconds and enough has been collected young since the last, which resets
those counts: the next automatic one is pushed past the next burst of keys more often than not.
Not while a task runs (`busy`): its streamed text is being watched even when nobody types, and these
idle collections come more often than Python's own (which wait until a quarter of the old objects
are new), so during a long answer they were pauses of their own, 100 ms and more late in one.
Python's own thresholds stay: making full collections rarer was tried, and each then freed so much
garbage at once that it took up to 300 ms, a freeze a stream would show.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE_AFTER = 1.0
"""Seconds without input after which a full collection is unlikely to delay a key the person waits on."""

CHECK_EVERY = 2.0
"""Seconds between looks at whether a full collection is due."""

WORTH_COLLECTING = 5
"""Generation-1 collections since the last full one that make an idle full collection worth it (an
automatic one comes after 10, when Python's other condition holds)."""


class IdleCollector:
    """Full collections at idle moments; `input_seen` at every key, click or scroll."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, busy: Callable[[], bool] = lambda: False
    ) -> None:
        self._clock = clock
        self._busy = busy
        self._last_input = clock()

    def input_seen(self) -> None:
        self._last_input = self._clock()

    def collect_if_idle(self) -> bool:
        """Run a full collection if the person is idle, no task runs and one is worth it; whether it ran."""
        if self._clock() - self._last_input < IDLE_AFTER or self._busy():
            return False
        if gc.get_count()[2] < WORTH_COLLECTING or not gc.isenabled():
            return False
        gc.collect()
        return True
