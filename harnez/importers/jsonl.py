"""Streaming JSON Lines: one record at a time, unparsable records counted, a cut-off last line told apart."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from harnez.errors import SessionFormatError
from harnez.importers.normalized import Integrity

UNPARSED_LINES_KEPT = 20
MAX_RECORD_BYTES = 16 * 1024 * 1024
"""The longest line read as a record (16 MiB: a harness's record with a few screenshots in it). A longer
line is skipped unread, a piece at a time, and counted (`Integrity.oversized`): a 300 MB one-line file
took 922 MB of memory to parse whole."""
SKIP_PIECE = 1024 * 1024
"""Bytes read at a time while skipping an over-long line."""


class TooLong:
    """An over-long line, skipped: its size in bytes (newline included)."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size


def capped_lines(handle: BinaryIO, limit: int = MAX_RECORD_BYTES) -> Iterator[bytes | TooLong]:
    """The lines of a binary file, each at most `limit` bytes; a longer one is read past in pieces
    (memory stays bounded whatever the file) and given as `TooLong`."""
    readline = handle.readline
    while line := readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while (piece := readline(SKIP_PIECE)) and not piece.endswith(b"\n"):
            size += len(piece)
        yield TooLong(size + len(piece))


SURROGATE = re.compile("[\ud800-\udfff]")


def lenient(line: bytes) -> Any:
    """A line orjson refuses that is still JSON: a lone surrogate escape (`\\ud83d`, what JavaScript's
    `JSON.stringify` writes for half of an emoji cut off by a harness's truncation). Parsed by the
    standard library, each half character replaced by U+FFFD (it cannot be stored as UTF-8); None
    when the line is not JSON."""
    if b"\\u" not in line:
        return None
    try:
        return mend(json.loads(line))
    except (ValueError, RecursionError):
        return None


def mend(value: Any) -> Any:
    """A parsed JSON value with lone surrogates in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        if SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [mend(item) for item in value]
    if isinstance(value, dict):
        return {mend(key): mend(item) for key, item in value.items()}
    return value


def parse_line(line: bytes) -> Any:
    """One JSON value from a line (None when it is not one).

    orjson, not the standard library: on the 500 MB rollout benchmark json.loads alone parses
    about 55-70 MB/s on one core, below the 50 MB/s the whole summary must reach; orjson parses
    about 2.5x faster (docs/performance.md).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return lenient(line)


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
            for number, line in enumerate(capped_lines(handle), 1):
                if isinstance(line, TooLong):
                    count += 1
                    _oversized(path, number, line, integrity, strict)
                    continue
                try:
                    record = loads(line)
                except failure:
                    record = lenient(line)
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


def _oversized(path: Path, number: int, line: TooLong, integrity: Integrity, strict: bool) -> None:
    """A line too long to read as a record: skipped, counted as unparsed and as oversized."""
    if strict:
        raise SessionFormatError(
            f"Line {number} of {path} is {line.size:,} bytes, longer than the {MAX_RECORD_BYTES:,} "
            "bytes Harnez reads as one record; run without --strict to skip and count such records."
        )
    integrity.oversized.append((number, line.size))
    _unparsed(path, number, integrity, strict)


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
            for line in capped_lines(handle):
                record = parse_line(line) if isinstance(line, bytes) else None
                if isinstance(record, dict):
                    found.append(record)
                    if len(found) >= count:
                        break
    except OSError:
        return []
    return found
