"""Prompt completion: `/` command names and `@` workspace files, in a small menu above the prompt."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from textual import work
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from harnez.tui.commands import COMMANDS

SCAN_LIMIT = 5000
"""At most this many workspace files are offered for `@` completion (the scan stops there)."""
SHOWN_LIMIT = 50
"""At most this many candidates are listed at once."""

Kind = Literal["command", "file"]


@dataclass(frozen=True, slots=True)
class Token:
    """The word being completed: its kind, its place on its line, and what follows the `/` or `@`."""

    kind: Kind
    row: int
    start: int
    end: int
    query: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """One completion: the text it inserts (without the trailing space) and a short help."""

    value: str
    help: str = ""


def token_at(line: str, row: int, column: int) -> Token | None:
    """The `/command` (only at the very start of the prompt) or `@path` word ending at the cursor; an
    `@"…` path being typed inside quotes spans its spaces (up to its closing quote, when typed)."""
    quoted = _quoted_token(line, row, column)
    if quoted is not None:
        return quoted
    start = column
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    end = column
    while end < len(line) and not line[end].isspace():
        end += 1
    word = line[start:column]
    if word.startswith("/") and row == 0 and start == 0:
        return Token("command", row, start, end, word[1:])
    if word.startswith("@"):
        return Token("file", row, start, end, word[1:])
    return None


def _quoted_token(line: str, row: int, column: int) -> Token | None:
    opening = line.rfind('@"', 0, column)
    if opening < 0 or (opening > 0 and not line[opening - 1].isspace()) or '"' in line[opening + 2 : column]:
        return None  # no `@"` before the cursor, or it is part of a word, or already closed
    end = column + 1 if line[column : column + 1] == '"' else column
    return Token("file", row, opening, end, line[opening + 2 : column])


def mention(path: str) -> str:
    """How a path is written after `@` in a prompt: in double quotes when it holds a space."""
    return f'@"{path}"' if any(char.isspace() for char in path) else "@" + path


def command_candidates(query: str) -> list[Candidate]:
    """Commands whose name starts with the query, then those that merely contain it."""
    query = query.lower()
    starts = [c for c in COMMANDS if c.name.startswith(query)]
    contains = [c for c in COMMANDS if query in c.name and c not in starts]
    return [Candidate("/" + c.name, c.help) for c in starts + contains]


def scan_workspace(root: Path, limit: int = SCAN_LIMIT) -> list[str]:
    """Relative POSIX paths of the workspace's files in path order, as the glob and grep tools see them
    (`harnez.workspace`: git's view in a work tree, else a walk honouring `.gitignore`). Imported
    here, in the scan's thread: pathspec is not needed for the first frame."""
    from harnez.workspace import list_workspace

    return list_workspace(root, limit=limit, directories=False).files


def _is_subsequence(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True


def file_candidates(files: list[str], query: str, limit: int = SHOWN_LIMIT) -> list[Candidate]:
    """Files matching the query: path prefix first, then name prefix, substring, then fuzzy (in order)."""
    query = query.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in files:
        lowered = path.lower()
        if lowered.startswith(query):
            rank = 0
        elif lowered.rsplit("/", 1)[-1].startswith(query):
            rank = 1
        elif query in lowered:
            rank = 2
        elif _is_subsequence(query, lowered):
            rank = 3
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [Candidate(mention(path)) for _, _, path in ranked[:limit]]


class CompletionMenu(OptionList, can_focus=False):
    """The completions of the word at the prompt's cursor; the prompt keeps the focus and drives it."""

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 10;
        margin: 0 1;
        border: round $primary 50%;
        background: $panel;
        padding: 0 1;
    }
    CompletionMenu.-open { display: block; }
    """

    class Chosen(Message):
        """The person clicked a completion."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.workspace: Path | None = None
        """The session's workspace, whose files `@` offers (set by the screen)."""
        self.files: list[str] | None = None
        """The workspace's files once scanned (None before): scanned once per screen."""
        self.candidates: list[Candidate] = []
        """What the menu lists, in order."""
        self._wanted: tuple[Kind, str] | None = None
        self._scanning = False

    @property
    def is_open(self) -> bool:
        """Whether the menu is shown (it then takes Up, Down, Tab, Enter and Esc)."""
        return self.has_class("-open")

    @property
    def chosen(self) -> Candidate | None:
        """The highlighted completion, if the menu is open."""
        index = self.highlighted
        if not self.is_open or index is None or index >= len(self.candidates):
            return None
        return self.candidates[index]

    def complete(self, kind: Kind, query: str) -> None:
        """List the completions of a `/` or `@` word; closes when there are none."""
        self._wanted = (kind, query)
        if kind == "command":
            self._show(command_candidates(query))
        elif self.files is not None:
            self._show(file_candidates(self.files, query))
        else:
            self._show([])
            if self.workspace is not None and not self._scanning:
                self._scanning = True
                self.scan_files(self.workspace)

    @property
    def wanted(self) -> tuple[Kind, str] | None:
        """The word the menu lists completions of: its kind and query (None when closed)."""
        return self._wanted

    def close(self) -> None:
        """Hide the menu."""
        self._wanted = None
        self._show([])

    def move(self, step: int) -> None:
        """Move the highlight up (-1) or down (+1), wrapping around."""
        if self.candidates:
            index = self.highlighted or 0
            self.highlighted = (index + step) % len(self.candidates)

    def _show(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.clear_options()
        if candidates:
            self.add_options([Option(self._label(c)) for c in candidates])
            self.highlighted = 0
        self.set_class(bool(candidates), "-open")

    @staticmethod
    def _label(candidate: Candidate) -> Content:
        if not candidate.help:
            return Content(candidate.value)
        return Content.assemble((candidate.value, "bold"), ("  " + candidate.help, "dim"))

    @work(group="scan-files")
    async def scan_files(self, root: Path) -> None:
        """Scan the workspace in a thread (once per screen), then show the `@` completions still wanted."""
        try:
            self.files = await asyncio.to_thread(scan_workspace, root)
        finally:
            self._scanning = False
        if self._wanted is not None and self._wanted[0] == "file":
            self.complete(*self._wanted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.highlighted = event.option_index
        self.post_message(self.Chosen())
