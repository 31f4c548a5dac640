"""A normalized session as Harnez events, tasks and ledger rows — the one place that builds events from it.

Each prompt starts a task, as in Harnez: `user-message`, then per assistant turn `turn-started`, the
reasoning and text as one `reasoning-delta` / `text-delta` each, `tool-requested` per call, `usage`
(and `cost` when the harness recorded one), `turn-completed`; then `tool-completed` per result,
`compacted` per compaction, `error` per failed call, and `finished` when the next prompt (or the end)
comes. The last task ends as the session ended: completed, failed (error), cancelled (aborted) or
interrupted (the records stop mid-turn).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from harnez import events as ev
from harnez.events import Event, EventBody
from harnez.importers.normalized import (
    PROMPTS,
    AssistantTurn,
    Compaction,
    Notice,
    Reasoning,
    Session,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
    time_key,
)
from harnez.outcome import Stop
from harnez.store.imports import ImportedTask

STOPS: dict[str, Stop] = {
    "completed": "completed",
    "error": "failed",
    "aborted": "cancelled",
    "open": "interrupted",
}
OPEN_ERROR = "The imported session stops mid-turn (it may still have been running when it was imported)."


@dataclass(slots=True)
class Replay:
    """The events, tasks and ledger rows of one session."""

    events: list[tuple[Event, float]] = field(default_factory=list)
    tasks: list[ImportedTask] = field(default_factory=list)
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_executions: list[dict[str, Any]] = field(default_factory=list)


def replay(session: Session) -> Replay:
    """Walk the session's entries once. The copy a resumed session starts with (`SessionInfo.copied`)
    is shown but not accounted: no `usage` or `cost` events, no ledger rows (those calls and tool runs
    were made in the session it resumed, and are accounted there)."""
    walk = _Walk(session)
    for index, entry in enumerate(session.entries):
        walk.copy = index < session.info.copied
        walk.entry(entry)
    walk.copy = False
    walk.end(STOPS[session.summary().tally.ending()])
    return walk.result


class _Walk:
    def __init__(self, session: Session) -> None:
        self.result = Replay()
        self.harness = session.info.harness
        self.now = time_key(session.info.span.first) or time.time()
        self.task: int | None = None
        self.turn = 0
        self.trouble: Stop | None = None
        """`failed` or `cancelled` when the current task's last step was an error or an interruption."""
        self.calls: dict[str, ToolCall] = {}
        self.copy = False
        """The entry walked is part of the copy a resumed session starts with: it is not accounted."""

    def emit(self, body: EventBody, search_text: str | None = None) -> None:
        self.result.events.append((Event(body, task=self.task, search_text=search_text), self.now))

    def at(self, stamp: Any) -> None:
        moment = time_key(stamp)
        if moment is not None and moment >= self.now:
            self.now = moment

    def entry(self, entry: Any) -> None:
        self.at(getattr(entry, "time", None))
        if isinstance(entry, UserMessage) and entry.kind in PROMPTS:
            self._prompt(entry)
        elif isinstance(entry, AssistantTurn):
            self._turn(entry)
        elif isinstance(entry, ToolResult):
            self._result(entry)
        elif isinstance(entry, Compaction):
            self.emit(ev.Compacted(before_tokens=entry.tokens_before, summarised=bool(entry.summary)))
        elif isinstance(entry, Notice) and entry.kind in ("error", "aborted"):
            if entry.kind == "error":
                self.emit(ev.Error(message=entry.text))
            self.trouble = "failed" if entry.kind == "error" else "cancelled"

    def _prompt(self, message: UserMessage) -> None:
        self.end(self.trouble or "completed")
        text = message.shown_text
        self.result.tasks.append(ImportedTask(text, "completed", None, None, self.now, self.now, 0))
        self.task, self.turn, self.trouble = len(self.result.tasks), 0, None
        self.emit(ev.UserMessage(text=text), search_text=text)

    def _turn(self, turn: AssistantTurn) -> None:
        if not turn.parts and turn.call is None:
            return
        self.turn += 1
        self.trouble = None
        self.emit(ev.TurnStarted(turn=self.turn))
        for part in turn.parts:
            if isinstance(part, Reasoning) and part.text:
                self.emit(ev.ReasoningDelta(text=part.text))
            elif isinstance(part, Text) and part.text:
                self.emit(ev.TextDelta(text=part.text))
            elif isinstance(part, ToolCall):
                self.calls[part.id] = part
                self.emit(ev.ToolRequested(call_id=part.id, name=part.name, arguments=arguments(part)))
        call = turn.call
        if call is not None:
            self._account(call)
        self.emit(
            ev.TurnCompleted(turn=self.turn, stop_reason=call.stop_reason if call else None),
            search_text=turn.text or None,
        )

    def _account(self, call: Any) -> None:
        usage = call.usage
        if self.task is not None:
            current = self.result.tasks[self.task - 1]
            current.turns += 1
            current.model = current.model or call.model
        if self.copy:
            return
        if usage is not None:
            self.emit(
                ev.Usage(
                    input=usage.input,
                    output=usage.output,
                    cache_read=usage.cache_read,
                    cache_write=usage.cache_write,
                    reasoning=usage.reasoning,
                    model=call.model,
                )
            )
            if usage.cost is not None:
                self.emit(ev.Cost(usd=usage.cost))
        self.result.model_calls.append(
            {
                "task": self.task,
                "provider": self.harness,
                "wire": None,
                "model_requested": call.model or "unknown",
                "model_served": call.model,
                "input_tokens": usage.input if usage else None,
                "output_tokens": usage.output if usage else None,
                "cache_read_tokens": usage.cache_read if usage else None,
                "cache_write_tokens": usage.cache_write if usage else None,
                "reasoning_tokens": usage.reasoning if usage else None,
                "cost_usd": usage.cost if usage else None,
                "outcome": "completed",
                "created_at": self.now,
            }
        )

    def _result(self, result: ToolResult) -> None:
        call = self.calls.pop(result.call_id, None)
        name = result.name or (call.name if call else "tool")
        self.emit(
            ev.ToolCompleted(
                call_id=result.call_id, name=name, content=result.content, is_error=result.is_error
            )
        )
        if self.copy:
            return
        self.result.tool_executions.append(
            {
                "task": self.task,
                "call_id": result.call_id,
                "tool": name,
                "arguments": json.dumps(arguments(call) if call else {}, ensure_ascii=False),
                "result": result.content,
                "is_error": int(result.is_error),
                "outcome": "error" if result.is_error else "completed",
                "created_at": self.now,
            }
        )

    def end(self, stop: Stop) -> None:
        """Finish the current task (if any) with a stop."""
        if self.task is None:
            return
        current = self.result.tasks[self.task - 1]
        current.state, current.finished_at = stop, self.now
        current.error = OPEN_ERROR if stop == "interrupted" else None
        self.emit(ev.Finished(stop=stop, turns=current.turns, error=current.error))


def arguments(call: ToolCall) -> dict[str, Any]:
    """A call's input as an object, as Harnez keeps arguments: freeform text goes under `input`."""
    if isinstance(call.arguments, dict):
        return call.arguments
    return {} if call.arguments is None else {"input": call.arguments}
