"""A session's tasks as one chain: the running task, then the prompts queued behind it.

The chain stays registered from its first task's start until its queue is empty. A prompt that
arrives at any moment either joins the queue or finds the session idle: `enqueue` checks and appends
with no await in between, and the chain decides to stop or go on the same way.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harnez.errors import HarnezError, StoreError
from harnez.events import Event, Finished, LiveOutput, UserMessage, UserMessageMode
from harnez.server.runner import DelegationRunner, TaskOutcome, TaskRun, TaskWork

if TYPE_CHECKING:
    from harnez.agent.approvals import ApprovalDesk
    from harnez.settings import Settings
    from harnez.store import Store
    from harnez.store.sessions import SessionRecord


class ChainHost(Protocol):
    """What the chains ask of their server: the work to run, whether it closes, a task's settings,
    where a task's delegations run."""

    @property
    def work(self) -> TaskWork | None: ...

    @property
    def closed(self) -> bool: ...

    def task_settings(self, workspace: str | Path) -> Settings | None: ...

    @property
    def delegations(self) -> DelegationRunner | None: ...

    def publish_live(self, output: LiveOutput) -> None: ...


log = logging.getLogger(__name__)


def _seen(task: asyncio.Task[TaskOutcome]) -> None:
    """A chain that ended in a storage failure reports it through its subscribers and `wait`; keep
    asyncio from also printing it as "never retrieved" when nobody waits (the TUI)."""
    if not task.cancelled():
        task.exception()


@dataclass(slots=True)
class Chain:
    """A session's chain of tasks: the one running, then the prompts queued behind it.

    It stays in `TaskChains` from the first task's start until the queue is empty, so a
    prompt that arrives at any moment either joins the queue or finds the session idle — the
    check and the append happen with no await between them.
    """

    run: TaskRun
    mode: UserMessageMode = "prompt"
    task: asyncio.Task[TaskOutcome] | None = None
    work: asyncio.Task[TaskOutcome] | None = None
    queued: list[tuple[int, str, dict]] = field(default_factory=list)
    """(task id, prompt, options) of prompts waiting for this task to end."""
    cancelled: bool = False
    """Set by `cancel`: the current task stops (or never starts its work)."""
    begun: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the first task's `user-message` is stored."""
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the current task has ended and its end is stored (a new one per task)."""
    closing: bool = False
    """Set once the current task's work is over and its end is being recorded (its `finished`, the
    session's status): it no longer counts as running (`TaskChains.running`)."""


class TaskChains:
    """The task chains of one server, by session id."""

    def __init__(self, store: Store, approvals: ApprovalDesk, host: ChainHost) -> None:
        self._store = store
        self._approvals = approvals
        self._host = host
        self._chains: dict[str, Chain] = {}

    def get(self, session_id: str) -> Chain | None:
        """The session's chain, when a task runs."""
        return self._chains.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._chains

    def sessions(self) -> list[str]:
        """The sessions with a running task."""
        return list(self._chains)

    def running(self) -> list[str]:
        """The sessions whose task is still at work: those of `sessions` but the ones whose task has
        finished and is only recording its end (a client may already have read its `finished`)."""
        return [session_id for session_id, chain in self._chains.items() if not chain.closing]

    def enqueue(self, session_id: str, task_id: int, prompt: str, options: dict) -> bool:
        """Queue a prompt behind the running task; False (nothing done) when none runs."""
        chain = self._chains.get(session_id)
        if chain is None:
            return False
        chain.queued.append((task_id, prompt, options))
        return True

    async def start(
        self,
        record: SessionRecord,
        task_id: int,
        prompt: str,
        model: str | None,
        options: dict,
        mode: UserMessageMode = "prompt",
    ) -> None:
        """Begin a session's chain of tasks; returns once the first task's prompt is stored."""
        entry = Chain(self._run(record, task_id, prompt, model, options), mode)
        self._chains[record.id] = entry  # before any await: a concurrent prompt queues behind it
        entry.task = asyncio.create_task(self._drive(entry), name=f"harnez-task-{task_id}")
        entry.task.add_done_callback(_seen)
        begun = asyncio.ensure_future(entry.begun.wait())
        await asyncio.wait({begun, entry.task}, return_when=asyncio.FIRST_COMPLETED)
        begun.cancel()

    def _run(
        self, record: SessionRecord, task_id: int, prompt: str, model: str | None, options: dict
    ) -> TaskRun:
        run = TaskRun(record, task_id, prompt, model, self._store, self._approvals, options)
        run.delegations = self._host.delegations
        run.live = self._host.publish_live
        return run

    async def _drive(self, entry: Chain) -> TaskOutcome:
        """Run the chain: the task, then each queued prompt as its own task, until none is left."""
        session_id = entry.run.session.id
        try:
            while True:
                outcome = await self._run_one(entry)
                if not entry.queued or self._host.closed:
                    return outcome
                task_id, prompt, options = entry.queued.pop(0)
                record = await self._store.sessions.get(session_id)
                entry.run = self._run(record, task_id, prompt, record.model, options)
                entry.mode, entry.work, entry.cancelled, entry.ended = "prompt", None, False, asyncio.Event()
                entry.closing = False
        finally:
            self._chains.pop(session_id, None)
            entry.begun.set()
            entry.ended.set()

    async def _run_one(self, entry: Chain) -> TaskOutcome:
        run, ended = entry.run, entry.ended
        try:
            try:
                await self._store.tasks.begin(run.task_id, run.session.num)
                await self._store.events.append_now(
                    run.session.num,
                    run.session.id,
                    Event(
                        UserMessage(text=run.prompt, mode=entry.mode),
                        task=run.task_id,
                        search_text=run.prompt,
                    ),
                )
            finally:
                entry.begun.set()
            outcome = await self._perform(run, entry)
            failure = self._store.events.failure
            if failure is not None:  # saving stopped: the task fails, whatever its work returned
                outcome = TaskOutcome("failed", outcome.turns, failure.message)
            entry.closing = True  # before its `finished` is stored: no reader sees it end while it counts
            await self._finish(run, outcome)
            return outcome
        finally:
            run.answered.set()
            run.requested.set()
            ended.set()

    async def _perform(self, run: TaskRun, entry: Chain) -> TaskOutcome:
        work = self._host.work
        if work is None:
            return TaskOutcome(
                "failed", 0, "No model is configured: run `harnez` to set one up, or pass --model."
            )
        if entry.cancelled:
            return TaskOutcome("cancelled")
        try:
            run.settings = self._host.task_settings(run.session.workspace)
        except HarnezError as exc:
            return TaskOutcome("failed", 0, exc.message)
        entry.work = asyncio.create_task(work(run), name=f"harnez-work-{run.task_id}")
        try:
            return await asyncio.shield(entry.work)
        except asyncio.CancelledError:
            entry.work.cancel()
            return TaskOutcome("cancelled")
        except HarnezError as exc:
            return TaskOutcome("failed", 0, exc.message)
        except Exception as exc:
            log.exception("task %s crashed", run.task_id)
            return TaskOutcome("failed", 0, f"Internal error: {type(exc).__name__}: {exc}")

    async def _finish(self, run: TaskRun, outcome: TaskOutcome) -> None:
        try:
            await self._store.tasks.transition(
                run.task_id, outcome.stop, stop_reason=outcome.stop, error=outcome.error, turns=outcome.turns
            )
            await run.emit_now(Finished(stop=outcome.stop, turns=outcome.turns, error=outcome.error))
            await self._store.sessions.set_fields(run.session.num, status=outcome.stop)
        except StoreError as exc:
            # Once saving has failed for good, its reason is the one to report, not a later symptom.
            raise (self._store.events.failure or exc) from None

    async def wait(self, session_id: str) -> TaskOutcome | None:
        """Wait for the chain to end; the last task's outcome."""
        outcome = None
        while (entry := self._chains.get(session_id)) is not None and entry.task is not None:
            outcome = await asyncio.shield(entry.task)
            await asyncio.sleep(0)
        return outcome

    def stop_all(self) -> None:
        """Stop every running task's work now, without waiting (saving failed for good)."""
        for entry in self._chains.values():
            entry.queued, entry.cancelled = [], True
            if entry.work is not None:
                entry.work.cancel()

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running task and drop the queued ones; False when nothing runs."""
        entry = self._chains.get(session_id)
        if entry is None or entry.task is None:
            return False
        dropped, entry.queued = entry.queued, []
        entry.cancelled = True
        ended = entry.ended
        if entry.work is not None:
            entry.work.cancel()
        for task_id, _, _ in dropped:
            await self._store.tasks.transition(task_id, "cancelled", stop_reason="cancelled")
        await ended.wait()  # the current task's end, not the prompts sent after this cancel
        return True
