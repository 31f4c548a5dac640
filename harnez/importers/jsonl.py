"""Streaming JSON Lines: one record at a time, unparsable records counted, a cut-off last line told apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from harnez.errors import SessionFormatError
from harnez.importers.normalized import Integrity

UNPARSED_LINES_KEPT = 20


def parse_line(line: bytes) -> Any:
    """One JSON value from a line (None when it is not one).

    orjson, not the standard library: on the 500 MB rollout benchmark json.loads alone parses
    about 55-70 MB/s on one core, below the 50 MB/s the whole summary must reach; orjson parses
    about 2.5x faster (docs/performance.md).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def records(path: Path, integrity: Integrity, *, strict: bool = False) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, in order, read line by line (constant memory).

    A line that is not a JSON object is counted in `integrity.unparsed_records` and skipped (with
    `strict`, it is an error). The last line, when it has no newline and does not parse, is a torn
    tail — a record the harness was still writing — and never an error. Blank lines are not records.
    """
    loads, failure = orjson.loads, orjson.JSONDecodeError
    count = 0
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    record = loads(line)
                except failure:
                    record = None
                if record.__class__ is dict:
                    count += 1
                    integrity.line = number
                    yield record
                    continue
                if line.isspace():
                    continue
                count += 1
                if not line.endswith(b"\n"):
                    integrity.torn_tail = True
                    return
                _unparsed(path, number, integrity, strict)
    finally:
        integrity.records += count


MISSHAPEN = (TypeError, ValueError, AttributeError, IndexError, KeyError, LookupError)
"""What reading a record of an unexpected shape raises (a list where the harness writes a string…)."""


def misshapen(path: Path, integrity: Integrity, strict: bool, error: Exception) -> None:
    """A record that parsed but is not in the shape its harness writes: counted like an unparsable
    one (what it had added before the surprise stays), or with `strict` an error naming the line."""
    if strict:
        raise SessionFormatError(
            f"Line {integrity.line} of {path} is a JSON object Harnez cannot read ({error!r}); "
            "run without --strict to skip and count such records."
        ) from error
    _unparsed(path, integrity.line, integrity, strict)


def _unparsed(path: Path, number: int, integrity: Integrity, strict: bool) -> None:
    if strict:
        raise SessionFormatError(
            f"Line {number} of {path} is not a JSON object; "
            "run without --strict to skip and count such records."
        )
    integrity.unparsed_records += 1
    if len(integrity.unparsed_lines) < UNPARSED_LINES_KEPT:
        integrity.unparsed_lines.append(number)


def first_records(path: Path, count: int = 5) -> list[dict[str, Any]]:
    """The first few JSON objects of a file (to recognise its format); unreadable lines are skipped."""
    found: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as handle:
            for line in handle:
                record = parse_line(line)
                if isinstance(record, dict):
                    found.append(record)
                    if len(found) >= count:
                        break
    except OSError:
        return []
    return found
