"""How a task ended: the one type the agent returns and the server records (a leaf module, so
both layers share it without the agent importing the server)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Stop = Literal["completed", "cancelled", "failed", "incomplete", "interrupted"]
"""Every way a task ends; the task's final state and the `finished` event's `stop`."""
STOPS: tuple[str, ...] = get_args(Stop)


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """How a task ended: its stop, the model turns it took, and the reason when it failed."""

    stop: Stop
    turns: int = 0
    error: str | None = None

    def __post_init__(self) -> None:
        if self.stop not in STOPS:
            raise ValueError(f"Unknown stop {self.stop!r}; one of {', '.join(STOPS)}.")
