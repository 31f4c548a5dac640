"""The README's table of keys and docs/tui.md name every key, slash command and alias the app's help lists
(harnez/tui/commands.py), each where it describes that screen: a key or command the app gained without
the docs saying so is found only by reading the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harnez.tui.commands import ALIASES, APPROVAL_KEYS, COMMANDS, KEYS, PICKER_KEYS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_KEYS = README.split("## Keys (full-screen app)", 1)[1].split("\n## ", 1)[0]
TUI = (ROOT / "docs" / "tui.md").read_text(encoding="utf-8")


def _readme_row(label: str) -> str:
    """The README keys table's row that starts with `label` (the approval prompt's, the picker's)."""
    found = re.search(rf"^\| {re.escape(label)}.*$", README_KEYS, re.M)
    assert found, f"the README's keys table lost its '{label}' row"
    return found.group(0)


def _tui_section(heading: str) -> str:
    """The text under docs/tui.md's `## heading`, up to the next section."""
    assert f"\n## {heading}\n" in TUI, f"docs/tui.md lost its section '{heading}'"
    return TUI.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _names(keys: str) -> list[str]:
    """The single keys of one entry: 'Up / Down, PgUp / PgDn' is four."""
    return [name.strip() for name in re.split(r",| / | or ", keys) if name.strip()]


PLACES = {
    "README, session screen": lambda: (KEYS, README_KEYS),
    "README, picker": lambda: (PICKER_KEYS, _readme_row("picker:")),
    "README, approval prompt": lambda: (APPROVAL_KEYS, _readme_row("approval prompt:")),
    "tui.md, session screen": lambda: (KEYS, TUI),
    "tui.md, picker": lambda: (PICKER_KEYS, _tui_section("Resume picker")),
    "tui.md, approval prompt": lambda: (APPROVAL_KEYS, _tui_section("Approval prompt")),
}


@pytest.mark.parametrize("place", PLACES)
def test_every_key_the_help_lists_is_in_the_docs(place: str) -> None:
    keys, text = PLACES[place]()
    missing = [name for entry, _ in keys for name in _names(entry) if name not in text]
    assert not missing, f"{place}: {missing} not named"


@pytest.mark.parametrize("place", ["README", "tui.md"], ids=["README keys table", "tui.md 'Slash commands'"])
def test_every_slash_command_and_alias_is_in_the_docs(place: str) -> None:
    text = README_KEYS if place == "README" else _tui_section("Slash commands")
    names = [command.name for command in COMMANDS] + list(ALIASES)
    missing = [f"/{name}" for name in names if f"`/{name}" not in text]
    assert not missing, f"{place}: {missing} not named"


def test_the_readme_names_the_commands_refused_during_a_task() -> None:
    refused = [f"`/{command.name}`" for command in COMMANDS if not command.during_task]
    sentence = ", ".join(refused[:-1]) + f" and {refused[-1]} are refused while"
    assert sentence in _readme_row("`/session-name"), f"the slash commands row should say: {sentence} …"
