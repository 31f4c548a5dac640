"""The options tables of docs/headless.md (`harnez run`) and docs/uhp.md (`harnez serve`) name every
option the command line takes: an option added to the parser but not to the table is found only by
`--help`."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harnez.cli import _parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _options(command: str) -> set[str]:
    """The long options of `harnez <command>` (`--help` left out)."""
    (commands,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    parser = commands.choices[command]
    return {name for action in parser._actions for name in action.option_strings if name.startswith("--")} - {
        "--help"
    }


def _table(doc: str) -> str:
    """The page's table headed `| option | meaning |`, up to the first line after it that is no row."""
    text = (DOCS / doc).read_text(encoding="utf-8").split("| option | meaning |\n", 1)[1]
    return text.split("\n\n", 1)[0]


@pytest.mark.parametrize(("command", "doc"), [("run", "headless.md"), ("serve", "uhp.md")])
def test_every_option_is_in_the_options_table(command: str, doc: str) -> None:
    table = _table(doc)
    missing = sorted(name for name in _options(command) if f"`{name}" not in table)
    assert not missing, f"docs/{doc}'s options table does not name {missing} of harnez {command}"
