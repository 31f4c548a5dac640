"""The `openai-responses` wire: OpenAI's Responses API, stateless, with encrypted reasoning."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harnez.settings import WireName
from harnez.wires.base import (
    Failure,
    ModelSpec,
    OpaqueItem,
    ReasoningDelta,
    Stop,
    StopReason,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageReport,
    WireEvent,
    WireRequest,
    WireWarning,
)
from harnez.wires.catalogue import clamp_thinking, openai_effort
from harnez.wires.conversation import AssistantMessage, Opaque, ToolResult, UserMessage
from harnez.wires.http import (
    ORIGIN,
    HttpWire,
    Translator,
    is_openai,
    openai_usage,
    parse_arguments,
    sent_back,
)

WIRE: WireName = "openai-responses"
INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}
RETRYABLE_CODES = frozenset(
    (
        "server_error",
        "rate_limit_exceeded",
        "server_is_overloaded",
        "slow_down",
        "too_many_requests",
        "service_unavailable_error",
        "internal_server_error",
    )
)
"""Error codes (or, nested, types) of trouble that passes: the call is tried again."""
QUIET_EVENTS = frozenset(
    (
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.annotation.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
    )
)


def responses_input(request: WireRequest, sends: Callable[[Opaque], bool]) -> list[dict[str, Any]]:
    """The conversation as Responses input items; the reasoning items `sends` lets go to this server
    (`HttpWire.sends`: the ones it gave) are replayed verbatim (another server cannot decrypt them
    and refuses the request; `sent_back`)."""
    items: list[dict[str, Any]] = []
    for item in request.conversation.items:
        if isinstance(item, UserMessage):
            items.append({"role": "user", "content": item.text})
        elif isinstance(item, ToolResult):
            output = f"[error] {item.content}" if item.is_error else item.content
            items.append({"type": "function_call_output", "call_id": item.call_id, "output": output})
        elif isinstance(item, AssistantMessage):
            items += [sent_back(o.item) for o in item.opaque if sends(o)]
            if item.text:
                items.append({"role": "assistant", "content": item.text})
            items += [
                {
                    "type": "function_call",
                    "call_id": c.id,
                    "name": c.name,
                    "arguments": json.dumps(c.arguments),
                }
                for c in item.tool_calls
            ]
    return items


def responses_usage(raw: dict[str, Any]) -> Usage:
    """Usage of a Responses call, cached tokens counted apart."""
    return openai_usage(raw, "input_tokens", "output_tokens")


class OpenAIResponsesWire(HttpWire):
    """POST {base_url}/responses with `stream: true` and `store: false`."""

    name = WIRE
    path = "/responses"
    untagged_anywhere = False  # a server refuses reasoning it cannot decrypt, never none (docs/wires.md)

    def headers(self) -> dict[str, str]:
        key = self.endpoint.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def body(self, request: WireRequest, spec: ModelSpec) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "input": responses_input(request, self.sends),
            "stream": True,
            "store": False,
        }
        if request.conversation.system:
            body["instructions"] = request.conversation.system
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.schema,
                    "strict": False,
                }
                for t in request.tools
            ]
            if request.force_tool:
                body["tool_choice"] = {"type": "function", "name": request.force_tool}
        if request.max_output is not None:
            body["max_output_tokens"] = request.max_output
        effort = openai_effort(clamp_thinking(spec, request.thinking))
        if effort is not None:
            body["reasoning"] = {"effort": effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.cache_key and self.endpoint.prompt_cache and is_openai(self.endpoint.base_url):
            body["prompt_cache_key"] = request.cache_key
        return body

    def translator(self, request: WireRequest) -> Translator:
        return ResponsesTranslator(self.origin)


class ResponsesTranslator(Translator):
    """Typed `response.*` events; output items are added, streamed into, then done."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        """The server answering (`origin_of` its base URL), named in the items it gives to keep."""
        self.model: str | None = None
        self.calls: dict[str, str] = {}
        """item id -> call id"""
        self.at: dict[int, str] = {}
        """output index -> the id of the call added there"""
        self.saw_call = False
        self.texted: set[Any] = set()
        """Message items whose text was given (by deltas, `output_text.done` or the item's done)."""
        self.ended: set[str] = set()
        """Call ids whose call was ended (`ToolCallEnd`)."""
        self.refused = False
        """The model gave a refusal instead of (or with) its text."""
        self.started: dict[str, dict[str, Any]] = {}
        """Call id -> the function_call item that started it."""
        self.arguments: dict[str, str] = {}
        """Call id -> the arguments streamed so far (for a done item that leaves them out)."""
        self.kept: set[Any] = set()
        """Reasoning items (by id) kept to be sent back."""
        self.reasoned: set[Any] = set()
        """Reasoning items (by id; None for deltas that name none) whose text deltas streamed."""
        self.summarised: set[Any] = set()
        """Reasoning items whose text was given by a `.done` event instead (servers that skip deltas)."""

    def feed(self, event: str, payload: dict[str, Any]) -> list[WireEvent]:
        kind = payload.get("type", event)
        handler = self._handlers.get(kind)
        if handler is not None:
            self.opened = True
            return handler(self, payload)
        if kind in QUIET_EVENTS:
            self.opened = True
            return []
        return [
            WireWarning(
                "unknown-stream-event", f"an unknown stream item {kind!r} was kept, not understood", payload
            )
        ]

    def _created(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.model = (payload.get("response") or {}).get("model") or self.model
        return []

    def _item_added(self, payload: dict[str, Any]) -> list[WireEvent]:
        item = payload.get("item") or {}
        if item.get("type") != "function_call":
            return []
        call_id = self._call_id(item)
        self.calls[item.get("id", call_id)] = call_id
        if isinstance(payload.get("output_index"), int):
            self.at[payload["output_index"]] = call_id
        self.started[call_id] = item
        return [ToolCallStart(call_id, item.get("name", ""))]

    def _call_id(self, item: dict[str, Any]) -> str:
        """A function call's id: the one its added item was given, else its `call_id`, else (servers
        that send only the item's `id`) that `id`, which is sent back as the `call_id` of its output."""
        known = self.calls.get(item.get("id", ""))
        call_id = known or own_call_id(item)
        if call_id is None:
            raise KeyError("call_id")
        return call_id

    def _delta_call(self, payload: dict[str, Any]) -> str:
        """The call an arguments event is about: by its `item_id`, else (servers that give only
        `output_index`) by the index its added item was given."""
        item_id = payload.get("item_id")
        if not item_id and payload.get("output_index") in self.at:
            return self.at[payload["output_index"]]
        return self.calls.get(item_id or "", item_id or "")

    def _arguments(self, payload: dict[str, Any]) -> list[WireEvent]:
        call_id = self._delta_call(payload)
        self.arguments[call_id] = self.arguments.get(call_id, "") + payload["delta"]
        return [ToolCallDelta(call_id, payload["delta"])]

    def _arguments_done(self, payload: dict[str, Any]) -> list[WireEvent]:
        """A call's whole arguments: streamed as one delta when no delta carried them (servers that
        skip the deltas)."""
        call_id = self._delta_call(payload)
        whole = payload.get("arguments")
        if not isinstance(whole, str) or self.arguments.get(call_id):
            return []
        self.arguments[call_id] = whole
        return [ToolCallDelta(call_id, whole)] if whole else []

    def _unshown(self, item: dict[str, Any]) -> bool:
        """A message whose text, a call whose end, or a reasoning item that no event has given yet."""
        if item.get("type") == "message":
            return not self._was_texted(item.get("id"))
        if item.get("type") == "reasoning":
            return item.get("id") not in self.kept
        if item.get("type") != "function_call" or own_call_id(item) is None:
            return False
        return self._call_id(item) not in self.ended

    def _was_texted(self, key: Any) -> bool:
        """Whether the message item `key` had its text given (deltas sent without an item id count
        for every item: the text must not be shown twice)."""
        return key in self.texted or None in self.texted

    def _reasoning(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.reasoned.add(payload.get("item_id"))
        return [ReasoningDelta(payload["delta"])]

    def _reasoning_done(self, payload: dict[str, Any]) -> list[WireEvent]:
        """A reasoning part's whole text: shown only when no delta of its item carried text."""
        key, text = payload.get("item_id"), payload.get("text")
        if key in self.reasoned or None in self.reasoned or not isinstance(text, str) or not text:
            return []
        self.summarised.add(key)
        return [ReasoningDelta(text)]

    def _text(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.texted.add(payload.get("item_id"))
        return [TextDelta(payload["delta"])]

    def _refusal(self, payload: dict[str, Any]) -> list[WireEvent]:
        """A refusal is what the model said instead of an answer: shown as its text."""
        self.refused = True
        return self._text(payload)

    def _refusal_done(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.refused = True
        return self._text_done({**payload, "text": payload.get("refusal")})

    def _text_done(self, payload: dict[str, Any]) -> list[WireEvent]:
        """A text part's whole text: shown only when no delta carried it (servers that skip deltas)."""
        key, text = payload.get("item_id"), payload.get("text")
        if self._was_texted(key) or not isinstance(text, str) or not text:
            return []
        self.texted.add(key)
        return [TextDelta(text)]

    def _item_done(self, payload: dict[str, Any]) -> list[WireEvent]:
        item = payload.get("item") or {}
        if item.get("type") == "function_call":
            call_id = self._call_id(item)
            self.saw_call = True
            self.ended.add(call_id)
            started = self.started.get(call_id, {})  # servers that give them whole when the call starts
            raw = item.get("arguments") or self.arguments.get(call_id) or started.get("arguments") or ""
            if not isinstance(raw, str):  # an object where JSON text belongs
                raw = json.dumps(raw, ensure_ascii=False)
            arguments, error = parse_arguments(raw)
            return [ToolCallEnd(call_id, item.get("name", ""), arguments, raw, error)]
        if item.get("type") == "reasoning":
            key = item.get("id")
            self.kept.add(key)
            shown = key in self.reasoned or None in self.reasoned or key in self.summarised
            texts = [] if shown else [ReasoningDelta(text) for text in _summary_texts(item)]
            return [*texts, OpaqueItem(Opaque(WIRE, {**item, ORIGIN: self.origin}))]
        if item.get("type") == "message" and not self._was_texted(item.get("id")):
            self.texted.add(item.get("id"))
            parts = [p for p in item.get("content") or () if isinstance(p, dict)]
            self.refused = self.refused or any(p.get("type") == "refusal" for p in parts)
            text = "".join(
                p[key]
                for p in parts
                for key in [_MESSAGE_PART_EVENTS.get(str(p.get("type")), ("", ""))[1]]
                if key and isinstance(p.get(key), str)
            )
            return [TextDelta(text)] if text else []
        return []

    def _unseen(self, response: dict[str, Any]) -> list[WireEvent]:
        """What the final response holds that no event before it carried: message text and calls
        (servers that send the whole answer only in `response.completed`)."""
        out: list[WireEvent] = []
        for item in response.get("output") or ():
            if isinstance(item, dict) and self._unshown(item):
                out.extend(self._item_done({"item": item}))
        return out

    def _finished(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.finished = True
        response = payload.get("response") or {}
        self.model = response.get("model") or self.model
        out: list[WireEvent] = self._unseen(response)
        for call_id, item in self.started.items():  # a call no done item nor the response ended
            if call_id not in self.ended:
                out.extend(self._item_done({"item": {**item, "arguments": ""}}))
        if response.get("usage"):
            out.append(UsageReport(responses_usage(response["usage"])))
        if response.get("status") == "incomplete":
            raw = (response.get("incomplete_details") or {}).get("reason")
            out.append(Stop(INCOMPLETE.get(raw or "", "other"), raw, self.model))
        else:
            reason: StopReason = "tool_use" if self.saw_call else "end_turn"
            if self.refused and reason == "end_turn":
                reason = "content_filter"
            out.append(Stop(reason, response.get("status"), self.model))
        return out

    def _failed(self, payload: dict[str, Any]) -> list[WireEvent]:
        """`response.failed` (its `response.error`), or an `error` event: documented with `code` and
        `message` at its top, sent by OpenAI with them nested in an `error` object (`type` too); each
        field is read where it is."""
        self.finished = True
        nested = (payload.get("response") or {}).get("error") or payload.get("error")
        found = [nested, payload] if isinstance(nested, dict) else [payload]

        def field(key: str) -> Any:
            return next((where[key] for where in found if where.get(key) is not None), None)

        code, kind = field("code"), field("type") if isinstance(nested, dict) else None
        said = field("message")
        if not (code or kind or said):  # `response.failed` with `error: null`
            return [Failure(f"the provider reported a failed response {self.where} without saying why")]
        message = f"the provider reported an error {self.where} ({code or kind}): {said or ''}"
        return [Failure(message, retryable=bool({code, kind} & RETRYABLE_CODES))]

    def as_stream(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A whole `response` as its stream: created, each output item's deltas and done, then the
        terminal event its status names."""
        if "output" not in body and isinstance(body.get("error"), dict):
            return [("error", body["error"])]
        if not isinstance(body.get("output"), list):
            return []  # not a response: nothing to read
        items: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": {"model": body.get("model")}})
        ]
        for item in body.get("output") or ():
            if isinstance(item, dict):
                items.extend(_item_as_stream(item))
        terminal = {"failed": "response.failed", "incomplete": "response.incomplete"}.get(
            str(body.get("status")), "response.completed"
        )
        items.append((terminal, {"response": body}))
        return items

    _handlers: dict[str, Callable[[Any, dict[str, Any]], list[WireEvent]]] = {
        "response.created": _created,
        "response.output_item.added": _item_added,
        "response.output_text.delta": _text,
        "response.output_text.done": _text_done,
        "response.refusal.delta": _refusal,
        "response.refusal.done": _refusal_done,
        "response.reasoning_summary_text.delta": _reasoning,
        "response.reasoning_text.delta": _reasoning,
        "response.reasoning_summary_text.done": _reasoning_done,
        "response.reasoning_text.done": _reasoning_done,
        "response.function_call_arguments.delta": _arguments,
        "response.function_call_arguments.done": _arguments_done,
        "response.output_item.done": _item_done,
        "response.completed": _finished,
        "response.incomplete": _finished,
        "response.failed": _failed,
        "error": _failed,
    }


_MESSAGE_PART_EVENTS = {
    "output_text": ("response.output_text.delta", "text"),
    "refusal": ("response.refusal.delta", "refusal"),
}
"""A message's content part kind -> the delta event that streams it and the field holding its text."""


def _summary_texts(item: dict[str, Any]) -> list[str]:
    """The texts of a reasoning item's summary parts."""
    parts = item.get("summary")
    return [
        p["text"]
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]
    ]


def own_call_id(item: dict[str, Any]) -> str | None:
    """The id a function_call item names itself by: `call_id`, else its item `id`."""
    for key in ("call_id", "id"):
        if isinstance(item.get(key), str) and item[key]:
            return str(item[key])
    return None


def _item_as_stream(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One whole output item as the events that stream it: added (a call), its deltas, done."""
    kind = item.get("type")
    out: list[tuple[str, dict[str, Any]]] = []
    call_id = own_call_id(item) if kind == "function_call" else None
    if call_id is not None:
        out.append(("response.output_item.added", {"item": {**item, "arguments": ""}}))
        if isinstance(item.get("arguments"), str) and item["arguments"]:
            delta = {"item_id": item.get("id", call_id), "delta": item["arguments"]}
            out.append(("response.function_call_arguments.delta", delta))
    parts = item.get("content") if kind == "message" else item.get("summary") if kind == "reasoning" else ()
    for part in parts if isinstance(parts, list) else ():
        part_kind = part.get("type") if isinstance(part, dict) else None
        event, key = (
            ("response.reasoning_summary_text.delta", "text")
            if kind == "reasoning"
            else _MESSAGE_PART_EVENTS.get(str(part_kind), ("", ""))
        )
        text = part.get(key) if event and isinstance(part, dict) else None
        if isinstance(text, str) and text:
            out.append((event, {"delta": text}))
    out.append(("response.output_item.done", {"item": item}))
    return out
