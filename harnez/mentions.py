"""The `@path` syntax of prompts: where a prompt names a file of the workspace (attached for the
model by `harnez.agent.attachments`, named by its file name in a keyword title)."""

from __future__ import annotations

import re

MENTION = re.compile(r'(?<![\w@])@(?:"([^"\n]+)"|((?:\\ |\S)+))')
"""`@` at the start or after a non-word character (so `me@host` is no mention), then the path: in
double quotes when it holds spaces (`@"My Notes.md"`, what completion inserts), or with each space
escaped (`@My\\ Notes.md`, as a shell writes it), else up to the next space."""
TRAILING = ".,;:!?)]}'\""
"""Punctuation that usually ends a sentence rather than a path (`see @a.py.`)."""


def mentioned(match: re.Match[str]) -> str:
    """The path a `MENTION` match names, as typed (quotes and escapes removed)."""
    quoted, bare = match.group(1), match.group(2)
    return quoted if quoted is not None else bare.replace("\\ ", " ")


def path_like(text: str) -> bool:
    """Whether a mention reads as a path (`@src/a.py`, `@notes.md`), not a bare word (`@dataclass`,
    `@alice`)."""
    return "/" in text or "." in text
