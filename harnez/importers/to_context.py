"""A normalized session as Harnez context records: the conversation a new prompt continues, on any wire.

Prompts and `context` messages become user items, assistant turns assistant items (their provider
items kept as opaque items of their wire — replayed on that wire, dropped with the
`opaque-items-dropped` warning on another), tool results tool items. A compaction with a summary
becomes a `compaction` record, so the continued conversation starts from the summary (and, for pi,
the entries it kept), like Harnez's own compactions; the full history stays in the records before it.
For pi, only the path to the last entry is continued (abandoned branches are left out).
"""

from __future__ import annotations

from typing import Any

from harnez.importers.normalized import PROMPTS, AssistantTurn, Compaction, Session, ToolResult, UserMessage
from harnez.importers.to_events import arguments
from harnez.wires.conversation import AssistantMessage, Opaque, ToolCall
from harnez.wires.conversation import ToolResult as ResultItem
from harnez.wires.conversation import UserMessage as UserItem

COMPACTION_ROLE = "compaction"
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"

ContextRecord = tuple[str, int | None, dict[str, Any], str | None]
"""(role, task index, item, wire) — as `harnez.store.imports.ImportRecord.context` takes them."""


def context_records(session: Session) -> list[ContextRecord]:
    """The session's context records, oldest first; `task` counts prompts as the events do."""
    records: list[ContextRecord] = []
    kept: list[tuple[str | None, ContextRecord]] = []
    """Items since the start, with the entry they came from (a pi compaction keeps a tail of them)."""
    path, task = session.info.active_path, None
    for entry in session.entries:
        if isinstance(entry, UserMessage) and entry.kind in PROMPTS:
            task = (task or 0) + 1
        source = getattr(entry, "source_id", None)
        if path is not None and source is not None and source not in path:
            continue
        if isinstance(entry, Compaction):
            if entry.summary:
                records.append(_compaction(entry, kept, task))
            continue
        record = _record(entry, task)
        if record is not None:
            records.append(record)
            kept.append((source, record))
    return records


def _record(entry: Any, task: int | None) -> ContextRecord | None:
    if isinstance(entry, UserMessage) and entry.kind != "meta":
        return "user", task, UserItem(entry.shown_text).to_json(), None
    if isinstance(entry, AssistantTurn):
        calls = tuple(ToolCall(call.id, call.name, arguments(call)) for call in entry.tool_calls)
        opaque = tuple(Opaque(wire, item) for wire, item in entry.opaque)
        if not (entry.text or calls or opaque):
            return None
        wire = opaque[0].wire if opaque else None
        return "assistant", task, AssistantMessage(entry.text, entry.reasoning, calls, opaque).to_json(), wire
    if isinstance(entry, ToolResult):
        return "tool", task, ResultItem(entry.call_id, entry.content, entry.is_error).to_json(), None
    return None


def _compaction(
    entry: Compaction, kept: list[tuple[str | None, ContextRecord]], task: int | None
) -> ContextRecord:
    items = [UserItem(SUMMARY_PREFIX + str(entry.summary)).to_json()]
    if entry.kept_from is not None:
        start = next((i for i, (source, _) in enumerate(kept) if source == entry.kept_from), len(kept))
        items += [record[2] for _, record in kept[start:]]
    body = {
        "type": COMPACTION_ROLE,
        "items": items,
        "summarised": True,
        "imported": True,
        "before_tokens": entry.tokens_before,
    }
    return COMPACTION_ROLE, task, body, None
