"""A plain-text transcript of stored events, for `harnez sessions show` and exports."""

from __future__ import annotations

from collections.abc import Iterable

from harnez.events import StoredEvent


def render_plain(events: Iterable[StoredEvent]) -> str:
    """Readable text: prompts, answers (deltas joined, retried attempts dropped), tools, ends."""
    out: list[str] = []
    attempt: list[str] = []

    def close_text() -> None:
        if attempt:
            out.append("".join(attempt).rstrip() + "\n\n")
            attempt.clear()

    for event in events:
        kind, p = event.kind, event.payload
        if kind == "text-delta":
            attempt.append(p.get("text", ""))
            continue
        if kind == "turn-retried":
            attempt.clear()
            continue
        close_text()
        line = _line(kind, p)
        if line:
            out.append(line)
    close_text()
    return "".join(out)


def _line(kind: str, p: dict) -> str | None:
    if kind == "user-message":
        mode = "" if p.get("mode", "prompt") == "prompt" else f" ({p['mode']})"
        return f"> {p.get('text', '')}{mode}\n\n"
    if kind == "prompt-queued":
        return f"> {p.get('text', '')} (queued)\n\n"
    if kind == "shell-line":
        return _shell_line(p)
    if kind == "tool-requested":
        return f"[tool] {p.get('name')} {p.get('arguments')}\n"
    if kind == "tool-completed":
        status = "error" if p.get("is_error") else "ok"
        return f"[tool {status}] {str(p.get('content', ''))[:500]}\n\n"
    if kind in ("warning", "error"):
        return f"[{kind}] {p.get('message', '')}\n\n"
    if kind == "finished":
        error = f": {p['error']}" if p.get("error") else ""
        return f"[task {p.get('stop')}{error}]\n\n"
    if kind == "title-changed":
        return f"[title] {p.get('title')}\n\n"
    return None


def _shell_line(p: dict) -> str:
    """`$ command`, the output, and how it ended when not plainly (a failure, a timeout, a cancel)."""
    end = ""
    if p.get("timed_out"):
        end = "[timed out]\n"
    elif p.get("cancelled"):
        end = "[cancelled]\n"
    elif p.get("exit_code") not in (0, None):
        end = f"[exit code {p['exit_code']}]\n"
    output = str(p.get("output") or "").rstrip("\n")
    return f"$ {p.get('command', '')}\n" + (output + "\n" if output else "") + end + "\n"
