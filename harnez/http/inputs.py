"""The body of `POST /v1/responses`, checked: input text, files (inline or by id), budgets, metadata."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from harnez.http.errors import ApiError

_DATA_URL = re.compile(
    r"^data:(?P<type>[^;,]*)(?P<params>(;[^;,]*)*?)(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL
)


@dataclass(slots=True)
class InlineFile:
    """A file sent inside the request as a data URL; `index` is its place in the stored input."""

    filename: str
    media_type: str
    content: bytes
    where: tuple[int, int]
    """(item, part) of the input part it came from, so the stored input can name it by id instead."""


@dataclass(slots=True)
class TaskInput:
    """What the task is given: text, files, and the input items as they will be stored."""

    text: str
    items: list[dict[str, Any]]
    inline: list[InlineFile] = field(default_factory=list)
    file_ids: list[str] = field(default_factory=list)
    instructions: list[str] = field(default_factory=list)
    """Text of `system` and `developer` messages: guidance, not the prompt."""


def parse_input(raw: Any) -> TaskInput:
    """A string, or a list of messages (or bare content parts), into text and files."""
    if isinstance(raw, str):
        if not raw.strip():
            raise ApiError.invalid("input is empty; send the work as text.", "input")
        return TaskInput(raw, [_message([{"type": "input_text", "text": raw}])])
    if not isinstance(raw, list) or not raw:
        raise ApiError.invalid("input must be a string or a non-empty list of input items.", "input")
    parsed = TaskInput("", [])
    texts: list[str] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ApiError.invalid("Each input item must be an object.", f"input[{index}]")
        if "role" not in item and "content" not in item:
            item = _message([item])  # a bare content part
        role = item.get("role", "user")
        if not isinstance(role, str):  # a role of no known name: its text was silently dropped
            raise ApiError.invalid(
                "A message's role must be text: user, system, developer or assistant.", f"input[{index}].role"
            )
        content = item.get("content")
        parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise ApiError.invalid(
                "A message's content must be text or a list of parts.", f"input[{index}].content"
            )
        stored = _message([], role)
        for number, part in enumerate(parts):
            stored["content"].append(_part(part, (index, number), role, parsed, texts))
        parsed.items.append(stored)
    parsed.text = "\n\n".join(texts)
    if not parsed.text.strip() and not parsed.inline and not parsed.file_ids:
        raise ApiError.invalid("input has no text and no file; send the work to do.", "input")
    return parsed


def _part(
    part: Any, where: tuple[int, int], role: str, parsed: TaskInput, texts: list[str]
) -> dict[str, Any]:
    param = f"input[{where[0]}].content[{where[1]}]"
    if not isinstance(part, dict):
        raise ApiError.invalid("Each content part must be an object.", param)
    kind = part.get("type")
    if kind in ("input_text", "text", "output_text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise ApiError.invalid("A text part needs `text`.", f"{param}.text")
        if role in ("system", "developer"):
            parsed.instructions.append(text)
        elif role == "user":
            texts.append(text)
        return {"type": "input_text", "text": text}
    if kind in ("input_file", "input_image"):
        return _file_part(part, kind, where, param, parsed)
    return dict(part)  # an item type this server does not understand is ignored, and kept as sent


def _file_part(
    part: dict[str, Any], kind: str, where: tuple[int, int], param: str, parsed: TaskInput
) -> dict[str, Any]:
    if isinstance(part.get("file_id"), str):
        parsed.file_ids.append(part["file_id"])
        return {"type": kind, "file_id": part["file_id"]}
    data = part.get("file_data") if kind == "input_file" else part.get("image_url")
    if isinstance(data, dict):  # {"url": "data:…"} as some clients send images
        data = data.get("url")
    if not isinstance(data, str) or not data.startswith("data:"):
        field_name = "file_data" if kind == "input_file" else "image_url"
        raise ApiError.invalid(
            f"An {kind} needs `file_id`, or `{field_name}` as a data URL (data:<type>;base64,…); "
            "other URLs are not fetched.",
            f"{param}.{field_name}",
        )
    media_type, content = decode_data_url(data, param)
    default = "image" if kind == "input_image" else "file"
    given = part.get("filename")
    if given is not None and not isinstance(given, str):
        raise ApiError.invalid("filename must be text (the file's name), or absent.", f"{param}.filename")
    filename = default if given is None else given
    parsed.inline.append(InlineFile(filename, media_type, content, where))
    return {"type": kind, "filename": filename}


def decode_data_url(url: str, param: str) -> tuple[str, bytes]:
    """(media type, bytes) of a `data:` URL."""
    match = _DATA_URL.match(url)
    if match is None:
        raise ApiError.invalid("The data URL is malformed; use data:<type>;base64,<data>.", param)
    data = match.group("data")
    if match.group("b64"):
        try:
            return match.group("type") or "application/octet-stream", base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError.invalid("The data URL's base64 is not valid.", param) from None
    from urllib.parse import unquote_to_bytes

    return match.group("type") or "text/plain", unquote_to_bytes(data)


def _message(content: list[dict[str, Any]], role: str = "user") -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def optional_int(body: dict[str, Any], name: str) -> int | None:
    """A whole number of at least 1, or None when absent or null."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ApiError.invalid(f"{name} must be a whole number of at least 1.", name)
    return value


def optional_flag(body: dict[str, Any], name: str) -> bool | None:
    """true or false, or None when absent or null (a "yes" or a 1 is refused: it may mean either)."""
    value = body.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise ApiError.invalid(f"{name} must be true or false.", name)


def check_lists(body: dict[str, Any]) -> None:
    """`tools` is a list of objects and `include` a list of text, when given (both are read, not
    applied: docs/uhp.md)."""
    for name, kind, said in (("tools", dict, "objects"), ("include", str, "text")):
        value = body.get(name)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, kind) for v in value)):
            raise ApiError.invalid(f"{name} must be a list of {said}.", name)


def optional_text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError.invalid(f"{name} must be text.", name)
    return value
