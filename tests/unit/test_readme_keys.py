"""The README's table of keys names every key, slash command and alias the app has (harnez/tui/commands.py):
a key or command the app gained without the README saying so is found only by reading the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harnez.tui.commands import ALIASES, APPROVAL_KEYS, COMMANDS, KEYS, PICKER_KEYS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
TABLE = README.split("## Keys (full-screen app)", 1)[1].split("\n## ", 1)[0]


def _row(label: str) -> str:
    """The table's row that starts with `label` (the approval prompt's, the picker's)."""
    found = re.search(rf"^\| {re.escape(label)}.*$", TABLE, re.M)
    assert found, f"the README's keys table lost its '{label}' row"
    return found.group(0)


def _names(keys: str) -> list[str]:
    """The single keys of one entry: 'Up / Down, PgUp / PgDn' is four."""
    return [name.strip() for name in re.split(r",| / | or ", keys) if name.strip()]


@pytest.mark.parametrize(
    ("keys", "where"),
    [(KEYS, None), (PICKER_KEYS, "picker:"), (APPROVAL_KEYS, "approval prompt:")],
    ids=["session screen", "picker", "approval prompt"],
)
def test_every_key_the_help_lists_is_in_the_readme(
    keys: tuple[tuple[str, str], ...], where: str | None
) -> None:
    text = _row(where) if where else TABLE
    missing = [name for entry, _ in keys for name in _names(entry) if name not in text]
    assert not missing, f"README.md's keys table does not name {missing}"


def test_every_slash_command_and_alias_is_in_the_readme() -> None:
    named = set(re.findall(r"`/([a-z-]+)", TABLE))
    missing = sorted({command.name for command in COMMANDS} - named) + sorted(set(ALIASES) - named)
    assert not missing, f"README.md's keys table does not name /{', /'.join(missing)}"


def test_the_readme_names_the_commands_refused_during_a_task() -> None:
    refused = [f"`/{command.name}`" for command in COMMANDS if not command.during_task]
    row = _row("`/session-name")
    sentence = ", ".join(refused[:-1]) + f" and {refused[-1]} are refused while"
    assert sentence in row, f"the slash commands row should say: {sentence} …"
