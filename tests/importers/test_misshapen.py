"""Records that parse as JSON but not in the shape their harness writes are counted, never a crash.

Other harnesses change their formats between versions: a field that was a string becomes an object,
a key disappears. A reader must read the rest of the session and count such a record with the
unparsable ones (or, with `--strict`, name its line).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harnez.errors import HarnezError, SessionFormatError
from harnez.importers import Readers, detect
from tests.importers.conftest import FIXTURES
from tests.importers.test_formats import write_jsonl

ODD_VALUES: list[Any] = [None, 7, -1.5, "", "x", [], {}, True, ["a", 1], {"a": None}]


def _claude_records() -> list[dict[str, Any]]:
    base = {"sessionId": "s-1", "cwd": "/w", "version": "2.1.0"}
    return [
        {**base, "type": "user", "uuid": "u1", "timestamp": "2026-09-01T10:00:00.000Z",
         "message": {"role": "user", "content": "first question"}},
        {**base, "type": ["assistant"], "uuid": "a0", "timestamp": "2026-09-01T10:00:01.000Z"},
        {**base, "type": "assistant", "uuid": "a1", "timestamp": "",
         "message": {"id": "m1", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": "an answer"}]}},
        {**base, "type": "user", "uuid": "u2", "timestamp": "2026-09-01T10:00:03.000Z",
         "message": {"role": "user", "content": "second question"}},
    ]  # fmt: skip


def test_a_misshapen_claude_code_record_is_counted_and_the_rest_is_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s-1.jsonl", _claude_records())
    with Readers() as readers:
        [ref] = readers.refs_for(path, "claude-code")
        [summary] = readers["claude-code"].summarize(ref)
    figures = summary.to_json()
    assert figures["user_messages"] == 2 and figures["model_calls"] == 1
    assert figures["integrity"]["unparsed_records"] == 1
    assert summary.info.integrity.unparsed_lines == [2]


def test_strict_names_the_line_of_a_misshapen_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s-1.jsonl", _claude_records())
    with Readers() as readers, pytest.raises(SessionFormatError, match=r"Line 2 of .*--strict"):
        [ref] = readers.refs_for(path, "claude-code")
        readers["claude-code"].summarize(ref, strict=True)


def _places(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if at:
        yield at
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        yield from _places(child, (*at, key))


def _mutated(record: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The record with one value, anywhere in it, removed or replaced by a value of another type."""
    record = copy.deepcopy(record)
    places = list(_places(record))
    if not places:
        return record
    *route, last = rng.choice(places)
    parent: Any = record
    for key in route:
        parent = parent[key]
    if isinstance(parent, dict) and rng.random() < 0.5:
        del parent[last]
    else:
        parent[last] = rng.choice(ODD_VALUES)
    return record


def _session_files() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(path for path in FIXTURES.rglob("*.jsonl") if detect(path) is not None)


@pytest.mark.parametrize("source", _session_files(), ids=lambda path: str(path.relative_to(FIXTURES)))
def test_no_fixture_crashes_the_reader_when_its_records_change_shape(source: Path, tmp_path: Path) -> None:
    harness = detect(source)
    assert harness is not None
    lines = source.read_bytes().splitlines()
    rng = random.Random(source.name)
    for trial in range(6):
        changed = 0
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                out.append(line.decode("utf-8", "replace"))
                continue
            if isinstance(record, dict) and rng.random() < 0.2:
                record, changed = _mutated(record, rng), changed + 1
            out.append(json.dumps(record))
        path = tmp_path / f"{trial}-{source.name}"
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
        with Readers() as readers:
            try:
                for ref in readers.refs_for(path, harness):
                    sessions = readers[harness].read(ref)
                    summaries = readers[harness].summarize(ref)
            except HarnezError:
                continue  # a clear refusal (e.g. the header lost its id) is allowed; a crash is not
        unparsed = summaries[0].info.integrity.unparsed_records
        assert len(sessions) == len(summaries) and unparsed <= changed + _unparsable(lines)


def _unparsable(lines: list[bytes]) -> int:
    count = 0
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            count += 1
    return count
