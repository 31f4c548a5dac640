"""Delegations: a sub-agent's task, run as a child session of the task whose model asked for it.

A parent task's `delegate` call (harnez/agents/delegate.py) arrives here through `TaskRun.delegate`.
The child is a session of its own, with its own chain (so it never blocks the parent's, and the
parent's one-task-per-session rule is untouched), linked to the parent session, task and call
(`harnez/store/delegations.py`). Its events stay in its own log; the parent's log gets
`delegate-started`, a copy of every approval the child asks (the child's calls wait under the
parent's session, their ids prefixed with the delegate call's, so the same person or policy answers
them where they look), `delegated` (the result the parent's model receives) and `delegate-finished`
(how it ended, its usage and cost: the parent's totals include them). Cancelling the parent cancels
the child; a process killed mid-delegation leaves both tasks for the next open to mark interrupted,
and the delegation's end is recorded then (`recover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Protocol

from harnez.agents import Delegation, DelegationResult
from harnez.events import (
    ApprovalRequired,
    ApprovalResolved,
    Delegated,
    DelegateFinished,
    DelegateStarted,
    Event,
    Finished,
    StoredEvent,
    TextDelta,
    TurnRetried,
    TurnStarted,
)
from harnez.settings import parse_model_ref
from harnez.store.delegations import ChildUsage
from harnez.store.sessions import SessionRecord, new_session_id
from harnez.text import sentence
from harnez.titles.keywords import clean_title
from harnez.tools import ToolCancelled

if TYPE_CHECKING:
    from harnez.agent.approvals import ApprovalDesk
    from harnez.server.chains import TaskChains
    from harnez.server.runner import TaskRun
    from harnez.server.totals import SessionTotals
    from harnez.store import Store

ENDINGS = {
    "cancelled": "was cancelled before it finished",
    "failed": "failed",
    "incomplete": "stopped before it finished",
    "interrupted": "was interrupted",
}
INTERRUPTED = "The process running this delegation stopped before it finished."


class DelegationHost(Protocol):
    """What delegations ask of their server: the store, the chains, the approval desk, the events."""

    @property
    def store(self) -> Store: ...

    @property
    def chains(self) -> TaskChains: ...

    @property
    def approvals(self) -> ApprovalDesk: ...

    def subscribe(self, session_id: str, after: int = 0) -> AsyncGenerator[StoredEvent, None]: ...

    async def cancel(self, session_id: str) -> bool: ...

    async def session_totals(self, session_id: str, up_to: int | None = None) -> SessionTotals: ...


def result_text(agent: str, end: Finished, answer: str) -> tuple[str, bool]:
    """What the parent's model receives, and whether it is an error: the answer of a completed child,
    else how it ended, with what it had answered."""
    if end.stop == "completed":
        return answer or f"The {agent} agent finished without an answer.", False
    text = f"The {agent} agent {ENDINGS.get(end.stop, end.stop)}" + (
        f": {sentence(end.error)}" if end.error else "."
    )
    return text + (f"\n\nIts last answer:\n{answer}" if answer else ""), True


class ChildProgress:
    """What the parent takes from its child's events: approvals to copy, the answer, the end."""

    def __init__(self, parent: TaskRun, delegation: Delegation, task: int) -> None:
        self.parent = parent
        self.delegation = delegation
        self.task = task
        self.prefix = f"{delegation.call_id}/"
        """Put before a child's call ids where its approvals are asked in the parent."""
        self.last_seq = 0
        self.answer: list[str] = []
        """The text of the child's latest turn (its answer once it finished)."""
        self.end: Finished | None = None

    async def follow(self, events: AsyncGenerator[StoredEvent, None]) -> None:
        """Read the child's events until its task finished (or its log closed)."""
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                self.last_seq = event.seq
                if event.task == self.task and self.see(event):
                    return

    def see(self, event: StoredEvent) -> bool:
        """Fold in one event of the child's task; True once it finished."""
        match event.body:
            case TurnStarted() | TurnRetried():
                self.answer.clear()
            case TextDelta(text=text):
                self.answer.append(text)
            case ApprovalRequired() as asked:
                why = f"Sub-agent {self.delegation.agent.name}: {asked.reason}"
                self.parent.emit(dataclasses.replace(asked, call_id=self.prefix + asked.call_id, reason=why))
            case ApprovalResolved() as answered:
                self.parent.emit(dataclasses.replace(answered, call_id=self.prefix + answered.call_id))
            case Finished() as end:
                self.end = end
                return True
        return False


class Delegations:
    """Runs delegations as child sessions, and records the end of those a dead process left."""

    def __init__(self, host: DelegationHost) -> None:
        self._host = host

    async def run(self, parent: TaskRun, delegation: Delegation) -> DelegationResult:
        """Run the child's task to its end; its result. A cancel of the parent cancels the child and
        ends the call with what the child had answered (`ToolCancelled`)."""
        child, task = await self._open(parent, delegation)
        parent.emit(
            DelegateStarted(
                call_id=delegation.call_id,
                agent=delegation.agent.name,
                child=child.id,
                model=delegation.model,
                tools=list(delegation.tools),
            )
        )
        progress = ChildProgress(parent, delegation, task)
        self._host.approvals.forward(child.id, parent.session.id, progress.prefix)
        try:
            await self._host.chains.start(child, task, delegation.task, child.model, delegation.options)
            await progress.follow(self._host.subscribe(child.id))
        except asyncio.CancelledError:
            result = await asyncio.shield(self._cancel(parent, child, progress))
            raise ToolCancelled(result.tool_result(cancelled=True)) from None
        finally:
            self._host.approvals.stop_forwarding(child.id)
        return await self._end(parent, child, progress)

    async def _open(self, parent: TaskRun, delegation: Delegation) -> tuple[SessionRecord, int]:
        """The child session (linked to the parent, its task and call) and its task."""
        store, agent = self._host.store, delegation.agent
        child = await store.delegations.open_child(
            parent.session,
            parent.task_id,
            delegation.call_id,
            agent.name,
            list(delegation.tools),
            child_id=new_session_id(),
            model=delegation.model,
            title=clean_title(f"{agent.name}: {delegation.task}"),
        )
        if delegation.model:
            ref = parse_model_ref(delegation.model)
            await store.ledger.record_model_selection(child.num, ref.name, ref.thinking)
        task = await store.tasks.create(child.num, delegation.task, delegation.model)
        return child, task.id

    async def _cancel(
        self, parent: TaskRun, child: SessionRecord, progress: ChildProgress
    ) -> DelegationResult:
        """The parent was cancelled: cancel the child, read its end, record the delegation's."""
        await self._host.cancel(child.id)
        if progress.end is None:
            await progress.follow(self._host.subscribe(child.id, after=progress.last_seq))
        return await self._end(parent, child, progress)

    async def _end(self, parent: TaskRun, child: SessionRecord, progress: ChildProgress) -> DelegationResult:
        """Record how the delegation ended in the parent (`delegated`, `delegate-finished`) and its link."""
        agent = progress.delegation.agent.name
        end = progress.end or Finished(stop="failed", error="Its session was deleted before it finished.")
        text, is_error = result_text(agent, end, "".join(progress.answer).strip())
        call_id = progress.delegation.call_id
        parent.emit(Delegated(call_id=call_id, agent=agent, child=child.id, text=text, is_error=is_error))
        usage = await self._usage(child.id)
        finished = DelegateFinished(
            call_id=call_id, agent=agent, child=child.id, stop=end.stop, turns=end.turns, error=end.error
        )
        stored = await parent.emit_now(dataclasses.replace(finished, **dataclasses.asdict(usage)))
        await self._host.store.delegations.finish(child.num, end.stop, stored.seq, usage)
        return DelegationResult(agent, child.id, text, end.stop, is_error)

    async def _usage(self, child: str) -> ChildUsage:
        """The child session's tokens and cost, as its parent's totals take them in."""
        totals = await self._host.session_totals(child)
        return ChildUsage(
            totals.input, totals.output, totals.usd, totals.calls, totals.reported, totals.unpriced
        )

    async def recover(self, task: int, parent: SessionRecord) -> None:
        """A dead process left a parent task running: record the end of its delegations (before the
        task's own `finished`), with what their children had spent."""
        store = self._host.store
        for link in await store.delegations.unfinished(task):
            usage = await self._usage(link.child)
            finished = DelegateFinished(
                call_id=link.call_id,
                agent=link.agent,
                child=link.child,
                stop="interrupted",
                error=INTERRUPTED,
                **dataclasses.asdict(usage),
            )
            stored = await store.events.append_now(parent.num, parent.id, Event(finished, task=task))
            await store.delegations.finish(link.child_num, "interrupted", stored.seq, usage)
