"""The agent loop: model turn, tool calls, results, repeat, until the model stops or a budget ends it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harnez import events as ev
from harnez.agent.calls import ToolCalls
from harnez.agent.context import History
from harnez.agent.task import Emit
from harnez.agent.turns import ModelTurn, StreamFn, TaskAccounting
from harnez.agent.window import fit_tool_calls
from harnez.errors import HookError
from harnez.outcome import TaskOutcome
from harnez.wires import AssistantMessage, AssistantTurn, ResolvedModel, ToolSpec, UserMessage, WireRequest

if TYPE_CHECKING:
    from harnez.agent.compaction import Compactor
    from harnez.agent.ending import TaskEnding

DEFAULT_MAX_STEPS = 100
HOOK_FAILED = "not run: a hook failed and ended the task before this tool call ran"


@dataclass(frozen=True, slots=True)
class Budget:
    """How far a task may go: model turns, and seconds of wall time (None: no limit)."""

    max_steps: int = DEFAULT_MAX_STEPS
    timeout: float | None = None


LoopOutcome = TaskOutcome
"""How the loop ended: the same type the server records (harnez.outcome)."""


@dataclass(slots=True)
class AgentLoop:
    """One task's loop. Every event leaves through `emit`; the model is the injected `stream`."""

    model: ResolvedModel
    system: str
    tools: tuple[ToolSpec, ...]
    stream: StreamFn
    emit: Emit
    history: History
    calls: ToolCalls
    budget: Budget = field(default_factory=Budget)
    steering: Callable[[], list[str]] = list
    """Messages sent into the running task; delivered as user messages at the next model turn."""
    expand: Callable[[str], Awaitable[str]] | None = None
    """What the model is given for a steering message (its `@path` files attached); the event keeps
    the text as typed."""
    compactor: Compactor | None = None
    accounting: TaskAccounting = field(default_factory=TaskAccounting)
    ending: TaskEnding | None = None
    """What a stop must pass: the structured answer, the stop hooks (harnez/agent/ending.py)."""
    cache_key: str | None = None
    """The conversation's key for the provider's prompt cache (`WireRequest.cache_key`)."""
    turns: int = 0
    _inbox: list[str] = field(default_factory=list)

    async def run(self) -> LoopOutcome:
        """Run to the end; a cancel or the time budget keeps what was produced."""
        deadline = asyncio.timeout(self.budget.timeout)
        try:
            async with deadline:
                return await self._steps()
        except TimeoutError:
            if not deadline.expired():
                raise
            return LoopOutcome(
                "incomplete",
                self.turns,
                f"Stopped at the time budget of {self.budget.timeout:g} s; raise `timeout` "
                "or continue the session with a new prompt.",
            )
        except asyncio.CancelledError:
            return LoopOutcome("cancelled", self.turns)

    async def _steps(self) -> LoopOutcome:
        try:
            while True:
                if self.turns >= self.budget.max_steps:
                    return LoopOutcome(
                        "incomplete",
                        self.turns,
                        (
                            f"Stopped after {self.turns} model turns (max_steps); continue the session with "
                            "a new prompt, or raise max_steps."
                        ),
                    )
                await self._deliver_steering()
                if self.compactor is not None:
                    await self.compactor.fit(self.history, self.system)
                    too_big = self.compactor.overflow(self.history, self.system)
                    if too_big is not None:
                        return LoopOutcome("failed", self.turns, too_big)
                turn = await self._model_turn()
                if turn.failure is not None:
                    return LoopOutcome("failed", self.turns, turn.failure.message)
                if turn.tool_calls:
                    await self.calls.run(turn.tool_calls)
                    if self.ending is None or not self.ending.take_answers():
                        continue
                outcome = await self._end(turn)
                if outcome is not None:
                    return outcome
        except asyncio.CancelledError:
            await self.history.answer_unanswered()
            raise
        except HookError as exc:  # a hook crashed or timed out: the task ends, its calls answered
            await self.history.answer_unanswered(HOOK_FAILED)
            return LoopOutcome("failed", self.turns, exc.message)

    async def _end(self, turn: AssistantTurn) -> LoopOutcome | None:
        """How the task ends after a turn that left nothing to run; None when it goes on (steering came,
        the model is told to answer, or a stop hook sent it back)."""
        self._inbox.extend(self.steering())
        if self._inbox:
            return None
        if self.ending is None:
            return LoopOutcome("completed", self.turns)
        return await self.ending.settle(self.history, self.turns, turn.text)

    async def _deliver_steering(self) -> None:
        waiting, self._inbox = self._inbox + self.steering(), []
        for text in waiting:
            await self.history.add(UserMessage(await self.expand(text) if self.expand else text))
            self.emit(ev.SteeringDelivered(text=text))

    async def _model_turn(self) -> AssistantTurn:
        self.turns += 1
        current = ModelTurn(self.turns, self.model, self.emit, self.accounting)
        request = WireRequest(
            self.model.model,
            self.history.conversation(self.system),
            self.tools,
            thinking=self.model.thinking,
            spec=self.model.spec,
            force_tool=None if self.ending is None else self.ending.force_tool,
            cache_key=self.cache_key,
        )
        try:
            turn = await current.stream(self.stream, request)
        except asyncio.CancelledError:
            await self._keep_partial(current, "cancelled")
            raise
        if turn.failure is not None:
            await self._keep_partial(current, "failed")
            return turn
        ended = current.finish("completed")
        if isinstance(ended, asyncio.Future):
            # The turn's events are committed before its ledger row and its message's record: those
            # transactions took the database before the answer's first words when a model sent its
            # whole answer at once (the words waited 10-20 ms); a failed commit is reported by the log.
            await asyncio.wait([ended])
        await self.history.record_model_call(
            current.ledger_row(self.history.session_num, self.history.task, "completed")
        )
        message, cuts = fit_tool_calls(turn.to_message(), self.model.spec.context_window)
        for cut in cuts:
            self.emit(ev.WarningEvent(code="truncated-for-window", message=cut))
        await self.history.add(message)
        return turn

    async def _keep_partial(self, current: ModelTurn, outcome: str) -> None:
        """A call that did not complete: account for it and keep the text it produced."""
        current.finish(outcome)
        await self.history.record_model_call(
            current.ledger_row(self.history.session_num, self.history.task, outcome)
        )
        if current.turn.text:
            await self.history.add(AssistantMessage(current.turn.text))
