"""Inputs measured against the model's window: a prompt that cannot fit is refused before it is
sent, tool-call arguments too large to keep are cut in the conversation with a warning.

Compaction (`compaction.py`) shortens a conversation that grew; it cannot shorten one item that
alone fills the window. Without these checks such an item was summarised away with the rest — the
model answered a summary of the prompt, not the prompt.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from harnez.agent.compaction import THRESHOLD, estimate_tokens
from harnez.wires import AssistantMessage, ResolvedModel, ToolCall, UserMessage

ARGUMENTS_SHARE = 0.25
"""One tool call's arguments may take this share of the window in the conversation. It is below
compaction's verbatim tail (30 %), so the newest call can always be kept as it was."""
CUT_NOTE = "[… {cut} characters cut here to fit the model's window; the tool received them all]"


def prompt_room(model: ResolvedModel, system: str, overhead_tokens: int) -> int:
    """Tokens a prompt may take: the window up to compaction's threshold, less the system prompt
    and the tools' schemas (`overhead_tokens`)."""
    return int(model.spec.context_window * THRESHOLD) - overhead_tokens - estimate_tokens(system, [])


def prompt_refusal(model: ResolvedModel, prompt: str, room: int) -> str | None:
    """Why the prompt cannot be sent, or None when it fits in `room` tokens (see `prompt_room`)."""
    needed = estimate_tokens("", [UserMessage(prompt)])
    if needed <= room:
        return None
    return (
        f"The prompt is about {needed:,} tokens (attached files included, estimated at 4 characters a "
        f"token), more than the {max(room, 0):,} that {model.provider}/{model.model}'s window of "
        f"{model.spec.context_window:,} tokens leaves for it, so it was not sent. Shorten it or attach "
        "less, or choose a model with a larger window."
    )


def fit_tool_calls(message: AssistantMessage, window: int) -> tuple[AssistantMessage, list[str]]:
    """The message with each tool call's arguments cut to ARGUMENTS_SHARE of the window, and a
    warning for each call that was cut. The tools run with the arguments as the model sent them."""
    budget = int(window * ARGUMENTS_SHARE) * 4
    calls, warnings = [], []
    for call in message.tool_calls:
        size = _size(call.arguments)
        if size <= budget:
            calls.append(call)
            continue
        calls.append(ToolCall(call.id, call.name, _cut(call.arguments, budget)))
        warnings.append(
            f"The arguments of the {call.name} call {call.id} are about {size // 4:,} tokens, more than a "
            f"quarter of the model's window ({window:,} tokens); the conversation keeps them cut to about "
            f"{budget // 4:,} tokens. The tool received them whole."
        )
    return (replace(message, tool_calls=tuple(calls)) if warnings else message), warnings


def _size(value: Any) -> int:
    """Characters of the JSON text of a value, as the conversation stores and sends it."""
    return len(json.dumps(value, ensure_ascii=False))


def _cut(arguments: dict[str, Any], budget: int) -> dict[str, Any]:
    """A copy of the arguments whose longest strings are shortened (keeping their start, with a
    note) until their JSON fits in `budget` characters, or nothing long is left to cut."""
    cut = json.loads(json.dumps(arguments))
    done: set[tuple[int, Any]] = set()
    while (excess := _size(cut) - budget) > 0:
        holder, key, text = _longest_string(cut, done)
        if holder is None or len(text) <= 2 * len(CUT_NOTE):
            break  # what is left is structure and short values
        done.add((id(holder), key))
        holder[key] = _shortened(text, _size(text) - excess)
    return cut


def _shortened(text: str, room: int) -> str:
    """The longest start of `text` that, with the note saying how much was cut, takes at most
    `room` characters of JSON (or only the note, when even that does not fit)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if _size(_with_note(text, middle)) <= room:
            low = middle
        else:
            high = middle - 1
    return _with_note(text, low)


def _with_note(text: str, keep: int) -> str:
    return text[:keep] + CUT_NOTE.format(cut=f"{len(text) - keep:,}")


def _longest_string(value: Any, skip: set[tuple[int, Any]]) -> tuple[Any, Any, str]:
    """(container, key, text) of the longest string inside JSON-like data, leaving out the
    (container id, key) pairs in `skip`; (None, None, "") when there is none."""
    best: tuple[Any, Any, str] = (None, None, "")
    stack = [value]
    while stack:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in pairs:
            if isinstance(item, str) and len(item) > len(best[2]) and (id(node), key) not in skip:
                best = (node, key, item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return best
