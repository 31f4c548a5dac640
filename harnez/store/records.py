"""Context record bodies: JSON compressed against the preset dictionary, credentials masked; text shared with events by reference.

A finished task's records keep no second copy of text its events hold: a prompt, an answer or a tool
result whose text is exactly that of the task's user-message, folded text-delta or tool-completed
event stores `{"event": seq}` in its place (`share_plan`), and reads put the text back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harnez.redaction import SECRETS
from harnez.store.payloads import loads, squeeze, unsqueeze

SHARED = {
    "user": ("user-message", "text"),
    "assistant": ("text-delta", "text"),
    "tool_result": ("tool-completed", "content"),
}
"""Item type → the event kind that holds the same text, and the field holding it in both."""

REFERENCE = "event"
"""The key of the object that stands in for a shared text: the seq of the event holding it."""


def pack(item: dict[str, Any]) -> bytes:
    """JSON, compressed: context records are read rarely, and are mostly text or (once shared) small
    envelopes whose keys the preset dictionary holds (harnez/store/payloads.py).

    Known credentials are masked first (harnez.redaction): nothing stored may hold a key.
    """
    text = _dumps(item)
    if SECRETS.holds_secret(text):
        text = _dumps(SECRETS.redact_json(item))
    return squeeze(text.encode())


def _dumps(item: dict[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def unpack(body: bytes) -> dict[str, Any]:
    """The item stored by `pack` (or, before 0010, JSON then zlib)."""
    return json.loads(unsqueeze(body))


def reference(item: dict[str, Any]) -> int | None:
    """The seq of the event holding the item's text, when it is shared."""
    shared = SHARED.get(item.get("type", ""))
    value = item.get(shared[1]) if shared else None
    return int(value[REFERENCE]) if isinstance(value, dict) and REFERENCE in value else None


def event_text(kind: str, payload: dict[str, Any]) -> str:
    """The text an event of a kind in `SHARED` holds, from its stored payload."""
    field = next(field for event_kind, field in SHARED.values() if event_kind == kind)
    return str(payload.get(field, ""))


def share_plan(records: Iterable[Any], events: Iterable[Any]) -> list[tuple[bytes, int]]:
    """(body, id) of each record whose text is exactly one of the events' (`seq, kind, payload` rows of
    its task), rewritten to point at that event."""
    holding: dict[tuple[str, str], int] = {}
    for seq, kind, payload in events:
        holding.setdefault((kind, event_text(kind, loads(payload))), seq)
    updates = []
    for record_id, body in records:
        item = unpack(body)
        shared = SHARED.get(item.get("type", ""))
        if shared is None or not isinstance(text := item.get(shared[1]), str) or not text:
            continue
        seq = holding.get((shared[0], text))
        if seq is not None:
            updates.append((pack({**item, shared[1]: {REFERENCE: seq}}), record_id))
    return updates
