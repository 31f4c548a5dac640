"""`harnez read` (another harness's sessions as a summary, a transcript, or JSON; no database involved) and
the printing side of `harnez import` (progress, the report)."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from harnez.errors import SessionFormatError
from harnez.importers import Readers, SourceRef, check_harness, detect
from harnez.importers.importer import ImportReport
from harnez.importers.jsonl import MAX_RECORD_BYTES
from harnez.importers.normalized import (
    PROMPTS,
    AssistantTurn,
    Compaction,
    Entry,
    Notice,
    Reasoning,
    Session,
    Summary,
    Text,
    ToolCall,
    ToolResult,
    UserMessage,
)
from harnez.text import json_line, printable

RESULT_LINES = 12
"""Lines of a tool result a transcript shows (the JSON form keeps all)."""
OVERSIZED_SHOWN = 5
"""Over-long lines a summary names (all are counted in `unparsed`)."""


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """What `harnez read` was asked."""

    path: Path
    harness: str | None = None
    session: str | None = None
    summary: bool = False
    json: bool = False
    strict: bool = False


def read_command(request: ReadRequest, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Print the sessions found at a path; a bad file in a folder is reported and skipped."""
    check_harness(request.harness)
    shown = 0
    with Readers() as readers:
        refs = readers.refs_for(request.path, request.harness)
        single = len(refs) == 1 and request.path.is_file()
        for ref in refs:
            try:
                items = _items(readers, ref, request)
            except (OSError, SessionFormatError, ValueError, TypeError, KeyError, AttributeError) as exc:
                if single or request.strict:
                    raise SessionFormatError(f"Cannot read {ref.label}: {exc}") from exc
                print(printable(f"harnez: skipped {ref.label}: {exc}", one_line=True), file=err)
                continue
            if request.harness and _not_of_the_harness(ref, items):
                if single:
                    raise SessionFormatError(_why_not_of_the_harness(ref))
                continue  # in a folder walked with --harness: a file of another kind, as detection skips
            for item in items:
                if _wanted(item.info.session_id, item.info.agent_id, request.session):
                    _print(item, request, out)
                    shown += 1
    if shown == 0:
        what = f"no session {request.session!r}" if request.session else "no session"
        raise SessionFormatError(f"Found {what} at {request.path}.")
    return 0


def _items(readers: Readers, ref: SourceRef, request: ReadRequest) -> list[Summary] | list[Session]:
    reader = readers[ref.harness]
    if request.summary:
        return reader.summarize(ref, strict=request.strict)
    return reader.read(ref, strict=request.strict)


def _not_of_the_harness(ref: SourceRef, items: list[Summary] | list[Session]) -> bool:
    """Whether a file read as the harness `--harness` named is not one of its sessions: it is not
    recognised as that harness's, and reading gave nothing of it (no session id, not one prompt, model
    call, tool call, result or compaction). Any file of lines read that way was a session: `/etc/passwd`
    a "completed" codex session of 24 unparsed records, a Claude Code session an empty pi one, exit 0.
    A line too long to read may be the harness's: it is shown."""
    if ref.key is not None or detect(ref.path) == ref.harness:
        return False
    for item in items:
        figures = (item if isinstance(item, Summary) else item.summary()).to_json()
        found = figures["user_messages"] + figures["model_calls"] + figures["tool_calls"]
        found += figures["tool_results"] + figures["compactions"]
        if figures["session_id"] or found or figures["integrity"]["oversized_lines"]:
            return False
    return True


def _why_not_of_the_harness(ref: SourceRef) -> str:
    """Why a file named with `--harness` is refused, and what would read it."""
    if ref.path.stat().st_size == 0:
        return f"{ref.path} is empty: there is no session in it to read."
    found = detect(ref.path)
    hint = (
        f" It reads as a {found} session file: name that with --harness, or leave --harness out."
        if found is not None
        else " Is it a session file?"
    )
    return f"{ref.path} holds no {ref.harness} session: no record in it is one {ref.harness} writes.{hint}"


def _wanted(session_id: str | None, agent_id: str | None, wanted: str | None) -> bool:
    if not wanted:
        return True
    return any(value and (value == wanted or value.startswith(wanted)) for value in (session_id, agent_id))


def _print(item: Summary | Session, request: ReadRequest, out: TextIO) -> None:
    """One session: a JSON line, or its summary (and transcript) made safe for a terminal."""
    if request.json:
        out.write(json_line(item.to_json()) + "\n")
    elif isinstance(item, Summary):
        out.write(printable(summary_text(item.to_json())) + "\n")
    else:
        out.write(printable(summary_text(item.summary().to_json())) + "\n")
        out.writelines(printable(line) for line in transcript_lines(item.entries))
        out.write("\n")


def summary_text(data: dict) -> str:
    """A summary as a few readable lines."""
    who = data["session_id"] or "(no id)"
    if data.get("agent_id"):
        who += f" · sub-agent {data['agent_id']}"
    title = f" — {data['title']}" if data.get("title") else ""
    usage = data.get("usage")
    tokens = (
        "no usage recorded"
        if usage is None
        else f"tokens in {_n(usage['input'])} · out {_n(usage['output'])} · cache read {_n(usage['cache_read'])}"
        f" · cache write {_n(usage['cache_write'])}"
    )
    integrity = data["integrity"]
    damage = [f"{integrity['unparsed_records']} unparsed"] if integrity["unparsed_records"] else []
    damage += ["torn tail"] if integrity["torn_tail"] else []
    return "\n".join(
        [
            f"{data['harness']} {who}{title}",
            f"  {data['source']}",
            f"  {data.get('started_at') or '?'} → {data.get('ended_at') or '?'} · {data['ending']['status']}"
            f" · {data.get('cwd') or 'no folder recorded'}",
            f"  {data['user_messages']} prompts · {data['model_calls']} model calls · {data['tool_calls']} tool calls"
            f" ({data['tool_results']} results) · models: {', '.join(data['models']) or 'none recorded'}",
            f"  {tokens} · {integrity['records']} records" + (f" ({', '.join(damage)})" if damage else ""),
            *_oversized(data["source"], integrity),
        ]
    )


def _oversized(source: str, integrity: dict) -> list[str]:
    """What the summary says of records too long to read (JSONL lines; OpenCode messages and parts):
    which, how long, and for a line how to see its start."""
    skipped = [
        (
            f"line {o['line']}",
            o["bytes"],
            f" (see its start: tail -n +{o['line']} {shlex.quote(source)} | head -c 2000)",
        )
        for o in integrity.get("oversized_lines", [])
    ] + [(o["record"], o["bytes"], "") for o in integrity.get("oversized_records", [])]
    limit = f"{MAX_RECORD_BYTES // 2**20} MiB"
    shown = [
        f"  {name} skipped unread: {size:,} bytes, longer than the {limit} Harnez reads as one record{hint}"
        for name, size, hint in skipped[:OVERSIZED_SHOWN]
    ]
    if len(skipped) > OVERSIZED_SHOWN:
        shown.append(f"  … and {len(skipped) - OVERSIZED_SHOWN} more records over {limit}")
    return shown


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def transcript_lines(entries: list[Entry]) -> Iterator[str]:
    """A session's entries as readable text: prompts, answers, reasoning, tools and what happened."""
    for entry in entries:
        if isinstance(entry, UserMessage) and entry.kind != "meta":
            marker = ">" if entry.kind in PROMPTS else "[context]"
            yield f"\n{marker} {entry.shown_text}\n"
        elif isinstance(entry, AssistantTurn):
            yield from _turn_lines(entry)
        elif isinstance(entry, ToolResult):
            yield _result_text(entry)
        elif isinstance(entry, Compaction):
            yield (
                f"\n[compacted{f' from {entry.tokens_before} tokens' if entry.tokens_before else ''}]"
                f"{' ' + entry.summary if entry.summary else ''}\n"
            )
        elif isinstance(entry, Notice):
            yield f"[{entry.kind}] {entry.text}\n"


def _turn_lines(turn: AssistantTurn) -> Iterator[str]:
    for part in turn.parts:
        if isinstance(part, Text) and part.text.strip():
            yield f"\n{part.text.strip()}\n"
        elif isinstance(part, Reasoning) and part.text.strip():
            yield "\n" + "\n".join(f"  ┊ {line}" for line in part.text.strip().splitlines()) + "\n"
        elif isinstance(part, ToolCall):
            arguments = (
                part.arguments
                if isinstance(part.arguments, str)
                else json.dumps(part.arguments, ensure_ascii=False)
            )
            yield f"[tool {part.name}] {arguments}\n"
    call = turn.call
    if call is not None and (call.model or call.usage):
        usage = call.usage
        spent = f" · in {_n(usage.input)} out {_n(usage.output)}" if usage else ""
        yield f"  ({call.model or 'model not recorded'}{spent})\n"


def _result_text(result: ToolResult) -> str:
    lines = result.content.splitlines()
    shown = "\n".join(f"  │ {line}" for line in lines[:RESULT_LINES])
    more = f"\n  │ … {len(lines) - RESULT_LINES} more lines" if len(lines) > RESULT_LINES else ""
    status = "error" if result.is_error else "result"
    return f"[{status}]\n{shown}{more}\n" if lines else f"[{status}] (empty)\n"


# harnez import ----------------------------------------------------------------------------------


def parse_since(text: str | None) -> float | None:
    """`--since`: a date or an ISO date and time (local time unless it says otherwise), as Unix seconds."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise SessionFormatError(
            f"--since {text!r} is not a date; use YYYY-MM-DD or an ISO date and time "
            "such as 2026-09-30T14:00."
        ) from None


class ProgressLine:
    """Import progress on stderr: one updated line on a terminal, a line every few seconds otherwise."""

    def __init__(self, err: TextIO, every: float = 2.0) -> None:
        self.err, self.every = err, every
        self.tty = err.isatty()
        self._last = 0.0
        self._shown = False

    def __call__(self, done: int, total: int, source: str) -> None:
        now = time.monotonic()
        if done < total and now - self._last < (0.1 if self.tty else self.every):
            return
        self._last = now
        line = f"importing: {done}/{total} sources read"
        if self.tty:
            self.err.write("\r" + line + " " * 8)
        else:
            self.err.write(line + "\n")
        self.err.flush()
        self._shown = True

    def done(self) -> None:
        if self.tty and self._shown:
            self.err.write("\n")
            self.err.flush()


def import_report_text(report: ImportReport) -> str:
    """The report of an import, for people."""
    lines = [
        f"{report.imported} sessions imported, {report.updated} updated, {report.unchanged} sources "
        f"unchanged (of {report.sources} found)."
    ]
    if report.kept:
        lines.append(f"{report.kept} sessions continued in Harnez since their import were kept as they are.")
    if report.duplicates:
        lines.append(f"{report.duplicates} sessions were also in a newer file; the newer file was imported.")
    for source, why in report.skipped:
        lines.append(f"skipped {source}: {why}")
    return "\n".join(lines)
