"""`@path` attachments: the files a prompt names, appended to the text the model receives."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from harnez.mentions import MENTION, TRAILING, mentioned, path_like
from harnez.tools.base import resolve_path
from harnez.tools.files import SNIFF_BYTES, looks_binary

FILE_CAP_BYTES = 64 * 1024
"""At most this much of one attached file is sent; the rest is cut with a note."""
TOTAL_CAP_BYTES = 256 * 1024
"""At most this much attached text per prompt; files beyond it are left out with a note."""
MAX_FILES = 20
"""At most this many distinct `@` mentions are looked at per prompt."""


@dataclass(slots=True)
class _Budget:
    left: int = TOTAL_CAP_BYTES


def mentions(prompt: str) -> list[str]:
    """The `@` paths of a prompt, in order of first mention, each once (raw, as typed)."""
    found: list[str] = []
    for match in MENTION.finditer(prompt):
        raw = mentioned(match)
        if raw not in found:
            found.append(raw)
    return found[:MAX_FILES]


def expand_attachments(prompt: str, workspace: Path) -> str:
    """The prompt followed by a `<file path="…">` block per `@path` naming a file of the workspace.

    Binary files, directories, paths outside the workspace and missing path-like mentions
    (`@src/gone.py`) get a self-closing block with a `skipped` reason instead, so the model knows what
    the person pointed at; a missing bare word (`@dataclass`, `@alice`) is no path and is left alone.
    Each file is cut at FILE_CAP_BYTES, the whole at TOTAL_CAP_BYTES. A prompt without attachments
    is returned unchanged.
    """
    raws = mentions(prompt)
    if not raws:
        return prompt
    budget = _Budget()
    seen: set[str] = set()
    blocks: list[str] = []
    for raw in raws:
        path, shown = _locate(raw, Path(workspace))
        if shown in seen:
            continue
        seen.add(shown)
        if block := _attach(path, shown, budget):
            blocks.append(block)
    return prompt + "\n\n" + "\n\n".join(blocks) if blocks else prompt


def _attach(path: Path | None, shown: str, budget: _Budget) -> str | None:
    if path is None:
        return _skipped(shown, "outside the workspace: not attached")
    if not path.exists():
        # A bare word (`@dataclass`, `@alice`) is no path: only path-like mentions get a note.
        return _skipped(shown, "no such file in the workspace") if path_like(shown) else None
    if path.is_dir():
        return _skipped(shown, "a directory: not attached (name a file)")
    if not path.is_file():
        return _skipped(shown, "not a regular file: not attached")
    if budget.left <= 0:
        return _skipped(shown, f"over the {TOTAL_CAP_BYTES // 1024} KiB attachment limit of one prompt")
    return _read(path, shown, budget)


def _locate(raw: str, workspace: Path) -> tuple[Path | None, str]:
    """The resolved file of a mention (None when outside the workspace) and how it is shown.

    Trailing punctuation is dropped unless the path with it exists (`see @notes.md.`).
    """
    stripped = raw.rstrip(TRAILING) or raw
    target = resolve_path(workspace, raw)
    if not target.path.exists():
        target, raw = resolve_path(workspace, stripped), stripped
    return (target.path if target.inside else None), (target.display(workspace) if target.inside else raw)


def _read(path: Path, shown: str, budget: _Budget) -> str:
    size = path.stat().st_size
    cap = min(FILE_CAP_BYTES, budget.left)
    with path.open("rb") as handle:
        data = handle.read(cap)
    if looks_binary(data[:SNIFF_BYTES]):
        return _skipped(shown, f"a binary file ({size} bytes): not attached")
    budget.left -= len(data)
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    cut = f' truncated="first {len(data)} of {size} bytes"' if size > len(data) else ""
    return f'<file path="{escape(shown)}"{cut}>\n{text}\n</file>'


def _skipped(shown: str, reason: str) -> str:
    return f'<file path="{escape(shown)}" skipped="{escape(reason)}"/>'
