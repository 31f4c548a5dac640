"""The life of one task: its record, its events, its steering inbox, and what its work is handed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harnez.errors import HarnezError
from harnez.events import Event, EventBody, LiveOutput, StoredEvent, TurnCompleted, TurnStarted
from harnez.outcome import TaskOutcome

if TYPE_CHECKING:
    from harnez.agent.approvals import ApprovalDesk
    from harnez.agents import Delegation, DelegationResult
    from harnez.settings import Settings
    from harnez.store import Store
    from harnez.store.sessions import SessionRecord


@dataclass(slots=True)
class TaskRun:
    """What a running task's work is handed: where it runs, how it speaks, what it is told.

    It holds what the work needs and nothing more — the store, the approval desk, the settings of
    the session's workspace — never the server (the agent sees it through `harnez.agent.task`).
    """

    session: SessionRecord
    task_id: int
    prompt: str
    model: str | None
    store: Store
    approvals: ApprovalDesk
    options: dict[str, Any] = field(default_factory=dict)
    steering: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    settings: Settings | None = None
    """The settings of the session's own workspace (global file + its project file), set when the
    task starts; None leaves the work's own settings in force."""
    delegations: DelegationRunner | None = None
    """Where a delegate call's child session runs (the server's; None: this task cannot delegate)."""
    live: Callable[[LiveOutput], None] | None = None
    """Where what a running command prints goes, to be shown live (the server's bus; never stored)."""
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the task's first answer is complete (its first `turn-completed` committed) or the
    task ended: what naming waits for, so it never competes with the words the person waits for."""
    requested: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the task's first model request is on its way (its first `turn-started` appended; the
    request is built and sent from there without waiting on anything else) or the task ended: what a
    front end's work waits for, so that it does not come between the task's reads and its request."""

    @property
    def workspace(self) -> Path:
        """The session's workspace (fixed at creation)."""
        return Path(self.session.workspace)

    def emit(self, body: EventBody, *, search_text: str | None = None) -> asyncio.Future[StoredEvent]:
        """Append an event of this task; returns the commit future (no need to await it)."""
        event = Event(body, task=self.task_id, search_text=search_text)
        committed = self.store.events.append(self.session.num, self.session.id, event)
        if isinstance(body, TurnStarted):
            self.requested.set()
        elif isinstance(body, TurnCompleted) and not self.answered.is_set():
            committed.add_done_callback(lambda _: self.answered.set())
        return committed

    async def emit_now(self, body: EventBody, *, search_text: str | None = None) -> StoredEvent:
        """Append an event of this task and wait until it is committed."""
        return await self.emit(body, search_text=search_text)

    async def delegate(self, delegation: Delegation, /) -> DelegationResult:
        """Run a sub-agent's task as a child session of this task (harnez/server/delegations.py)."""
        if self.delegations is None:
            raise HarnezError("This task cannot delegate: its server runs no child sessions.")
        return await self.delegations.run(self, delegation)

    def live_output(self, call_id: str, text: str) -> None:
        """What the command of tool call `call_id` printed just now, for front ends showing it live."""
        if self.live is not None and text:
            self.live(LiveOutput(self.session.id, call_id, text))

    def take_steering(self) -> list[str]:
        """Steering messages received since the last call (delivered at the next model turn)."""
        messages = []
        while not self.steering.empty():
            messages.append(self.steering.get_nowait())
        return messages


class DelegationRunner(Protocol):
    """Runs a task's delegation as a child session (the server's `Delegations`)."""

    async def run(self, parent: TaskRun, delegation: Delegation) -> DelegationResult: ...


class TaskWork(Protocol):
    """The work of a task (the agent loop). Cancellation arrives as asyncio.CancelledError.

    A work that holds resources across tasks (the agent's HTTP clients) may also offer an async
    `aclose()`: the server awaits it when it closes, after its tasks have stopped.
    """

    def __call__(self, run: TaskRun, /) -> Coroutine[Any, Any, TaskOutcome]: ...
