"""Stored Harnez events → UHP stream events and Response objects (pure; the one place that reads events).

A UHP response is one Harnez task. `TaskStream` reads that task's stored events in order and says,
for each, which UHP events it makes, while it assembles the `output` array; `response_object` dresses
the result as a Response. The stream, a blocking request and a later `GET` all feed the same events
through the same code, so they agree by construction — and `harnez events` tells the same story.

    Harnez event            UHP
    text-delta              message item (opened on the first delta) + output_text.delta
    reasoning-delta         reasoning item + reasoning_summary_text.delta
    tool-arguments-delta    function_call item + function_call_arguments.delta
    tool-requested          function_call_arguments.done + output_item.done
    tool-completed          function_call_output item (added, done)
    turn-retried            the turn's items end `incomplete` and empty (Harnez discards them)
    warning                 a `harnez_warning` item (added, done): code and message (not for the cost)
    usage                   summed into `usage`
    started                 `model` (the model that ran)
    finished                the status: completed, failed, incomplete, cancelled
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harnez import events as ev
from harnez.events import EventBody, StoredEvent

WRITING_TOOLS = frozenset({"write", "edit"})
COST_WARNINGS = frozenset({"unpriced-model"})
"""Warnings about the cost, which a Response does not carry: they make no item."""
_URL = re.compile(r"https?://\S+")
_PATH = re.compile(r"(?<![\w.])(?:/[\w.@+-]+){2,}/?")


@dataclass(frozen=True, slots=True)
class ResponseFacts:
    """What the Response says besides the events: ids, times, the request's model and budgets."""

    id: str
    created_at: float
    session: str
    harness: str
    model: str | None
    previous: str | None = None
    store: bool = True
    requested_model: str | None = None
    fallback_reason: str | None = None
    max_step: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _Open:
    index: int
    kind: str
    text: list[str] = field(default_factory=list)


class TaskStream:
    """One task's events in, UHP events out; `output`, `usage`, `model` and the end as they stand."""

    def __init__(self, task_id: int) -> None:
        self.task_id = task_id
        self.output: list[dict[str, Any]] = []
        self.usage: dict[str, int] | None = None
        self.model: str | None = None
        self.finished: ev.Finished | None = None
        self.written: list[str] = []
        """Paths the task wrote with the write and edit tools (relative or absolute, as the model gave them)."""
        self._text: _Open | None = None
        self._calls: dict[str, _Open] = {}
        self._requested: dict[str, ev.ToolRequested] = {}
        self._turn: list[int] = []
        self._call_failed = False

    def feed(self, event: StoredEvent) -> list[dict[str, Any]]:
        """The UHP events one stored event of this task makes (none for events of other tasks)."""
        if event.task != self.task_id:
            return []
        handler = _HANDLERS.get(type(event.body))
        return handler(self, event.seq, event.body) if handler else []

    def finish(self, annotations: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
        """Close what is open; `annotations` (artifact citations) go on the last message if it is open."""
        out: list[dict[str, Any]] = []
        if self._text is not None and self._text.kind == "message":
            item = self.output[self._text.index]
            part = item["content"][0]
            for number, annotation in enumerate(annotations):
                part["annotations"].append(annotation)
                out.append(
                    {
                        "type": "response.output_text.annotation.added",
                        "item_id": item["id"],
                        "output_index": self._text.index,
                        "content_index": 0,
                        "annotation_index": number,
                        "annotation": annotation,
                    }
                )
        out += self._close_text()
        for call in list(self._calls.values()):
            out += self._close_call(call, "incomplete")
        self._calls.clear()
        return out

    # lifecycle ---------------------------------------------------------------------------------

    def _on_started(self, seq: int, body: ev.Started) -> list[dict[str, Any]]:
        self.model = body.model or self.model
        return []

    def _on_turn_started(self, seq: int, body: ev.TurnStarted) -> list[dict[str, Any]]:
        self._turn = []
        return []

    def _on_turn_completed(self, seq: int, body: ev.TurnCompleted) -> list[dict[str, Any]]:
        self._call_failed = body.stop_reason == "error"
        return []

    def _on_turn_retried(self, seq: int, body: ev.TurnRetried) -> list[dict[str, Any]]:
        """Harnez discards a retried call's deltas: its items end `incomplete`, their content emptied."""
        for index in self._turn:
            _void(self.output[index])
        out = self._close_text(status="incomplete")
        for call in list(self._calls.values()):
            out += self._close_call(call, "incomplete")
        self._calls.clear()
        self._turn = []
        return out

    def _on_usage(self, seq: int, body: ev.Usage) -> list[dict[str, Any]]:
        usage = self.usage or {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        fields = {
            "input_tokens": body.input,
            "output_tokens": body.output,
            "cache_read_tokens": body.cache_read,
            "cache_write_tokens": body.cache_write,
        }
        for name, value in fields.items():
            if isinstance(value, int):
                usage[name] = usage.get(name, 0) + value
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        self.usage = usage
        return []

    def _on_error(self, seq: int, body: ev.Error) -> list[dict[str, Any]]:
        return [{"type": "error", "code": "harness_error", "message": scrub(body.message), "param": None}]

    def _on_warning(self, seq: int, body: ev.WarningEvent) -> list[dict[str, Any]]:
        """A warning is an item of its own (vendor type `harnez_warning`): a client that renders only
        messages skips it, and it is never part of a turn a retry voids."""
        if body.code in COST_WARNINGS:
            return []
        item = {
            "id": f"warn_{self.task_id}_{seq}",
            "type": "harnez_warning",
            "code": body.code,
            "message": scrub(body.message),
            "status": "completed",
        }
        self.output.append(item)
        index = len(self.output) - 1
        added = {"type": "response.output_item.added", "output_index": index, "item": copy.deepcopy(item)}
        return [added, self._done(index)]

    def _on_finished(self, seq: int, body: ev.Finished) -> list[dict[str, Any]]:
        self.finished = body
        return []

    # text --------------------------------------------------------------------------------------

    def _on_text_delta(self, seq: int, body: ev.TextDelta) -> list[dict[str, Any]]:
        return self._delta("message", seq, body.text)

    def _on_reasoning_delta(self, seq: int, body: ev.ReasoningDelta) -> list[dict[str, Any]]:
        return self._delta("reasoning", seq, body.text)

    def _delta(self, kind: str, seq: int, text: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._text is None or self._text.kind != kind:
            out += self._close_text()
            out += self._open_text(kind, seq)
        opened = self._text
        assert opened is not None
        opened.text.append(text)
        item_id = self.output[opened.index]["id"]
        if kind == "message":
            self.output[opened.index]["content"][0]["text"] += text
            out.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": opened.index,
                    "content_index": 0,
                    "delta": text,
                }
            )
        else:
            self.output[opened.index]["summary"][0]["text"] += text
            out.append(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": item_id,
                    "output_index": opened.index,
                    "summary_index": 0,
                    "delta": text,
                }
            )
        return out

    def _open_text(self, kind: str, seq: int) -> list[dict[str, Any]]:
        if kind == "message":
            item: dict[str, Any] = {
                "id": f"msg_{self.task_id}_{seq}",
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            part = {"type": "output_text", "text": "", "annotations": []}
            opened = self._add(item)
            item["content"].append(copy.deepcopy(part))
            return [
                opened,
                {
                    "type": "response.content_part.added",
                    "item_id": item["id"],
                    "output_index": len(self.output) - 1,
                    "content_index": 0,
                    "part": part,
                },
            ]
        item = {"id": f"rs_{self.task_id}_{seq}", "type": "reasoning", "status": "in_progress", "summary": []}
        part = {"type": "summary_text", "text": ""}
        opened = self._add(item)
        item["summary"].append(copy.deepcopy(part))
        return [
            opened,
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": item["id"],
                "output_index": len(self.output) - 1,
                "summary_index": 0,
                "part": part,
            },
        ]

    def _close_text(self, status: str = "completed") -> list[dict[str, Any]]:
        opened, self._text = self._text, None
        if opened is None:
            return []
        item = self.output[opened.index]
        if item["status"] != "incomplete":
            item["status"] = status
        base = {"item_id": item["id"], "output_index": opened.index}
        if item["type"] == "message":
            part = item["content"][0]
            closing = [
                {"type": "response.output_text.done", **base, "content_index": 0, "text": part["text"]},
                {
                    "type": "response.content_part.done",
                    **base,
                    "content_index": 0,
                    "part": copy.deepcopy(part),
                },
            ]
        else:
            closing = [
                {
                    "type": "response.reasoning_summary_part.done",
                    **base,
                    "summary_index": 0,
                    "part": copy.deepcopy(item["summary"][0]),
                }
            ]
        return closing + [self._done(opened.index)]

    # tools -------------------------------------------------------------------------------------

    def _on_tool_arguments_delta(self, seq: int, body: ev.ToolArgumentsDelta) -> list[dict[str, Any]]:
        call_id = body.call_id
        out = self._close_text()
        if call_id not in self._calls:
            out.append(self._open_call(seq, call_id, body.name))
        call = self._calls[call_id]
        delta = body.delta
        call.text.append(delta)
        self.output[call.index]["arguments"] += delta
        out.append(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": self.output[call.index]["id"],
                "output_index": call.index,
                "delta": delta,
            }
        )
        return out

    def _on_tool_requested(self, seq: int, body: ev.ToolRequested) -> list[dict[str, Any]]:
        call_id = body.call_id
        self._requested[call_id] = body
        out = self._close_text()
        if call_id not in self._calls:
            out.append(self._open_call(seq, call_id, body.name))
        call = self._calls.pop(call_id)
        item = self.output[call.index]
        item["name"] = body.name or item["name"]
        if not call.text:
            item["arguments"] = json.dumps(body.arguments)
        out.append(
            {
                "type": "response.function_call_arguments.done",
                "item_id": item["id"],
                "output_index": call.index,
                "arguments": item["arguments"],
            }
        )
        return out + self._close_call(call, "completed")

    def _on_tool_completed(self, seq: int, body: ev.ToolCompleted) -> list[dict[str, Any]]:
        call_id = body.call_id
        requested = self._requested.get(call_id)
        if requested is not None and requested.name in WRITING_TOOLS and not body.is_error:
            path = requested.arguments.get("path")
            if isinstance(path, str) and path not in self.written:
                self.written.append(path)
        out = self._close_text()
        item = {
            "id": f"fco_{self.task_id}_{seq}",
            "type": "function_call_output",
            "call_id": call_id,
            "output": "",
            "status": "in_progress",
        }
        out.append(self._add(item))
        item["output"] = body.content
        item["status"] = "incomplete" if body.cancelled else "completed"
        return out + [self._done(len(self.output) - 1)]

    def _open_call(self, seq: int, call_id: str, name: Any) -> dict[str, Any]:
        item = {
            "id": f"fc_{self.task_id}_{seq}",
            "type": "function_call",
            "call_id": call_id,
            "name": str(name or ""),
            "arguments": "",
            "status": "in_progress",
        }
        added = self._add(item)
        self._calls[call_id] = _Open(len(self.output) - 1, "call")
        return added

    def _close_call(self, call: _Open, status: str) -> list[dict[str, Any]]:
        item = self.output[call.index]
        if item["status"] != "incomplete":
            item["status"] = status
        return [self._done(call.index)]

    # items -------------------------------------------------------------------------------------

    def _add(self, item: dict[str, Any]) -> dict[str, Any]:
        self.output.append(item)
        index = len(self.output) - 1
        self._turn.append(index)
        if item["type"] in ("message", "reasoning"):
            self._text = _Open(index, item["type"])
        return {"type": "response.output_item.added", "output_index": index, "item": copy.deepcopy(item)}

    def _done(self, index: int) -> dict[str, Any]:
        return {
            "type": "response.output_item.done",
            "output_index": index,
            "item": copy.deepcopy(self.output[index]),
        }

    # the end -----------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """The UHP status: in_progress until `finished`, then what the stop means."""
        if self.finished is None:
            return "in_progress"
        stop = self.finished.stop
        return {"completed": "completed", "cancelled": "cancelled", "incomplete": "incomplete"}.get(
            stop, "failed"
        )

    def error(self) -> dict[str, Any] | None:
        """The Response's `error`: non-null only when the task failed."""
        if self.status != "failed" or self.finished is None:
            return None
        if self.finished.stop == "interrupted":
            message = "The server stopped before this task finished; continue the session to try again."
        else:
            message = scrub(self.finished.error or "The task failed.")
        code = "provider_error" if self._call_failed else "harness_error"
        return {"type": "harness_error", "code": code, "message": message, "param": None, "detail": None}

    def incomplete_details(self, max_step: int | None) -> dict[str, Any] | None:
        if self.status != "incomplete" or self.finished is None:
            return None
        turns = self.finished.turns or 0
        reason = "max_step" if max_step and turns >= max_step else "timeout"
        return {"reason": reason, "message": scrub(self.finished.error or "")}


_HANDLERS: dict[type[EventBody], Callable[[TaskStream, int, Any], list[dict[str, Any]]]] = {
    ev.Started: TaskStream._on_started,
    ev.TurnStarted: TaskStream._on_turn_started,
    ev.TurnCompleted: TaskStream._on_turn_completed,
    ev.TurnRetried: TaskStream._on_turn_retried,
    ev.Usage: TaskStream._on_usage,
    ev.Error: TaskStream._on_error,
    ev.WarningEvent: TaskStream._on_warning,
    ev.Finished: TaskStream._on_finished,
    ev.TextDelta: TaskStream._on_text_delta,
    ev.ReasoningDelta: TaskStream._on_reasoning_delta,
    ev.ToolArgumentsDelta: TaskStream._on_tool_arguments_delta,
    ev.ToolRequested: TaskStream._on_tool_requested,
    ev.ToolCompleted: TaskStream._on_tool_completed,
}
"""What each kind of Harnez event of the task becomes in UHP; the others make no UHP event."""


def response_object(facts: ResponseFacts, stream: TaskStream, *, status: str | None = None) -> dict[str, Any]:
    """The Response for a task as it stands (`status` overrides, e.g. `in_progress` for `response.created`)."""
    metadata = {**facts.metadata, "session_id": facts.session, "harness_id": facts.harness}
    if facts.requested_model:
        metadata.update(
            requested_model=facts.requested_model,
            model_fallback=True,
            model_fallback_reason=scrub(facts.fallback_reason or "the requested model is not available"),
        )
    current = status or stream.status
    return {
        "id": facts.id,
        "object": "response",
        "created_at": int(facts.created_at),
        "status": current,
        "error": stream.error() if current == stream.status else None,
        "incomplete_details": stream.incomplete_details(facts.max_step) if current == stream.status else None,
        "previous_response_id": facts.previous,
        "model": stream.model or facts.model or "",
        "output": copy.deepcopy(stream.output) if status is None else [],
        "store": facts.store,
        "usage": copy.deepcopy(stream.usage),
        "metadata": metadata,
    }


def terminal_event(response: dict[str, Any]) -> dict[str, Any]:
    """The one event that ends a stream; a cancelled task ends with `response.failed`, status `cancelled`."""
    kind = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(
        response["status"], "response.failed"
    )
    return {"type": kind, "response": response}


def output_text(output: list[dict[str, Any]]) -> str:
    """The assistant text of an output array (completed message items only)."""
    return "".join(
        part.get("text", "")
        for item in output
        if item.get("type") == "message" and item.get("status") != "incomplete"
        for part in item.get("content", ())
    )


def input_text(items: list[Any]) -> str:
    """The text of request input items (as stored for `input_items`)."""
    texts = []
    for item in items:
        for part in item.get("content", ()) if isinstance(item, dict) else ():
            if isinstance(part, dict) and part.get("type") == "input_text":
                texts.append(str(part.get("text", "")))
    return "\n\n".join(texts)


def scrub(message: str) -> str:
    """A message safe to show a client: addresses and file paths replaced by what they are."""
    return _PATH.sub("<path>", _URL.sub("<address>", message))


def _void(item: dict[str, Any]) -> None:
    """A retried call's item: `incomplete`, with the discarded content gone."""
    item["status"] = "incomplete"
    if item["type"] == "message":
        for part in item["content"]:
            part["text"], part["annotations"] = "", []
    elif item["type"] == "reasoning":
        for part in item["summary"]:
            part["text"] = ""
    elif item["type"] == "function_call":
        item["arguments"] = ""
