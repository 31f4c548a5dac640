"""One model turn: stream the wire, coalesce deltas into events, fold the turn, and account for it."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

from harnez import events as ev
from harnez.agent.costs import ModelPrices
from harnez.agent.task import Emit
from harnez.settings import Rate
from harnez.store.ledger import ModelCall
from harnez.wires import (
    AssistantTurn,
    Failure,
    ReasoningDelta,
    ResolvedModel,
    Retry,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    WireEvent,
    WireRequest,
    WireWarning,
)

COALESCE_SECONDS = 0.04
"""Streamed text is emitted at most this often: the first fragment after a pause at once, the ones
that follow within this time joined (and at once at the end of a turn or on cancel)."""
ONCE_PER_TASK = frozenset({"opaque-items-dropped"})
CUT_ARGUMENTS = (
    "your answer reached the output limit inside them: send less in one call (a long file in parts)"
)

StreamFn = Callable[[WireRequest], AsyncGenerator[WireEvent, None]]
"""The injected model: one request in, its wire events out (e.g. `RetryingWire.stream`)."""


class DeltaBuffer:
    """Emits one kind of streamed text at most every COALESCE_SECONDS.

    The first fragment of a turn (or after a pause as long as the interval) is emitted at once, so
    the first words reach the screen without waiting; fragments arriving within the interval after
    an emit are joined and emitted when it ends.
    """

    def __init__(
        self,
        kind: type[ev.TextDelta] | type[ev.ReasoningDelta],
        emit: Emit,
        interval: float = COALESCE_SECONDS,
    ) -> None:
        self.kind, self._emit, self._interval = kind, emit, interval
        self._parts: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last_emit = -math.inf

    def add(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        if self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._last_emit + self._interval - loop.time()
        if wait <= 0:
            self.flush()
        else:
            self._timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Emit what is buffered now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._parts:
            text, self._parts = "".join(self._parts), []
            self._last_emit = asyncio.get_running_loop().time()
            self._emit(self.kind(text=text))

    def discard(self) -> None:
        """Forget what is buffered (a retry invalidated it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._parts = []


@dataclass(slots=True)
class TaskAccounting:
    """What a task has said once already (the unpriced warning, once-per-task wire warnings) and the
    prices its calls cost (`rates` from its settings, else the rate card)."""

    warned: set[str] = field(default_factory=set)
    context_tokens: int | None = None
    """What the last call left in the context (its last request's prompt and answer), as reported."""
    rates: dict[str, Rate] = field(default_factory=dict)
    _prices: dict[str, ModelPrices] = field(default_factory=dict)

    def prices_of(self, model: ResolvedModel) -> ModelPrices:
        """The prices of a model this task calls (looked up once per task)."""
        key = f"{model.provider}/{model.model}"
        if key not in self._prices:
            self._prices[key] = ModelPrices(model, self.rates)
        return self._prices[key]


@dataclass(slots=True)
class ModelTurn:
    """Streams one model call; `turn` holds what it produced so far, even after a cancel."""

    number: int
    model: ResolvedModel
    emit: Emit
    accounting: TaskAccounting
    turn: AssistantTurn = field(default_factory=AssistantTurn)
    started: float = field(default_factory=time.monotonic)
    first_token: float | None = None
    _names: dict[str, str] = field(default_factory=dict)

    async def stream(self, stream: StreamFn, request: WireRequest) -> AssistantTurn:
        """Run the call to its end; on cancel, flush what streamed and re-raise."""
        text, reasoning = DeltaBuffer(ev.TextDelta, self.emit), DeltaBuffer(ev.ReasoningDelta, self.emit)
        self.emit(ev.TurnStarted(turn=self.number))
        try:
            async with aclosing(stream(request)) as events:
                async for event in events:
                    self._on_event(event, text, reasoning)
        finally:
            reasoning.flush()
            text.flush()
        self._tell_output_limit()
        await self.prices.look_up()  # after the answer streamed: the card's first load never delays it
        return self.turn

    def _tell_output_limit(self) -> None:
        """A call that stopped at the output limit: say that its answer is cut short, and tell the
        model, of each call whose arguments the limit cut, why they are broken."""
        turn = self.turn
        if turn.stop is None or turn.stop.reason != "max_tokens" or turn.failure is not None:
            return
        cut = [call.name or call.id for call in turn.tool_calls if call.error]
        turn.tool_calls = [
            replace(call, error=f"{call.error}; {CUT_ARGUMENTS}") if call.error else call
            for call in turn.tool_calls
        ]
        message = (
            f"The model stopped at its output limit ({turn.stop.raw or 'max_tokens'}): its answer is cut "
            "short. Ask it to go on, or raise the model's max_output in settings.json."
        )
        if cut:
            message += f" The arguments of {', '.join(cut)} were cut, so it did not run."
        self.emit(ev.WarningEvent(code="output-limit", message=message))

    @property
    def prices(self) -> ModelPrices:
        return self.accounting.prices_of(self.model)

    def _on_event(self, event: WireEvent, text: DeltaBuffer, reasoning: DeltaBuffer) -> None:
        self.turn.apply(event)
        if isinstance(event, (TextDelta, ReasoningDelta, ToolCallStart)) and self.first_token is None:
            self.first_token = time.monotonic()
        if isinstance(event, TextDelta):
            reasoning.flush()
            text.add(event.text)
        elif isinstance(event, ReasoningDelta):
            text.flush()
            reasoning.add(event.text)
        elif isinstance(event, ToolCallStart):
            text.flush()
            reasoning.flush()
            self._names[event.id] = event.name
        elif isinstance(event, ToolCallDelta):
            self.emit(
                ev.ToolArgumentsDelta(call_id=event.id, name=self._names.get(event.id), delta=event.arguments)
            )
        elif isinstance(event, Retry):
            text.discard()
            reasoning.discard()
            self.emit(
                ev.TurnRetried(
                    turn=self.number, attempt=event.attempt, delay=event.delay, reason=event.reason
                )
            )
        elif isinstance(event, WireWarning):
            self._warn(event)

    def _warn(self, event: WireWarning) -> None:
        code = event.code
        if code in ONCE_PER_TASK:
            if code in self.accounting.warned:
                return
            self.accounting.warned.add(code)
        self.emit(ev.WarningEvent(code=code, message=event.message, raw=event.raw))

    def finish(self, outcome: str) -> object:
        """Emit usage, cost and turn-completed for a call that ended (completed, failed or cancelled);
        what the emit of turn-completed returned (the event log's commit future)."""
        self.account()
        turn = self.turn
        stop = turn.stop.reason if turn.stop else ("error" if outcome == "failed" else outcome)
        return self.emit(ev.TurnCompleted(turn=self.number, stop_reason=stop), search_text=turn.text or None)

    def account(self) -> None:
        """Emit the usage and cost of the call (the task's `rates` before its first), and the unpriced
        warning once per task."""
        turn = self.turn
        if turn.usage is not None:
            usage = turn.usage
            self.emit(
                ev.Usage(
                    input=usage.input,
                    output=usage.output,
                    cache_read=usage.cache_read,
                    cache_write=usage.cache_write,
                    reasoning=usage.reasoning,
                    model=turn.model or self.model.model,
                    context=usage.context,
                )
            )
            if usage.input is not None:
                self.accounting.context_tokens = usage.context_tokens
        prices = self.prices
        if not prices.told:
            prices.told = True
            self.emit(prices.rates_event())
        self.emit(ev.Cost(usd=self.cost))
        if prices.prices is None and "unpriced-model" not in self.accounting.warned:
            self.accounting.warned.add("unpriced-model")
            self.emit(ev.WarningEvent(code="unpriced-model", message=prices.unpriced_reason))

    @property
    def cost(self) -> float | None:
        return self.prices.cost(self.turn.usage)

    def ledger_row(self, session_num: int, task: int | None, outcome: str) -> ModelCall:
        """The ModelCall row of this call."""
        usage, now = self.turn.usage, time.monotonic()
        failure: Failure | None = self.turn.failure
        return ModelCall(
            session_num=session_num,
            task=task,
            outcome=outcome,
            model_requested=f"{self.model.provider}/{self.model.model}",
            provider=self.model.provider,
            wire=self.model.endpoint.wire,
            model_served=self.turn.model,
            input_tokens=usage.input if usage else None,
            output_tokens=usage.output if usage else None,
            cache_read_tokens=usage.cache_read if usage else None,
            cache_write_tokens=usage.cache_write if usage else None,
            reasoning_tokens=usage.reasoning if usage else None,
            cost_usd=self.cost,
            latency_ms=round((now - self.started) * 1000, 1),
            first_token_ms=round((self.first_token - self.started) * 1000, 1) if self.first_token else None,
            attempts=1 + len(self.turn.retries),
            error=failure.message if failure else None,
        )
