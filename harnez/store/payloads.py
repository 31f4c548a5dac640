"""Event payloads as stored: compact JSON text, or zlib-compressed JSON bytes when large; credentials masked."""

from __future__ import annotations

import json
import zlib
from typing import Any

from harnez.redaction import SECRETS

COMPRESS_FROM = 256
"""Payloads of at least this many bytes (tool output, diffs, folded answers) are stored zlib-compressed."""


def masked(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every known credential masked (harnez.redaction); the same object when none."""
    return SECRETS.redact_json(payload) if SECRETS.holds_secret(dumps(payload)) else payload


def dumps(payload: dict[str, Any]) -> str:
    """Compact JSON, as stored."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def encode(payload: dict[str, Any]) -> str | bytes:
    """A payload as stored (credentials already masked)."""
    return packed(dumps(payload))


def packed(text: str) -> str | bytes:
    """Compact JSON text as stored: zlib-compressed bytes when large and worth it."""
    if len(text) < COMPRESS_FROM:
        return text
    squeezed = zlib.compress(text.encode(), 6)
    return squeezed if len(squeezed) < len(text) else text


def stored_payload(payload: dict[str, Any]) -> tuple[str | bytes, dict[str, Any]]:
    """A payload as stored, and the payload itself, with every known credential masked (the JSON is
    made once when there is nothing to mask: this runs for every streamed delta)."""
    text = dumps(payload)
    if SECRETS.holds_secret(text):
        payload = SECRETS.redact_json(payload)
        text = dumps(payload)
    return packed(text), payload


def loads(stored: str | bytes) -> dict[str, Any]:
    """The payload stored by `encode`."""
    return json.loads(zlib.decompress(stored) if isinstance(stored, bytes) else stored)
