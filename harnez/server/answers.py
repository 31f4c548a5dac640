"""Structured answers for front ends: the `--output-schema` file read and checked before anything opens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnez.agent.answer import OutputSchema
from harnez.errors import HarnezError, UsageError


def load_output_schema(path: Path) -> dict[str, Any]:
    """The JSON Schema in `path`, checked against its draft; a UsageError (exit 2) says what is wrong."""
    where = f"The output schema {path}"
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte order mark is skipped, as for settings files
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"{where} cannot be read ({reason}); give --output-schema a JSON file.") from None
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. Fix the syntax there."
        ) from None
    try:
        OutputSchema.parse(schema, where)
    except HarnezError as exc:
        raise UsageError(exc.message) from None
    return schema
