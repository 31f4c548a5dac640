"""docs/events.md and harnez/events.py agree: every kind documented with an example that parses into
its class with exactly the class's fields, and every warning code in the table."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from harnez.events import BODIES, ENVELOPE, KINDS, WARNING_CODES, StoredEvent, UnknownEvent

DOC = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()
EXAMPLES = {
    json.loads(line)["kind"]: json.loads(line) for line in DOC.splitlines() if line.startswith('{"kind":')
}


def test_every_kind_has_an_example_and_every_example_is_a_kind() -> None:
    assert set(EXAMPLES) == set(KINDS), (
        sorted(set(KINDS) - set(EXAMPLES)),
        sorted(set(EXAMPLES) - set(KINDS)),
    )


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_the_example_parses_into_its_class_with_exactly_its_fields(kind: str) -> None:
    example = EXAMPLES[kind]
    event = StoredEvent.from_json(example)
    assert type(event.body) is BODIES[kind] and not isinstance(event.body, UnknownEvent)
    documented = [key for key in example if key not in ENVELOPE]
    assert documented == [f.name for f in dataclasses.fields(BODIES[kind])]
    assert list(example)[: len(ENVELOPE)] == list(ENVELOPE)
    assert event.to_json() == {**example, "time": round(example["time"], 6)}


def test_every_warning_code_is_in_the_table() -> None:
    table = DOC.split("## Warning codes", 1)[1]
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", table, re.M))
    assert set(WARNING_CODES) == documented, sorted(set(WARNING_CODES) ^ documented)


def test_events_stored_by_an_older_harnez_read_with_the_one_field_name() -> None:
    old = StoredEvent.from_json(
        {
            "kind": "approval-required",
            "session": "s",
            "seq": 3,
            "task": 1,
            "time": 0,
            "call_id": "c1",
            "tool": "shell",
            "arguments": {"command": "ls"},
        }
    )
    assert old.body == BODIES["approval-required"](call_id="c1", name="shell", arguments={"command": "ls"})


def test_an_unknown_kind_is_kept_verbatim_not_refused() -> None:
    event = StoredEvent.from_json(
        {"kind": "from-the-future", "session": "s", "seq": 1, "task": None, "time": 1.5, "anything": [1, 2]}
    )
    assert isinstance(event.body, UnknownEvent) and event.kind == "from-the-future"
    assert event.to_json() == {
        "kind": "from-the-future",
        "session": "s",
        "seq": 1,
        "task": None,
        "time": 1.5,
        "anything": [1, 2],
    }
