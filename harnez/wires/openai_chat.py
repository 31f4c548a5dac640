"""The `openai-chat` wire: OpenAI Chat Completions and the many servers that copy it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from harnez.redaction import SECRETS
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
    RETRYABLE_STATUSES,
    HttpWire,
    Translator,
    is_openai,
    openai_usage,
    parse_arguments,
)

WIRE: WireName = "openai-chat"
REASONING_CONTENT = "reasoning_content"
INLINE_THINKING = "content_before_text"
"""The opaque item holding what the model wrote in its content before its answer's text (its
`<think>` tags and reasoning), put back before the text when the message is sent again."""
REASONING_DETAILS = "reasoning_details"
"""OpenRouter's structured reasoning (`reasoning.text` with its signature, `reasoning.summary`,
`reasoning.encrypted`), which it asks to be sent back unchanged on the assistant message of a tool
loop (Gemini and Claude models behind it refuse, or lose, their reasoning without it)."""
DETAIL_TEXTS = ("text", "summary", "data")
"""The fields of a reasoning detail that stream in pieces, joined when its fragments are merged."""
THINKING_PARTS = "thinking_parts"
"""The opaque item holding the reasoning a model gave as `thinking` content parts (Mistral's: `{"type":
"thinking", "thinking": [text parts]}`), sent back as such a part before the text of its message: the
model sees what it reasoned. Sent only to Mistral's API, which documents them in an assistant message
(other chat servers refuse a content part they do not know: a session moved to one goes on)."""
CALL_EXTRAS = "tool_call_extra_content"
"""The opaque item holding, by call id, each tool call's `extra_content` (Gemini's thought signature,
which Gemini 3 refuses a tool loop without)."""
CHAT_STOPS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
    # what compatible servers say instead: Together's `eos`, TGI's and watsonx's `eos_token` and
    # `stop_sequence`, Mistral's `model_length` (the context window ran out), and Anthropic's names
    # from proxies that pass them through
    "eos": "end_turn",
    "eos_token": "end_turn",
    "stop_sequence": "end_turn",
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_length": "max_tokens",
}
STREAM_OPTIONS_REFUSED: set[str] = set()
"""The base URLs whose server refused `stream_options`, for the life of the process: every task opens
its own wire, and each would otherwise pay one refused request again."""


PASSING_ERRORS = frozenset(
    (
        "server_error",
        "internal_server_error",
        "service_unavailable",
        "timeout",
        "rate_limit_exceeded",
        "rate_limit_error",
        "overloaded_error",
        "api_error",
    )
)
"""Error codes or types, as OpenAI and the servers copying it send them in a stream, of trouble that
passes: the call is tried again."""


def chat_messages(
    request: WireRequest, sends: Callable[[Opaque], bool], thinking_parts: bool = False
) -> list[dict[str, Any]]:
    """The portable conversation as chat messages, with the opaque items `sends` lets go to this
    server (`HttpWire.sends`: its own). Reasoning is sent back only as the `reasoning_content` that
    server gave (kept as an opaque item): DeepSeek's and Kimi's thinking modes refuse a tool loop
    whose assistant messages lack it; and, with `thinking_parts` (Mistral's API), as the `thinking`
    content parts it was given in."""
    conv = request.conversation
    messages: list[dict[str, Any]] = [{"role": "system", "content": conv.system}] if conv.system else []
    for item in conv.items:
        if isinstance(item, UserMessage):
            messages.append({"role": "user", "content": item.text})
        elif isinstance(item, ToolResult):
            content = f"[error] {item.content}" if item.is_error else item.content
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": content})
        elif isinstance(item, AssistantMessage):
            messages.append(_assistant(item, sends, thinking_parts))
    return messages


def _assistant(
    item: AssistantMessage, sends: Callable[[Opaque], bool], thinking_parts: bool
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": item.text or None}
    extras: dict[str, Any] = {}
    for kept in item.opaque:
        if not sends(kept):  # another wire's or another server's
            continue
        if isinstance(kept.item.get(REASONING_CONTENT), str):
            message[REASONING_CONTENT] = kept.item[REASONING_CONTENT]
        if isinstance(kept.item.get(REASONING_DETAILS), list):
            message[REASONING_DETAILS] = kept.item[REASONING_DETAILS]
        if isinstance(kept.item.get(INLINE_THINKING), str):
            message["content"] = kept.item[INLINE_THINKING] + item.text
        if isinstance(kept.item.get(CALL_EXTRAS), dict):
            extras.update(kept.item[CALL_EXTRAS])
        if thinking_parts and isinstance(kept.item.get(THINKING_PARTS), str):
            thought = {"type": "thinking", "thinking": [{"type": "text", "text": kept.item[THINKING_PARTS]}]}
            message["content"] = [thought] + ([{"type": "text", "text": item.text}] if item.text else [])
    if item.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                **({"extra_content": extras[c.id]} if c.id in extras else {}),
            }
            for c in item.tool_calls
        ]
    return message


def is_mistral(base_url: str) -> bool:
    """Whether a base URL is Mistral's own API (`api.mistral.ai`), which takes `thinking` parts back."""
    return urlsplit(base_url).hostname == "api.mistral.ai"


def chat_usage(raw: dict[str, Any]) -> Usage:
    """Usage of a Chat Completions call, cached tokens counted apart: OpenAI's
    `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens` or Moonshot's
    `cached_tokens` (each counted inside `prompt_tokens` as OpenAI's are)."""
    usage = openai_usage(raw, "prompt_tokens", "completion_tokens")
    cached = next(
        (raw[k] for k in ("prompt_cache_hit_tokens", "cached_tokens") if isinstance(raw.get(k), int)), None
    )
    if usage.cache_read is not None or cached is None or usage.input is None:
        return usage
    return replace(usage, input=usage.input - cached, cache_read=cached)


class OpenAIChatWire(HttpWire):
    """POST {base_url}/chat/completions with `stream: true`."""

    name = WIRE
    path = "/chat/completions"

    def headers(self) -> dict[str, str]:
        key = self.endpoint.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def body(self, request: WireRequest, spec: ModelSpec) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": chat_messages(request, self.sends, thinking_parts=is_mistral(self.endpoint.base_url)),
            "stream": True,
        }
        if not self.usage_refused:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.schema},
                }
                for t in request.tools
            ]
            if request.force_tool:
                body["tool_choice"] = {"type": "function", "function": {"name": request.force_tool}}
        if request.max_output is not None:
            cap = "max_completion_tokens" if is_openai(self.endpoint.base_url) else "max_tokens"
            body[cap] = request.max_output
        effort = openai_effort(clamp_thinking(spec, request.thinking))
        if effort is not None:
            body["reasoning_effort"] = effort
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.cache_key and self.endpoint.prompt_cache and is_openai(self.endpoint.base_url):
            body["prompt_cache_key"] = request.cache_key
        return body

    @property
    def usage_refused(self) -> bool:
        """The server refused `stream_options` (older or strict servers: "unrecognized request
        argument", "extra inputs are not permitted"): it is sent no more, by any wire of its base URL,
        and usage comes only if it sends it anyway."""
        return self.endpoint.base_url.rstrip("/") in STREAM_OPTIONS_REFUSED

    def without_refused(self, body: dict[str, Any], said: str) -> dict[str, Any] | None:
        if "stream_options" not in body or not any(
            name in said for name in ("stream_options", "include_usage")
        ):
            return None
        STREAM_OPTIONS_REFUSED.add(self.endpoint.base_url.rstrip("/"))
        return {k: v for k, v in body.items() if k != "stream_options"}

    def translator(self, request: WireRequest) -> Translator:
        return ChatTranslator(self.origin)


class ChatTranslator(Translator):
    """Chat chunks: deltas per choice, tool calls keyed by index, usage in a last chunk."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        """The server answering (`origin_of` its base URL), named in the opaque items it gives."""
        self.model: str | None = None
        self.calls: dict[int, list[str]] = {}
        """slot -> [id, name, arguments so far], slots numbered in the order the calls started"""
        self.slots: dict[int, int] = {}
        """The server's `index` -> the slot of the call it names now."""
        self.unnamed: set[int] = set()
        """The slots of calls whose id is made up (`call_N`), the server not having given it yet: their
        arguments are held, not streamed, until it does or the call ends (a preview under the made-up
        id would show a call that never completes: the call goes on under the server's id)."""
        self.stop: tuple[StopReason, str | None] | None = None
        self.refused = False
        """The model gave a `refusal` instead of (or with) its content."""
        self.inline = InlineThinking()
        """Reasoning the model writes in its content, between think tags (servers without a parser)."""
        self.extras: dict[str, Any] = {}
        """Call id -> the `extra_content` its fragments carried, kept to be sent back."""
        self.reasoning_content: list[str] = []
        """What the model reasoned in `reasoning_content` fields, kept to be sent back."""
        self.thinking_parts: list[str] = []
        """What the model reasoned in `thinking` content parts, kept to be sent back as one."""
        self.details: list[dict[str, Any]] = []
        """The `reasoning_details` given so far, streamed fragments merged, kept to be sent back."""

    def feed(self, event: str, payload: dict[str, Any]) -> list[WireEvent]:
        if "error" in payload:
            return [self._error(payload["error"])]
        # a named error event whose data is the error itself (some gateways), or an error object
        # not wrapped in `error` (`{"object": "error", "message": …}`: vLLM-based servers)
        if event == "error" or (payload.get("object") == "error" and "choices" not in payload):
            return [self._error(payload)]
        if "choices" not in payload:
            return [
                WireWarning(
                    "unknown-stream-event", "an unknown chat stream item was kept, not understood", payload
                )
            ]
        self.opened = True
        self.model = payload.get("model") or self.model
        out: list[WireEvent] = []
        for choice in (payload["choices"] or ())[:1]:  # `null` or `[]` in a usage-only last chunk
            # `message` in a chunk: servers that put the whole message where the delta belongs
            out.extend(self._delta(choice.get("delta") or choice.get("message") or {}))
            if choice.get("finish_reason"):
                out.extend(self._finish_reason(choice["finish_reason"]))
        # Groq gives the last chunk's usage in its `x_groq` object (and in `usage` when asked)
        usage = payload.get("usage") or (payload.get("x_groq") or {}).get("usage")
        if usage:
            out.append(UsageReport(chat_usage(usage)))
        return out

    def _delta(self, delta: dict[str, Any]) -> list[WireEvent]:
        out: list[WireEvent] = []
        # Text, or a list of text parts (some servers send content as parts even when streaming).
        kept = _text_of(delta.get(REASONING_CONTENT))
        if kept:
            self.reasoning_content.append(kept)
        reasoning = kept or _text_of(delta.get("reasoning"))
        details = delta.get(REASONING_DETAILS)
        if isinstance(details, list):
            given = [d for d in details if isinstance(d, dict)]
            for detail in given:
                self._merge_detail(detail)
            # shown from the details only when the delta does not say it in `reasoning` too
            reasoning = reasoning or "".join(_detail_text(d) for d in given)
        thought = _thinking_parts(delta.get("content"))
        if thought:
            self.thinking_parts.append(thought)
            reasoning += thought
        if reasoning:
            out.append(ReasoningDelta(reasoning))
        content = _text_of(delta.get("content"))
        if content:
            out.extend(self.inline.feed(content))
        # A refusal is what the model said instead of an answer: shown as its text.
        refusal = _text_of(delta.get("refusal"))
        if refusal:
            self.refused = True
            out.append(TextDelta(refusal))
        for call in delta.get("tool_calls") or ():
            out.extend(self._tool_call(call))
        legacy = delta.get("function_call")  # the functions API before tools: one call, with no id
        if isinstance(legacy, dict):
            out.extend(self._tool_call({"index": 0, "function": legacy}))
        return out

    def _merge_detail(self, detail: dict[str, Any]) -> None:
        """Keep one reasoning detail: a fragment of the latest one (same `type` and `index`, as
        OpenRouter streams them) is joined to it, its text fields appended and its other fields
        (a signature sent last) set; anything else is a detail of its own."""
        last = self.details[-1] if self.details else None
        same = (
            last is not None
            and isinstance(detail.get("index"), int)
            and (last.get("type"), last.get("index")) == (detail.get("type"), detail.get("index"))
        )
        if last is None or not same:
            self.details.append(dict(detail))
            return
        for key, value in detail.items():
            if key in DETAIL_TEXTS and isinstance(value, str) and isinstance(last.get(key), str):
                last[key] += value
            elif value is not None:
                last[key] = value

    def _tool_call(self, call: dict[str, Any]) -> list[WireEvent]:
        slot = self._slot(call)
        function = call.get("function") or {}
        out: list[WireEvent] = []
        if slot not in self.calls:
            self.calls[slot] = [call.get("id") or f"call_{slot}", function.get("name", ""), ""]
            if not call.get("id"):
                self.unnamed.add(slot)
            out.append(ToolCallStart(self.calls[slot][0], self.calls[slot][1]))
        elif slot in self.unnamed and call.get("id") and isinstance(call["id"], str):
            out.extend(self._given_id(slot, call["id"]))
        state = self.calls[slot]
        if isinstance(call.get("extra_content"), dict):
            self.extras[state[0]] = {**self.extras.get(state[0], {}), **call["extra_content"]}
        if not state[1] and function.get("name"):  # a name sent after the call's first fragment:
            state[1] = function["name"]  # started again, named, so that what follows is shown named
            out.append(ToolCallStart(state[0], state[1]))
        arguments = function.get("arguments")
        if arguments and not isinstance(arguments, str):  # an object where JSON text belongs
            arguments = json.dumps(arguments, ensure_ascii=False)
        if arguments:
            state[2] += arguments
            if slot not in self.unnamed:
                out.append(ToolCallDelta(state[0], arguments))
        return out

    def _given_id(self, slot: int, call_id: str) -> list[WireEvent]:
        """The id of a call that started without one (its index and name first): the call is the
        server's from then on, and is answered under it (the made-up id would name no call). It is
        started again under it, with its arguments so far (held until now), so that all of them are
        shown under it."""
        state = self.calls[slot]
        made_up, state[0] = state[0], call_id
        self.unnamed.discard(slot)
        if made_up in self.extras:
            self.extras[call_id] = self.extras.pop(made_up)
        out: list[WireEvent] = [ToolCallStart(call_id, state[1])]
        if state[2]:
            out.append(ToolCallDelta(call_id, state[2]))
        return out

    def _slot(self, call: dict[str, Any]) -> int:
        """The call a tool-call fragment belongs to. By its `index`; without one (older Ollama), the
        call with its id, a new call for an id not seen yet, else (no id) the latest call. A fragment
        that starts another call where it would continue one (`_starts_another`) makes a new call."""
        call_id, index = call.get("id"), call.get("index")
        slot: int | None
        if isinstance(index, int):
            slot = self.slots.get(index)
        elif call_id:
            slot = next((at for at, state in self.calls.items() if state[0] == call_id), None)
        else:
            slot = max(self.calls, default=None)
        if slot is not None and _starts_another(self.calls[slot], call_id, call.get("function") or {}):
            slot = None
        if slot is None:
            slot = max(self.calls, default=-1) + 1
            if isinstance(index, int):
                self.slots[index] = slot
        return slot

    def _finish_reason(self, raw: str, *, said: bool = True) -> list[WireEvent]:
        if raw == "error":  # Mistral (and others): the generation broke off on the server's side
            self.finished = True
            message = f'the provider ended the answer {self.where} with finish_reason "error"'
            return [Failure(message, retryable=True)]
        reason = CHAT_STOPS.get(raw, "other")
        self.stop = (
            "content_filter" if self.refused and reason == "end_turn" else reason,
            raw if said else None,
        )
        self.finished = True
        out: list[WireEvent] = self.inline.flush()
        if self.inline.written:
            out.append(self._kept(INLINE_THINKING, SECRETS.redact(self.inline.written)))
            self.inline = InlineThinking()
        if self.reasoning_content:
            text, self.reasoning_content = SECRETS.redact("".join(self.reasoning_content)), []
            out.append(self._kept(REASONING_CONTENT, text))
        if self.thinking_parts:
            text, self.thinking_parts = SECRETS.redact("".join(self.thinking_parts)), []
            out.append(self._kept(THINKING_PARTS, text))
        if self.details:
            details, self.details = SECRETS.redact_json(self.details), []
            out.append(self._kept(REASONING_DETAILS, details))
        if self.extras:
            out.append(self._kept(CALL_EXTRAS, self.extras))
            self.extras = {}
        for slot, (call_id, name, raw_args) in self.calls.items():
            if slot in self.unnamed and raw_args:  # never named by the server: shown under `call_N`
                out.append(ToolCallDelta(call_id, raw_args))
            arguments, error = parse_arguments(raw_args)
            out.append(ToolCallEnd(call_id, name, arguments, raw_args, error))
        self.calls.clear()
        self.unnamed.clear()
        return out

    def _kept(self, key: str, value: Any) -> OpaqueItem:
        """An opaque item to send back, tagged with the server that gave it (`ORIGIN`)."""
        return OpaqueItem(Opaque(WIRE, {key: value, ORIGIN: self.origin}))

    def _error(self, error: Any) -> Failure:
        """An error the server reported in its stream (or answer): retried when its code is a status
        that is (an int, or digits as text: LiteLLM) or its code or type names a passing trouble."""
        self.finished = True
        message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
        code = error.get("code") if isinstance(error, dict) else None
        kind = error.get("type") if isinstance(error, dict) else None
        status = int(code) if isinstance(code, str) and code.isdigit() else code
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        passing = status in RETRYABLE_STATUSES or bool({str(code), str(kind)} & PASSING_ERRORS)
        return Failure(f"the provider reported an error {self.where}: {message}", status, retryable=passing)

    def done(self) -> list[WireEvent]:
        if self.stop is None and not self.finished:  # `[DONE]` with no finish_reason (some servers, mocks)
            return self._finish_reason("tool_calls" if self.calls else "stop", said=False) + self._stop()
        return self._stop()

    def finish(self) -> list[WireEvent]:
        return self._stop() if self.stop else super().finish()

    def as_stream(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A `chat.completion` as the one chunk that carries all of it (its message as the delta)."""
        if "error" in body or body.get("object") == "error":
            return [("", body)]  # reported as the same error mid-stream
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return []  # not a completion: nothing to read
        choice = choices[0]
        found = choice.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        delta: dict[str, Any] = {}
        for key in ("reasoning_content", "reasoning", "content", "refusal"):
            text = _text_of(message.get(key))
            if text:
                delta[key] = text
        if _thinking_parts(message.get("content")):  # the content's parts as they are, thinking kept
            delta["content"] = message["content"]
        calls = [
            {
                "index": index,
                "id": call.get("id"),
                "function": call.get("function") or {},
                **({"extra_content": call["extra_content"]} if "extra_content" in call else {}),
            }
            for index, call in enumerate(message.get("tool_calls") or ())
            if isinstance(call, dict)
        ]
        if calls:
            delta["tool_calls"] = calls
        if isinstance(message.get("function_call"), dict):
            delta["function_call"] = message["function_call"]
        if isinstance(message.get(REASONING_DETAILS), list):
            delta[REASONING_DETAILS] = message[REASONING_DETAILS]
        finish = choice.get("finish_reason") or (
            "tool_calls" if calls or "function_call" in delta else "stop"
        )
        chunk: dict[str, Any] = {
            "model": body.get("model"),
            "choices": [{"delta": delta, "finish_reason": finish}],
        }
        if body.get("usage"):
            chunk["usage"] = body["usage"]
        return [("", chunk)]

    def _stop(self) -> list[WireEvent]:
        if self.stop is None:
            return []
        reason, raw = self.stop
        self.stop = None
        return [Stop(reason, raw, self.model)]


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class InlineThinking:
    """Reasoning a model writes in its content, `<think>…</think>` before its answer (DeepSeek-R1,
    Qwen3 and others on a server without a reasoning parser: older Ollama, llama.cpp, LM Studio): given
    as reasoning, the rest as text. Content that does not open with the tag is text as it comes; a
    tag split across chunks is held until it is whole. What it wrote before the text is kept to be
    sent back as written (MiniMax asks for its thinking to stay in the history)."""

    def __init__(self) -> None:
        self.state = "start"
        """start (nothing but blanks yet), thinking, after (the tag closed), or text."""
        self.held = ""
        self.thought = False
        self.raw: list[str] = []
        """The content as written before the answer's text: the tags, the reasoning, the blanks."""

    @property
    def written(self) -> str:
        """The content before the answer's text as the model wrote it, when it thought in tags."""
        return "".join(self.raw) if self.thought else ""

    def feed(self, text: str) -> list[WireEvent]:
        if self.state == "text":
            return [TextDelta(text)]
        out = self._read(text)
        shown = sum(len(e.text) for e in out if isinstance(e, TextDelta))  # the chunk's end, once thought
        self.raw.append(text[: max(len(text) - shown, 0)])
        return out

    def _read(self, text: str) -> list[WireEvent]:
        if self.state == "after":  # the blanks between the closing tag and the answer are dropped
            text = text.lstrip()
            if text:
                self.state = "text"
            return [TextDelta(text)] if text else []
        self.held += text
        if self.state == "start":
            lead = self.held.lstrip()
            if lead.startswith(THINK_OPEN):
                self.state, self.held = "thinking", lead[len(THINK_OPEN) :].lstrip("\n")
                self.thought = True
            elif THINK_OPEN.startswith(lead):  # blanks, or the tag's first characters
                return []
            else:
                self.state, held, self.held = "text", self.held, ""
                return [TextDelta(held)]
        end = self.held.find(THINK_CLOSE)
        if end >= 0:
            reasoning, rest = self.held[:end], self.held[end + len(THINK_CLOSE) :]
            self.state, self.held = "after", ""
            return ([ReasoningDelta(reasoning)] if reasoning else []) + self._read(rest)
        keep = next((n for n in range(len(THINK_CLOSE) - 1, 0, -1) if self.held.endswith(THINK_CLOSE[:n])), 0)
        reasoning, self.held = self.held[: len(self.held) - keep], self.held[len(self.held) - keep :]
        return [ReasoningDelta(reasoning)] if reasoning else []

    def flush(self) -> list[WireEvent]:
        """What is held when the answer ends: reasoning never closed, or text that began like the tag."""
        held, self.held = self.held, ""
        if not held:
            return []
        return [ReasoningDelta(held) if self.state == "thinking" else TextDelta(held)]


def _starts_another(state: list[str], call_id: Any, function: dict[str, Any]) -> bool:
    """Whether a fragment sent under a call's index (or, without one, after the latest call) starts
    another call: servers that give every call index 0 (Ollama) or none, each call whole in a chunk.
    It does when the call's arguments are already a whole JSON object and the fragment brings its own,
    under another id or (no id) a name; a fragment repeating the call's id continues it."""
    if call_id and call_id == state[0]:
        return False
    arguments = function.get("arguments")
    if not (call_id or function.get("name")) or not arguments or not str(arguments).strip():
        return False
    return bool(state[2].strip()) and parse_arguments(state[2])[1] is None


def _detail_text(detail: dict[str, Any]) -> str:
    """The readable reasoning of a reasoning detail: its text, or its summary (none when encrypted)."""
    found = detail.get("text") if detail.get("type") == "reasoning.text" else detail.get("summary")
    return found if isinstance(found, str) else ""


def _thinking_parts(content: Any) -> str:
    """The reasoning in a content given as parts: Mistral's thinking models stream `thinking` parts
    (`{"type": "thinking", "thinking": [text parts]}`) before their `text` parts."""
    if not isinstance(content, list):
        return ""
    return "".join(
        _text_of(p.get("thinking")) for p in content if isinstance(p, dict) and p.get("type") == "thinking"
    )


def _text_of(value: Any) -> str:
    """A message field's text: a string, or the text of a list of content parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
