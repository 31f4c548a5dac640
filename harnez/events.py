"""The event vocabulary: every kind a session's log can hold, and the event records themselves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harnez.text import json_line

KINDS: dict[str, str] = {
    # conversation
    "user-message": "A prompt the person submitted (mode: prompt, queued or steering).",
    "prompt-queued": "A prompt typed while a task runs; it starts its own task afterwards.",
    "steering-delivered": "A steering message handed to the running task at its next model turn.",
    "shell-line": "A `!command` the person ran directly; not sent to the model.",
    # lifecycle
    "started": "A task began: model, wire, tools published, tools withheld.",
    "turn-started": "A model turn began (turn number).",
    "turn-completed": "A model turn ended (stop reason); its text is the text-deltas since turn-started.",
    "finished": "A task ended: stop (completed, cancelled, failed, incomplete, interrupted), turns, error.",
    # streaming
    "text-delta": "Assistant text as it streamed (coalesced into chunks of at most ~40 ms).",
    "reasoning-delta": "Reasoning text as it streamed.",
    "tool-arguments-delta": "A fragment of a tool call's JSON arguments.",
    # tools
    "tool-requested": "The model asked for a tool call (call id, tool, arguments).",
    "approval-required": "A tool call waits for the person's answer.",
    "approval-resolved": "The answer: allow once, allow for the session, or deny (with a reason).",
    "tool-completed": "A tool call's result: content for the model, details for the UI, error flag.",
    # accounting
    "usage": "Tokens of one model call: input, output, cache read/write, reasoning (null = not reported).",
    "cost": "Cost of one model call in US dollars; null for an unpriced model, never zero.",
    # recovery
    "turn-retried": "A model call is retried: discard the deltas since its turn-started.",
    "compacted": "Older context was elided or summarised (tokens before and after).",
    "warning": "Something went wrong but the work goes on (a stable code and a message).",
    "error": "Something failed (a message the person can act on).",
    # session
    "title-changed": "The session's title changed (title, source: keywords, model, excerpt or user).",
    "model-changed": "The session's model selection changed.",
}

WARNING_CODES: dict[str, str] = {
    "unpublished-tool": "The model called a tool that was not offered; nothing ran.",
    "conversation-compacted": "The conversation was compacted to fit the model's window.",
    "summary-failed": "Compaction could not summarise; the elided form is kept.",
    "nothing-to-compact": "`/compact` found nothing to shorten; the conversation is unchanged.",
    "unpriced-model": "The model has no rate in the rate card; its cost is unknown.",
    "unknown-stream-event": "The provider sent a stream item Harnez does not know; it is kept in the event.",
    "malformed-sse-line": "The provider sent a line that is not valid SSE; it was skipped.",
    "malformed-sse-data": "The provider sent an SSE event whose data is not valid JSON; it was skipped.",
    "title-failed": "Automatic naming failed; the fallback title stays.",
    "opaque-items-dropped": "Switching wire dropped provider-specific items from the history.",
    "invalid-settings": "A settings value is invalid; a default is used instead.",
    "truncated-for-window": "A tool call's arguments were cut in the conversation to fit the model's window.",
}


@dataclass(frozen=True, slots=True)
class Event:
    """An event before it is stored: the server assigns its sequence number."""

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    task: int | None = None
    search_text: str | None = None
    """Text to add to the full-text index with this event (not stored in the payload)."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Unknown event kind {self.kind!r}; add it to harnez.events.KINDS and docs/events.md.")


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event with its place in the session's log."""

    session: str
    seq: int
    kind: str
    payload: dict[str, Any]
    task: int | None
    time: float

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines form: kind, session, seq, task, time, then the payload's fields."""
        return {"kind": self.kind, "session": self.session, "seq": self.seq, "task": self.task,
                "time": round(self.time, 6), **self.payload}

    def dumps(self) -> str:
        """One line of JSON, safe to print (`harnez.text.json_line`)."""
        return json_line(self.to_json())


def warning(code: str, message: str, task: int | None = None, **extra: Any) -> Event:
    """A `warning` event with a stable code."""
    if code not in WARNING_CODES:
        raise ValueError(f"Unknown warning code {code!r}; add it to harnez.events.WARNING_CODES.")
    return Event("warning", {"code": code, "message": message, **extra}, task=task)
