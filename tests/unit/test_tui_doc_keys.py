"""docs/tui.md names every key the app's help lists (harnez/tui/commands.py) where it describes that
screen, and every slash command and alias in its section on them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harnez.tui.commands import ALIASES, APPROVAL_KEYS, COMMANDS, KEYS, PICKER_KEYS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tui.md").read_text(encoding="utf-8")


def _section(heading: str) -> str:
    """The text under `## heading`, up to the next section."""
    assert f"\n## {heading}\n" in DOC, f"docs/tui.md lost its section '{heading}'"
    return DOC.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _names(keys: str) -> list[str]:
    """The single keys of one entry: 'Up / Down, PgUp / PgDn' is four."""
    return [name.strip() for name in re.split(r",| / | or ", keys) if name.strip()]


@pytest.mark.parametrize(
    ("keys", "heading"),
    [(KEYS, None), (PICKER_KEYS, "Resume picker"), (APPROVAL_KEYS, "Approval prompt")],
    ids=["session screen", "picker", "approval prompt"],
)
def test_every_key_the_help_lists_is_in_the_docs(
    keys: tuple[tuple[str, str], ...], heading: str | None
) -> None:
    text = _section(heading) if heading else DOC
    missing = [name for entry, _ in keys for name in _names(entry) if name not in text]
    assert not missing, f"docs/tui.md does not name {missing}" + (f" under '{heading}'" if heading else "")


def test_every_slash_command_and_alias_is_in_the_docs() -> None:
    text = _section("Slash commands")
    missing = [f"/{name}" for name in [c.name for c in COMMANDS] + list(ALIASES) if f"`/{name}" not in text]
    assert not missing, f"docs/tui.md's 'Slash commands' does not name {missing}"
