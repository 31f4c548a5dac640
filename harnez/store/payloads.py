"""Event payloads as stored: compact JSON text, or compressed JSON bytes when smaller; credentials masked.

Compressed bytes say how they were made by their first byte: `\\x01` is raw deflate against the preset
dictionary `DICTIONARY_V1` (since migration 0010, small payloads too: their JSON keys and common
values are in the dictionary, so a 190-byte `started` envelope takes about 6); `\\x78` is a plain zlib
stream, as written before. Both are read forever; a new dictionary gets a new first byte.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from harnez.redaction import SECRETS

COMPRESS_FROM = 256
"""Payloads of kinds in `TEXT_KINDS` are stored compressed only from this many bytes on."""

TEXT_KINDS = frozenset({"usage", "cost", "text-delta", "reasoning-delta", "tool-arguments-delta"})
"""Kinds kept as JSON text when small: `usage` and `cost` are summed by SQLite's JSON functions
(`EventLog.usage_sums`), and a streamed delta lives only until its turn's run is folded (and
compressed) into one row, so compressing it on the way in would be work thrown away."""

DICTIONARY_V1_TAG = b"\x01"
"""The first byte of a payload compressed against `DICTIONARY_V1`."""

DICTIONARY_V1 = "".join(
    (
        '{"command":"","output":"","exit_code":null,"duration":null,"timed_out":false,"cancelled":false,',
        '"shared":false}{"call_id":"","name":null,"delta":""}{"call_id":"","name":"","arguments":{},',
        '"reason":"","diff":null}{"call_id":"","name":"","verdict":"allow","reason":null,"by":"user",',
        '"grant":null}{"turn":1,"attempt":1,"delay":1.0,"reason":""}{"before_tokens":null,',
        '"after_tokens":null,"summarised":true}{"code":"","message":"","call_id":null,"raw":null}',
        '{"message":""}{"model":""}{"call_id":"","answer":null}{"message":"","forced":false}{"hook":"",',
        '"command":"","exit_code":0,"decision":"allow","reason":null,"context":null,"duration":null,',
        '"call_id":null}{"hook":"","command":"","message":"","exit_code":null,"timed_out":false,',
        '"call_id":null}{"limit":"","command":"","reason":null}{"call_id":"","agent":"","child":"",',
        '"model":null,"tools":[]}{"call_id":"","agent":"","child":"","text":"","is_error":false}',
        '{"call_id":"","agent":"","child":"","stop":"completed","turns":1,"error":null,"input":0,',
        '"output":0,"usd":null,"calls":1,"reported":1,"unpriced":false}{"model":"","source":null,',
        '"key":null,"input":null,"output":null,"cache_read":null,"cache_write":null,"tiers":[],',
        '"card":null}{"call_id":"","program":"","declared":[],"reason":""}{"text":"","mode":"steering"}',
        '{"type":"tool_result","call_id":"call_","content":"","is_error":false}{"type":"user","text":"',
        '"tool_calls":[{"id":"call_","name":"shell","arguments":{"command":""}}],"opaque":[{"wire":"',
        '"item":{"type":"reasoning","id":"","summary":[],"encrypted_content":""}}]}',
        '{"type":"assistant","text":{"event":1},"reasoning":"","tool_calls":[],"opaque":[]}',
        '{"type":"tool_result","call_id":"","content":{"event":1},"is_error":false}',
        '{"type":"user","text":{"event":1}}{"title":"","source":"keywords"}{"title":"","source":"model"}',
        '{"call_id":"call_","name":"read","arguments":{"path":""}}{"call_id":"call_","name":"edit",',
        '"arguments":{"path":"","old":"","new":""}}{"call_id":"call_","name":"write","arguments":',
        '{"path":"","content":""}}{"call_id":"call_","name":"grep","arguments":{"pattern":""}}',
        '{"call_id":"call_","name":"glob","arguments":{"pattern":""}}{"call_id":"call_","name":"list",',
        '"arguments":{"path":"."}}{"call_id":"call_","name":"shell","arguments":{"command":""}}',
        '{"call_id":"call_","name":"shell","content":"","details":{"exit_code":0,"timed_out":false},',
        '"is_error":false,"cancelled":false}{"call_id":"call_","name":"read","content":"","details":{"lines":',
        '1},"is_error":false,"cancelled":false}{"turn":1}{"usd":0.0}{"usd":null}{"turn":1,"stop_reason":',
        '"tool_use"}{"turn":1,"stop_reason":"stop"}{"turn":1,"stop_reason":"end_turn"}{"stop":"cancelled",',
        '"turns":1,"error":null}{"stop":"completed","turns":1,"error":null}{"input":1000,"output":100,',
        '"cache_read":null,"cache_write":null,"reasoning":null,"model":""}{"model":"anthropic/claude-',
        '","wire":"anthropic-messages","thinking":null,"tools":["read","write","edit","list","glob","grep",',
        '"shell"],"withheld":[],"context_window":200000,"base_url":"https://api.anthropic.com","operations":',
        '["read","edit","search","execute"],"skills":[],"agents":[]}{"model":"openai/gpt-","wire":',
        '"openai-chat","thinking":null,"tools":["read","write","edit","list","glob","grep","shell"],',
        '"withheld":[],"context_window":400000,"base_url":"https://api.openai.com/v1","operations":["read",',
        '"edit","search","execute"],"skills":[],"agents":[]}{"model":"openai/gpt-5","wire":',
        '"openai-responses","thinking":null,"tools":["read","edit","shell"],"withheld":[],"context_window":',
        '400000,"base_url":null,"operations":[],"skills":[],"agents":[]}{"text":" the ","fold":[]}',
        '{"text":"","mode":"prompt"}',
    )
).encode()
"""Stored payloads and context records of the first dictionary compress against these bytes: the event
vocabulary's envelopes (built from `harnez.events` of schema version 10, the kinds that every task writes
last, where matches cost least) and the context items' keys. Never edit it: rows written with it
could no longer be read (tests/unit/store/test_payloads.py pins its digest); add a `DICTIONARY_V2`
with its own first byte instead."""


def squeeze(data: bytes) -> bytes:
    """`data` compressed against the preset dictionary, tagged with its first byte."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY_V1)
    return DICTIONARY_V1_TAG + deflate.compress(data) + deflate.flush()


def unsqueeze(stored: bytes) -> bytes:
    """The bytes `squeeze` (or, before 0010, `zlib.compress`) was given."""
    if stored[:1] == DICTIONARY_V1_TAG:
        inflate = zlib.decompressobj(-15, DICTIONARY_V1)
        return inflate.decompress(stored[1:]) + inflate.flush()
    return zlib.decompress(stored)


def masked(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every known credential masked (harnez.redaction); the same object when none."""
    return SECRETS.redact_json(payload) if SECRETS.holds_secret(dumps(payload)) else payload


def dumps(payload: dict[str, Any]) -> str:
    """Compact JSON, as stored."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def encode(payload: dict[str, Any]) -> str | bytes:
    """A payload as stored, compressed when that is smaller (credentials already masked)."""
    return packed(dumps(payload))


def packed(text: str, small_as_text: bool = False) -> str | bytes:
    """Compact JSON text as stored: compressed when that is smaller (with `small_as_text`, only from
    `COMPRESS_FROM` bytes on)."""
    if small_as_text and len(text) < COMPRESS_FROM:
        return text
    data = text.encode()
    squeezed = squeeze(data)
    return squeezed if len(squeezed) < len(data) else text


def stored_payload(payload: dict[str, Any], kind: str) -> tuple[str | bytes, dict[str, Any]]:
    """A payload of a kind as stored, and the payload itself, with every known credential masked (the
    JSON is made once when there is nothing to mask: this runs for every streamed delta)."""
    text = dumps(payload)
    if SECRETS.holds_secret(text):
        payload = SECRETS.redact_json(payload)
        text = dumps(payload)
    return packed(text, kind in TEXT_KINDS), payload


def loads(stored: str | bytes) -> dict[str, Any]:
    """The payload stored by `encode`."""
    return json.loads(unsqueeze(stored) if isinstance(stored, bytes) else stored)
