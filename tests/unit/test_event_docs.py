"""Every event kind and warning code is documented in docs/events.md, with an example line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harnez.events import KINDS, WARNING_CODES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()


def test_every_kind_has_a_parsable_example() -> None:
    examples = {}
    for line in DOC.splitlines():
        if line.startswith('{"kind":'):
            example = json.loads(line)
            examples[example["kind"]] = example
    assert set(KINDS) <= set(examples), sorted(set(KINDS) - set(examples))
    for example in examples.values():
        assert {"kind", "session", "seq", "task", "time"} <= set(example)


def test_every_warning_code_is_in_the_table() -> None:
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", DOC, re.M))
    assert set(WARNING_CODES) <= documented, sorted(set(WARNING_CODES) - documented)
