"""Properties of the shell command splitter the permission rules rely on: every simple command of a
compound line comes back, quotes keep separators literal, substitutions become commands of their own."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from harnez.tools.permissions import split_command

PROPERTY = settings(max_examples=200, deadline=None, database=None)

word = st.text(alphabet=string.ascii_letters + string.digits + "-_./=:,+%@", min_size=1, max_size=8)
simple_command = st.lists(word, min_size=1, max_size=4).map(" ".join)
separator = st.sampled_from([";", "&&", "||", "|", "|&", "&", "\n"])
spaces = st.sampled_from(["", " ", "  ", "\t"])
SEPARATORS = ";|&()<>\n`$"


@st.composite
def compound(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A line of simple commands joined by separators (with or without spaces), and those commands."""
    commands = draw(st.lists(simple_command, min_size=1, max_size=5))
    line = commands[0]
    for command in commands[1:]:
        line += draw(spaces) + draw(separator) + draw(spaces) + command
    return line, commands


@PROPERTY
@given(compound())
def test_every_simple_command_of_a_joined_line_comes_back_in_order(case: tuple[str, list[str]]) -> None:
    line, commands = case
    assert split_command(line) == commands


@PROPERTY
@given(simple_command, st.text(alphabet=st.characters(blacklist_characters="'"), max_size=20))
def test_single_quotes_keep_every_separator_literal(command: str, quoted: str) -> None:
    line = f"{command} '{quoted}'"
    assert split_command(line) == [line]


@PROPERTY
@given(simple_command, st.text(alphabet=st.characters(blacklist_characters='"\\$`'), max_size=20))
def test_double_quotes_keep_separators_literal(command: str, quoted: str) -> None:
    line = f'{command} "{quoted}"'
    assert split_command(line) == [line]


@PROPERTY
@given(simple_command, compound(), st.sampled_from(["$({})", '"$({})"', "`{}`", '"`{}`"', "<({})", ">({})"]))
def test_a_substitution_becomes_commands_of_its_own(
    outer: str, inner: tuple[str, list[str]], form: str
) -> None:
    inner_line, inner_commands = inner
    line = f"{outer} {form.format(inner_line)}"
    left = '""' if form.startswith('"') else ""
    assert split_command(line) == [*inner_commands, f"{outer} {left}".strip()]


@PROPERTY
@given(simple_command, st.sampled_from(["2>&1", ">&2", "&>log.txt", "&>>log.txt", "1>&2", "<&3"]))
def test_redirections_with_an_ampersand_do_not_split(command: str, redirection: str) -> None:
    line = f"{command} {redirection}"
    assert split_command(line) == [line]


@PROPERTY
@given(st.text(alphabet=st.sampled_from(string.ascii_lowercase + " '\"\\" + SEPARATORS), max_size=40))
def test_any_line_splits_into_trimmed_non_empty_commands_without_failing(line: str) -> None:
    parts = split_command(line)
    assert all(part and part == part.strip() for part in parts)
    assert sum(not c.isspace() for c in "".join(parts)) <= sum(not c.isspace() for c in line)
