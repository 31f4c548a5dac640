"""The `anthropic-messages` wire: Anthropic's Messages API with typed stream events."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from harnez.settings import WireName
from harnez.wires.base import (
    Failure,
    ModelSpec,
    OpaqueItem,
    ReasoningDelta,
    Retry,
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
from harnez.wires.catalogue import anthropic_thinking, clamp_thinking
from harnez.wires.conversation import (
    AssistantMessage,
    Item,
    Opaque,
    ToolCall,
    ToolResult,
    UserMessage,
    call_as_text,
    result_as_text,
    tool_names,
)
from harnez.wires.http import ORIGIN, HttpWire, Translator, goes_to, parse_arguments, sent_back
from harnez.wires.retry import RetryingWire

ANTHROPIC_VERSION = "2023-06-01"
WIRE: WireName = "anthropic-messages"
ANTHROPIC_STOPS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",  # the window ran out while it wrote: cut the same way
    "refusal": "content_filter",
}
PAUSED = "pause_turn"
"""Anthropic paused a long turn of its own server tools (web search, code execution): the request is
sent again with the paused content as the last assistant message, and the answer goes on."""
MAX_PAUSES = 8
"""How many times one model call is continued after a pause before it ends as it is."""
CONTAINER = "container"
"""The `type` of the opaque item holding the container a response ran its code in (`{id, expires_at}`,
in `message_start`'s message or `message_delta`'s delta, and the server's `ORIGIN`): never a content
block, it is kept with the message to name that container in the requests that follow (`"container":
id`, `live_container`), so the model's files are there for the rest of the session while it lives."""
CONTAINER_MARGIN = 60.0
"""Seconds before its `expires_at` a container is sent no more: a request on its way, or one that runs
code for a while, should not reach it as it expires (Anthropic refuses an expired container)."""
SIGNED_BLOCKS = frozenset(("thinking", "redacted_thinking"))
SERVER_TOOL_BLOCKS = frozenset(("server_tool_use", "mcp_tool_use"))
RETRYABLE_ERRORS = frozenset(("overloaded_error", "api_error", "rate_limit_error", "timeout_error"))
CACHE_BREAKPOINT = {"type": "ephemeral"}
CACHED_USER_TURNS = 2
"""User turns whose last block carries a cache breakpoint: the newest, and the one before it (where the
previous request ended), so every request reads the prefix the last one wrote (Anthropic allows 4)."""


def anthropic_messages(
    request: WireRequest, sends: Callable[[Opaque], bool], cache: bool = True
) -> list[dict[str, Any]]:
    """The conversation as alternating user/assistant messages; tool results ride in user turns; the
    kept blocks `sends` lets go to this server (`HttpWire.sends`: its own, whose signatures it can
    check) go back in their messages; with `cache`, the newest user turns carry prompt-cache
    breakpoints."""
    messages: list[dict[str, Any]] = []
    # Anthropic refuses tool_use / tool_result blocks in a request that defines no tools (a harness
    # that disables every tool, in a session that used some): there they are written out as text
    as_text = not request.tools
    names = tool_names(request.conversation.items) if as_text else {}
    for item in request.conversation.items:
        if isinstance(item, AssistantMessage):
            _add(messages, "assistant", _assistant_blocks(item, sends, calls_as_text=as_text))
        elif isinstance(item, UserMessage):
            _add(messages, "user", [{"type": "text", "text": item.text}])
        elif isinstance(item, ToolResult) and as_text:
            _add(messages, "user", [{"type": "text", "text": result_as_text(item, names)}])
        elif isinstance(item, ToolResult):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": item.call_id,
                "content": item.content,
            }
            if item.is_error:
                block["is_error"] = True
            _add(messages, "user", [block])
    if cache:
        _mark_cache_breakpoints(messages)
    return messages


def _mark_cache_breakpoints(messages: list[dict[str, Any]]) -> None:
    """Ask Anthropic to cache the conversation up to the newest user turns (its prompt cache is opt-in
    per block): the tools, the system text and the history before them are then read from the cache
    by the next request of the loop or of the session, not processed again (faster first words; cache
    reads are billed at a tenth). Only user turns are marked: their blocks are text and tool results,
    never the thinking blocks Anthropic refuses a breakpoint on."""
    users = [message for message in messages if message["role"] == "user"]
    for message in users[-CACHED_USER_TURNS:]:
        blocks = message["content"]
        # An empty block cannot carry one: the last block with something in it does.
        marked = next((i for i in reversed(range(len(blocks))) if _has_content(blocks[i])), None)
        if marked is not None:
            blocks[marked] = {**blocks[marked], "cache_control": dict(CACHE_BREAKPOINT)}


def _has_content(block: dict[str, Any]) -> bool:
    return bool(block.get("text") if block["type"] == "text" else block.get("content"))


def _add(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})


def _assistant_blocks(
    item: AssistantMessage, sends: Callable[[Opaque], bool], *, calls_as_text: bool = False
) -> list[dict[str, Any]]:
    """The message's content: its kept blocks first (thinking, server tools), then its text (unless the
    kept blocks already hold it, in place around the server tools' blocks), then its tool calls (with
    `calls_as_text`, a text block each: the request defines no tools). Blocks another server gave are
    left out (their text then comes from the message's own)."""
    blocks = [sent_back(o.item) for o in item.opaque if o.item.get("type") != CONTAINER and sends(o)]
    if item.text and not any(block.get("type") == "text" for block in blocks):
        blocks.append({"type": "text", "text": item.text})
    if calls_as_text:
        blocks += [{"type": "text", "text": call_as_text(call)} for call in item.tool_calls]
    else:
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in item.tool_calls
        ]
    return blocks


class AnthropicWire(HttpWire):
    """POST {base_url}/v1/messages with `stream: true`."""

    name = WIRE
    path = "/v1/messages"

    def headers(self) -> dict[str, str]:
        key = self.endpoint.api_key
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def body(self, request: WireRequest, spec: ModelSpec) -> dict[str, Any]:
        max_tokens = request.max_output or spec.max_output
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": max_tokens,
            "messages": anthropic_messages(request, self.sends, cache=self.endpoint.prompt_cache),
            "stream": True,
        }
        if request.conversation.system:
            body["system"] = request.conversation.system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.schema}
                for t in request.tools
            ]
        thinking = anthropic_thinking(clamp_thinking(spec, request.thinking), max_tokens)
        if thinking is not None:
            body["thinking"] = thinking
        elif request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools and request.force_tool and thinking is None:  # no forced tool while thinking
            body["tool_choice"] = {"type": "tool", "name": request.force_tool}
        items = request.conversation.items
        container = live_container(items, self.origin, datetime.now(UTC), tools=bool(request.tools))
        if container is not None:
            body["container"] = container
        return body

    def without_refused(self, body: dict[str, Any], said: str) -> dict[str, Any] | None:
        """A container the server refused (expired or deleted before its `expires_at` by the server's
        clock, or a server that takes none): the request goes once more without it, in a new container,
        rather than failing every request of the session that names it."""
        if "container" not in body or "container" not in said.lower():
            return None
        return {k: v for k, v in body.items() if k != "container"}

    def translator(self, request: WireRequest) -> Translator:
        items = request.conversation.items
        verbatim = bool(items) and isinstance(items[-1], AssistantMessage)
        return AnthropicTranslator(self.origin, verbatim=verbatim)

    async def _stream(self, request: WireRequest) -> AsyncGenerator[WireEvent, None]:
        """One model call, continued after each `pause_turn` (up to MAX_PAUSES times) by sending the
        request again with the paused content as the last assistant message: the events read as one
        answer, its usage the sum of the calls' (its `context` the last call's), its stop the last
        call's. A continuation that fails in passing is tried again by itself (the server tools
        already run are not run again): after its `Retry`, which empties the caller's turn, what the
        calls before it gave is given again."""
        usage: Usage | None = None
        before: list[WireEvent] = []
        """What the finished calls gave (no warnings: a `Retry` leaves them), given again on a retry."""
        for pause in range(MAX_PAUSES + 1):
            kept: list[Opaque] = []
            calls: list[ToolCall] = []
            stop: Stop | None = None
            usage_before, given = usage, list(before)
            source = (
                RetryingWire(self, self.retry).attempts(partial(HttpWire._stream, self, request))
                if pause
                else HttpWire._stream(self, request)
            )
            async with contextlib.aclosing(source) as events:
                async for event in events:
                    if isinstance(event, Retry):  # the continuation again: the turn is emptied
                        kept, calls, usage, before = [], [], usage_before, list(given)
                        yield event
                        for earlier in given:
                            yield earlier
                        continue
                    if isinstance(event, UsageReport):
                        usage = add_usage(usage, event.usage)
                        continue
                    if isinstance(event, Stop):
                        stop = event
                        continue
                    if isinstance(event, WireWarning) and event.code == "opaque-items-dropped" and pause:
                        continue  # said once, for the first call
                    if isinstance(event, OpaqueItem):
                        kept.append(event.opaque)
                    elif isinstance(event, ToolCallEnd):
                        calls.append(ToolCall(event.id, event.name, event.arguments))
                    if not isinstance(event, WireWarning | Failure):
                        before.append(event)
                    yield event
            if stop is None:  # failed, or cut: what the call streamed stands as it is
                return
            if stop.raw != PAUSED or calls or pause == MAX_PAUSES:
                if usage is not None:
                    yield UsageReport(usage)
                yield stop
                return
            paused = AssistantMessage(tool_calls=tuple(calls), opaque=tuple(kept))
            request = replace(request, conversation=request.conversation.append(paused))


class AnthropicTranslator(Translator):
    """message_start, content blocks (start/delta/stop), message_delta, message_stop."""

    def __init__(self, origin: str, verbatim: bool = False) -> None:
        self.origin = origin
        """The server answering (`origin_of` its base URL), named in every item it gives to keep: its
        signed thinking, its server tools' blocks and its container go back to it alone."""
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.stop_raw: str | None = None
        self.container: dict[str, Any] | None = None
        """The code execution container the response ran in, as the response named it."""
        self.blocks: dict[int, dict[str, Any]] = {}
        """Index -> the blocks started and not stopped yet, as they stream in."""
        self.content: dict[int, dict[str, Any]] = {}
        """Index -> each stopped block as it is sent back (tool calls apart)."""
        self.verbatim = verbatim
        """Whether the message's text is kept in its blocks, in place among the others, for replay: a
        continued message (the request ended with an assistant message) is sent back block for block."""

    def feed(self, event: str, payload: dict[str, Any]) -> list[WireEvent]:
        kind = payload.get("type", event)
        handler = self._handlers.get(kind)
        if handler is None:
            return [
                WireWarning(
                    "unknown-stream-event",
                    f"an unknown stream item {kind!r} was kept, not understood",
                    payload,
                )
            ]
        return handler(self, payload)

    def _message_start(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.opened = True
        message = payload.get("message") or {}
        self.model = message.get("model")
        self.usage.update(message.get("usage") or {})
        self._note_container(message.get("container"))
        return []

    def _note_container(self, container: Any) -> None:
        if isinstance(container, dict) and isinstance(container.get("id"), str) and container["id"]:
            self.container = container

    def _block_start(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.opened = True  # a server that leaves out message_start still streams a message
        block = dict(payload.get("content_block") or {})
        if block.get("type") == "tool_use":
            start = ToolCallStart(block["id"], block["name"])  # a call without them is skipped whole
            block["partial_json"] = ""
            self.blocks[payload.get("index", len(self.blocks))] = block
            return [start]
        self.blocks[payload.get("index", len(self.blocks))] = block
        # Anthropic starts text and thinking empty; a server that starts them with text gives it here.
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            return [TextDelta(block["text"])]
        if block.get("type") == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
            return [ReasoningDelta(block["thinking"])]
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[WireEvent]:
        block = self.blocks.get(payload.get("index", -1), {})
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            return [TextDelta(delta["text"])]
        if kind == "citations_delta":  # a text block's sources (web search): sent back with it
            block["citations"] = [*(block.get("citations") or ()), delta["citation"]]
            return []
        if kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            return [ReasoningDelta(delta["thinking"])]
        if kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta["signature"]
            return []
        if kind == "input_json_delta":
            block["partial_json"] = block.get("partial_json", "") + delta["partial_json"]
            if block.get("type") != "tool_use":  # a block of a kind not known here: kept for its warning
                return []
            return [ToolCallDelta(block.get("id", ""), delta["partial_json"])]
        return [
            WireWarning(
                "unknown-stream-event", f"an unknown delta {kind!r} was kept, not understood", payload
            )
        ]

    def _block_stop(self, payload: dict[str, Any]) -> list[WireEvent]:
        index = payload.get("index", -1)
        block = self.blocks.pop(index, {})
        kind = block.get("type")
        if kind == "tool_use":
            raw = block["partial_json"]
            if not raw and isinstance(block.get("input"), dict) and block["input"]:
                raw = json.dumps(block["input"], ensure_ascii=False)  # given whole at the start (mocks)
            arguments, error = parse_arguments(raw)
            return [ToolCallEnd(block["id"], block["name"], arguments, raw, error)]
        if kind in SERVER_TOOL_BLOCKS:  # its input streamed like a tool call's
            raw = block.pop("partial_json", "")
            if raw:
                block["input"] = parse_arguments(raw)[0]
        if kind == "text" or kind in SIGNED_BLOCKS or is_server_block(kind):
            self.content[index] = block
            return []
        if block:  # a block of a kind not known here: not understood, but kept in the warning
            return [
                WireWarning(
                    "unknown-stream-event",
                    f"an unknown content block {kind!r} was kept, not understood",
                    block,
                )
            ]
        return []

    def _kept(self) -> list[WireEvent]:
        """The message's blocks to send back, in their order: signed thinking always; with the blocks
        of the tools Anthropic ran itself (`server_tool_use` and its `*_tool_result`), in a paused or
        continued message, every block but the tool calls, text included (a call stays beside its
        result, each text where it was)."""
        blocks = [self.content[index] for index in sorted(self.content)]
        verbatim = (
            self.verbatim or self.stop_raw == PAUSED or any(is_server_block(b.get("type")) for b in blocks)
        )
        kept = [
            b
            for b in blocks
            if b.get("type") in SIGNED_BLOCKS or (verbatim and (b.get("type") != "text" or b.get("text")))
        ]
        return [self._opaque({k: v for k, v in b.items() if v is not None}) for b in kept]

    def _opaque(self, item: dict[str, Any]) -> OpaqueItem:
        """An item to keep, tagged with the server that gave it (`ORIGIN`): another server cannot check
        a signature it did not make, nor run on in a container it never made, and refuses them."""
        return OpaqueItem(Opaque(WIRE, {**item, ORIGIN: self.origin}))

    def _message_delta(self, payload: dict[str, Any]) -> list[WireEvent]:
        delta = payload.get("delta") or {}
        self.stop_raw = delta.get("stop_reason") or self.stop_raw
        self._note_container(delta.get("container"))
        self.usage.update({k: v for k, v in (payload.get("usage") or {}).items() if v is not None})
        return []

    def _message_stop(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.finished = True
        reason = ANTHROPIC_STOPS.get(self.stop_raw or "", "other")
        out: list[WireEvent] = []
        for index in list(self.blocks):  # blocks a server never stopped end with the message
            out.extend(self.read("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.extend(self._kept())
        if self.container is not None:
            out.append(self._opaque({**self.container, "type": CONTAINER}))
        return [*out, UsageReport(anthropic_usage(self.usage)), Stop(reason, self.stop_raw, self.model)]

    def finish(self) -> list[WireEvent]:
        """A body that ends after a `message_delta` with its stop reason but without `message_stop`
        (some compatible servers) ended the answer; any other early end is a cut stream."""
        if not self.finished and self.stop_raw is not None and not self.blocks:
            return self._message_stop({})
        return super().finish()

    def _error(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.finished = True
        error = payload.get("error") or payload  # some servers leave out the `error` wrapper
        if not isinstance(error, dict):
            error = {"message": str(error)}
        kind = error.get("type", "error")
        message = f"the provider reported {kind} {self.where}: {error.get('message', '')}"
        return [
            Failure(message, 529 if kind == "overloaded_error" else None, retryable=kind in RETRYABLE_ERRORS)
        ]

    def _ping(self, payload: dict[str, Any]) -> list[WireEvent]:
        self.opened = True  # Anthropic's own keep-alive: a stream cut after it is a cut one
        return []

    def as_stream(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A whole `message` as its stream: message_start, each block's start, delta and stop,
        message_delta with the stop reason, message_stop."""
        if body.get("type") == "error":
            return [("error", body)]
        if not isinstance(body.get("content"), list):
            return []  # not a message: nothing to read
        message = {key: value for key, value in body.items() if key != "content"}
        items: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": {**message, "content": []}})]
        for index, block in enumerate(body.get("content") or ()):
            if not isinstance(block, dict):
                continue
            start, deltas = _block_as_stream(block)
            items.append(("content_block_start", {"index": index, "content_block": start}))
            items.extend(("content_block_delta", {"index": index, "delta": d}) for d in deltas)
            items.append(("content_block_stop", {"index": index}))
        items.append(("message_delta", {"delta": {"stop_reason": body.get("stop_reason")}}))
        items.append(("message_stop", {}))
        return items

    _handlers = {
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
        "error": _error,
        "ping": _ping,
    }


def _block_as_stream(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A whole content block as the start it streams with and its deltas."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        text = block["text"]
        return {**block, "text": ""}, ([{"type": "text_delta", "text": text}] if text else [])
    if kind == "thinking":
        deltas = [
            {"type": f"{key}_delta", key: block[key]}
            for key in ("thinking", "signature")
            if isinstance(block.get(key), str) and block[key]
        ]
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
        arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
        return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": arguments}]
    return block, []  # redacted thinking is kept whole; other kinds pass as they are


def live_container(items: tuple[Item, ...], origin: str, now: datetime, *, tools: bool = True) -> str | None:
    """The id of the newest container the server at `origin` ran code in for this conversation, while
    it lives: the next request of the tool loop, and the session's later tasks, go on in it (the files
    the model made are there), not in a new one. None once it expires (`expires_at`, less
    `CONTAINER_MARGIN`), or when its expiry is not given (then only the continuation of the paused
    call that named it, which follows at once, goes on in it). A request that offers no `tools` (a
    compaction's summary) runs no code: only the continuation of its own paused call, which did (the
    server offered code execution to it), names one; Anthropic documents the container as code
    execution's, not whether a request without it takes one."""
    paused = True
    """Whether the items looked at so far are the paused messages that end the conversation."""
    for item in reversed(items):
        paused = paused and isinstance(item, AssistantMessage)
        if not paused and not tools:
            return None
        if not isinstance(item, AssistantMessage):
            continue
        for opaque in reversed(item.opaque):
            found = opaque.item
            if (
                opaque.wire != WIRE
                or found.get("type") != CONTAINER
                or not goes_to(found, origin, untagged=True)
            ):
                continue
            expires = _moment(found.get("expires_at"))
            if expires is None:
                return str(found["id"]) if paused else None
            return str(found["id"]) if now < expires - timedelta(seconds=CONTAINER_MARGIN) else None
    return None


def lasting_containers(items: Sequence[Item], now: datetime) -> tuple[Opaque, ...]:
    """The newest container item of each server among `items`, while it lives (its `expires_at` ahead
    of `now`): what a compaction that drops the messages naming it carries onto the conversation it
    makes, so the model's code goes on where its files are rather than in a new container.
    `live_container` still decides, request by request, whether it is sent (its margin, its server)."""
    newest: dict[Any, Opaque] = {}
    for item in items:
        for opaque in item.opaque if isinstance(item, AssistantMessage) else ():
            if opaque.wire == WIRE and opaque.item.get("type") == CONTAINER:
                newest[opaque.item.get(ORIGIN)] = opaque
    return tuple(
        opaque
        for opaque in newest.values()
        if (expires := _moment(opaque.item.get("expires_at"))) is not None and now < expires
    )


def _moment(value: Any) -> datetime | None:
    """An ISO 8601 time as Anthropic writes it (`2026-12-06T01:00:00.123456Z`); None when it is not one
    (a time without its zone is read as UTC)."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def is_server_block(kind: Any) -> bool:
    """A block of a tool Anthropic ran itself: its call (`server_tool_use`, `mcp_tool_use`) or its result
    (`web_search_tool_result`, `code_execution_tool_result`, `mcp_tool_result`, …), both in the
    assistant's own content."""
    return kind in SERVER_TOOL_BLOCKS or (isinstance(kind, str) and kind.endswith("_tool_result"))


def add_usage(total: Usage | None, more: Usage) -> Usage:
    """The tokens of two requests of one call together (a field neither reported stays None), and
    what the later one left in the context: it sent the earlier one's prompt and answer again, so
    the sum would count them twice."""
    if total is None:
        return more

    def both(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        both(total.input, more.input),
        both(total.output, more.output),
        both(total.cache_read, more.cache_read),
        both(total.cache_write, more.cache_write),
        both(total.reasoning, more.reasoning),
        more.context_tokens,
    )


def anthropic_usage(raw: dict[str, Any]) -> Usage:
    """Anthropic reports input without cache tokens already; reasoning is not reported apart."""
    return Usage(
        input=raw.get("input_tokens"),
        output=raw.get("output_tokens"),
        cache_read=raw.get("cache_read_input_tokens"),
        cache_write=raw.get("cache_creation_input_tokens"),
    )
