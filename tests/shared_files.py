"""The files shared beside the repository (`../shared`, as CI lays it out): the UHP reference.

A checkout on its own (no `../shared`) still runs every test; what needs the reference says so by
skipping (`require_uhp_schema`), and the validation of responses against the schema is then left out.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
UHP_SCHEMA = SHARED / "reference" / "uhp-2026-08-11" / "uhp-2026-08-11.schema.json"


@cache
def uhp_schema() -> dict[str, Any] | None:
    """The UHP JSON Schema, or None when `../shared` is not beside this checkout."""
    return json.loads(UHP_SCHEMA.read_text()) if UHP_SCHEMA.is_file() else None


def require_uhp_schema() -> dict[str, Any]:
    """The schema, or skip the test that needs it (saying where it was looked for)."""
    schema = uhp_schema()
    if schema is None:
        pytest.skip(f"the UHP JSON Schema is not at {UHP_SCHEMA} (../shared beside the repository)")
    return schema


def validate_uhp(instance: Any, definition: str) -> None:
    """Fail unless `instance` matches `$defs/<definition>` of the UHP schema (when the schema is there)."""
    schema = uhp_schema()
    if schema is not None:
        jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{definition}"}).validate(instance)
