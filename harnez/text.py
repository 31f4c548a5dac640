"""Text hygiene at Harnez's edges: lone surrogates replaced before text is kept, control
characters escaped before text reaches a terminal.

Two kinds of text are unsafe:

- a **lone surrogate** (`\\udcff`): what Python makes of invalid UTF-8 from argv or a file name, or of
  a `\\udcff` escape in a provider's JSON. It is not Unicode: SQLite and UTF-8 output refuse it.
  `valid_text` replaces each with U+FFFD (the replacement character) where text enters Harnez.
- **control characters**: `ESC ]0;…BEL` retitles the terminal, `ESC [2J` clears it, U+202E
  reverses what follows. `printable` shows them as escapes (`\\x1b`) in everything Harnez prints;
  `json_line` keeps JSON Lines output free of the ones JSON itself leaves raw.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidirectional formatting characters: they reorder the text that follows on screen."""
_UNSAFE_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
"""What `printable` escapes in multi-line text: controls but tab and newline, bidi, surrogates."""
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
"""What `printable` escapes in one-line text (titles, paths): tab and newline too."""
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]")
"""What `json.dumps(ensure_ascii=False)` leaves raw but a terminal may act on (it escapes C0), and the
line and paragraph separators, which line readers such as Python's `str.splitlines` break lines at."""
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def valid_text(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD, in a string or inside JSON-like data."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {valid_text(key): valid_text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(valid_text(item) for item in value)
    return value


def printable(text: str, *, one_line: bool = False) -> str:
    """Text safe to write to a terminal: control, bidi and surrogate characters shown as escapes.

    Tabs and newlines stay (CRLF becomes a newline) unless `one_line`, where they are escaped
    too, so a title or a path can never break the line it is printed on.
    """
    if not one_line and "\r\n" in text:
        text = text.replace("\r\n", "\n")
    unsafe = _UNSAFE_LINE if one_line else _UNSAFE_LINES
    return unsafe.sub(_escape, text) if unsafe.search(text) else text


def sentence(text: str) -> str:
    """`text` ending as a sentence: a full stop added unless it already ends with `.`, `?`, `!` or `…`.

    For joining a reason someone else wrote ("not now", "…is the base_url right?") into a message.
    """
    text = text.rstrip()
    return text if not text or text[-1] in ".?!…" else text + "."


def printable_data(value: Any) -> Any:
    """`printable` applied to every string inside JSON-like data (an event's payload, for display)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {key: printable_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_data(item) for item in value)
    return value


def json_line(value: Any) -> str:
    """One line of compact JSON, non-ASCII text kept readable and nothing a terminal acts on left raw."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # The characters escaped here only ever occur inside JSON strings, where `\\uXXXX` means the same.
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
