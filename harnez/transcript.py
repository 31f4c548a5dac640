"""A plain-text transcript of stored events, for `harnez sessions show` and exports."""

from __future__ import annotations

import json
from collections.abc import Iterable

from harnez.events import (
    DelegateStarted,
    Error,
    EventBody,
    Finished,
    PromptQueued,
    ShellLine,
    Started,
    StoredEvent,
    TextDelta,
    TitleChanged,
    ToolCompleted,
    ToolRequested,
    TurnRetried,
    UserMessage,
    WarningEvent,
)
from harnez.text import is_terminal_output, plain_output

RESULT_SHOWN = 500
"""Characters of a tool's result shown; the transcript is a record to read, not the result itself."""


def render_plain(events: Iterable[StoredEvent]) -> str:
    """Readable text: prompts, answers (deltas joined, retried attempts dropped), tools, ends.

    Notices about the session rather than the answer (a title chosen while the answer streamed)
    wait until the answer's text is written, so they never split it mid-sentence.
    """
    out: list[str] = []
    attempt: list[str] = []
    waiting: list[str] = []

    def close_text() -> None:
        if attempt:
            out.append("".join(attempt).rstrip() + "\n\n")
            attempt.clear()
        out.extend(waiting)
        waiting.clear()

    for event in events:
        match event.body:
            case TextDelta(text=text):
                attempt.append(text)
                continue
            case TurnRetried():
                attempt.clear()
                continue
        line = _line(event.body)
        if line and event.task is None and attempt:
            waiting.append(line)
            continue
        close_text()
        if line:
            out.append(line)
    close_text()
    return "".join(out)


def endpoints_used(events: Iterable[StoredEvent]) -> list[str]:
    """What the session's tasks ran with, each change once in order: `model · wire · base URL`
    (the key never: only its variable is known, and not even that is stored)."""
    seen: list[str] = []
    for event in events:
        if isinstance(event.body, Started):
            body = event.body
            parts = [body.model, body.wire] + ([body.base_url] if body.base_url else [])
            line = " · ".join(parts)
            if not seen or seen[-1] != line:
                seen.append(line)
    return seen


def _line(body: EventBody) -> str | None:
    match body:
        case UserMessage(text=text, mode=mode):
            return f"> {text}{'' if mode == 'prompt' else f' ({mode})'}\n\n"
        case PromptQueued(text=text):
            return f"> {text} (queued)\n\n"
        case ShellLine():
            return _shell_line(body)
        case ToolRequested(name=name, raw_arguments=str(raw), arguments_error=error):
            return f"[tool] {name} {raw} ({error})\n"
        case ToolRequested(name=name, arguments=arguments):
            return f"[tool] {name} {json.dumps(arguments, ensure_ascii=False)}\n"
        case ToolCompleted(name=name, content=content, is_error=is_error):
            shown = plain_output(content) if is_terminal_output(name, content) else content
            return f"[tool {'error' if is_error else 'ok'}] {shown[:RESULT_SHOWN]}\n\n"
        case WarningEvent(message=message) | Error(message=message):
            return f"[{body.kind}] {message}\n\n"
        case Finished(stop=stop, error=error):
            return f"[task {stop}{f': {error}' if error else ''}]\n\n"
        case TitleChanged(title=title):
            return f"[title] {title}\n\n"
        case DelegateStarted(agent=agent, child=child):  # sub-agents: docs/agents.md
            return f"[sub-agent] {agent} in session {child[:12]} (harnez sessions show {child[:12]})\n"
    return None


def _shell_line(line: ShellLine) -> str:
    """`$ command`, the output, and how it ended when not plainly (a failure, a timeout, a cancel)."""
    end = ""
    if line.timed_out:
        end = "[timed out]\n"
    elif line.cancelled:
        end = "[cancelled]\n"
    elif line.exit_code not in (0, None):
        end = f"[exit code {line.exit_code}]\n"
    output = plain_output(line.output).rstrip("\n")
    return f"$ {line.command}\n" + (output + "\n" if output else "") + end + "\n"
