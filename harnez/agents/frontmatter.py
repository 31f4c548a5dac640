"""The front matter of an agent file: `key: value` lines and lists between two `---` lines, then the body."""

from __future__ import annotations

import re

FieldValue = str | list[str]

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")
_ITEM = re.compile(r"^\s+-\s*(.*)$")


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message says where and what to write instead."""


def unquote(value: str) -> str:
    """A value without the one pair of matching quotes around it."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _flow_list(value: str, line: int) -> list[str]:
    """`[a, b, c]` as a list of its items."""
    if not value.endswith("]"):
        raise FrontMatterError(f"line {line}: a list opened with `[` must close with `]` on the same line")
    inner = value[1:-1].strip()
    return [unquote(item) for item in inner.split(",")] if inner else []


def _value(raw: str, line: int) -> FieldValue:
    value = raw.strip()
    return _flow_list(value, line) if value.startswith("[") else unquote(value)


def split_front_matter(text: str) -> tuple[dict[str, FieldValue], str]:
    """The fields of the front matter and the body after it.

    Reads the small subset of YAML agent files use: `key: value`, quoted values, `key: [a, b]`, and a
    key with nothing after the colon followed by `  - item` lines. Anything else is refused with the
    line it is on, never guessed at.
    """
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError("it does not start with a front matter: make its first line `---`")
    fields: dict[str, FieldValue] = {}
    listing: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields, "\n".join(lines[number:]).strip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and listing is not None:
            value = fields[listing]
            assert isinstance(value, list)  # `listing` names a key opened for items
            value.append(unquote(item.group(1)))
            continue
        listing = _field(fields, line, number)
    raise FrontMatterError("the front matter never ends: add a `---` line after its last field")


def _field(fields: dict[str, FieldValue], line: str, number: int) -> str | None:
    """Read one `key: value` line into `fields`; the key when it opens a list of `- item` lines."""
    match = _KEY.match(line)
    if match is None:
        raise FrontMatterError(f"line {number}: expected `key: value`, found {line.strip()!r}")
    key, raw = match.group(1), match.group(2)
    if key in fields:
        raise FrontMatterError(f"line {number}: `{key}` is given twice; keep one")
    if raw.strip():
        fields[key] = _value(raw, number)
        return None
    fields[key] = []
    return key
