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

During a task Python's own full collections still come, and each walked every object made since
start-up: during a 10,000-word answer 46 of them, growing from 20 to 190 ms as the answer's widgets
piled up, the lag's worst moments. So a full collection during a task freezes what survived it
(`after_collection`, a `gc.callbacks` entry): the next one walks only what is newer. What was frozen
and dies later in a cycle (a dropped block) stays until the first pause of `THAW_AFTER` seconds after
the task, when everything is unfrozen, collected in full once and frozen again, as at start-up.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE_AFTER = 1.0
"""Seconds without input after which a full collection is unlikely to delay a key the person waits on."""

THAW_AFTER = 5.0
"""Seconds without input before the collection after a task whose collections froze their survivors
(`after_collection`): it walks everything, ~140 ms after a short session and ~540 ms after a
10,000-word answer (load 2), so it waits for a longer pause than the usual one."""

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
        self._frozen_busy = False
        """Whether a full collection during a task froze its survivors (`after_collection`)."""

    def install(self) -> None:
        """Freeze what a full collection during a task leaves (`after_collection`) until `remove`."""
        if self.after_collection not in gc.callbacks:
            gc.callbacks.append(self.after_collection)

    def remove(self) -> None:
        if self.after_collection in gc.callbacks:
            gc.callbacks.remove(self.after_collection)

    def after_collection(self, phase: str, info: dict[str, int]) -> None:
        """After a full collection while a task runs: freeze the survivors (there is no garbage among
        them at that moment), so that the task's next full collections do not walk them again."""
        if phase == "stop" and info["generation"] == 2 and self._busy():
            gc.freeze()
            self._frozen_busy = True

    def input_seen(self) -> None:
        self._last_input = self._clock()

    def collect_if_idle(self) -> bool:
        """Run a full collection if the person is idle, no task runs and one is worth it; whether it ran."""
        idle = self._clock() - self._last_input
        if idle < IDLE_AFTER or self._busy() or not gc.isenabled():
            return False
        if self._frozen_busy:  # after a task's frozen collections: everything once, then frozen again
            if idle < THAW_AFTER:
                return False
            self._frozen_busy = False
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            return True
        if gc.get_count()[2] < WORTH_COLLECTING:
            return False
        gc.collect()
        return True
