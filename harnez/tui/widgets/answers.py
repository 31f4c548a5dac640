"""How structured answers and hooks show in the transcript: the answer's JSON, one line per hook run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from harnez.tui.widgets.blocks import NoticeBlock

if TYPE_CHECKING:
    from harnez import events as ev

HOOK_VERBS = {
    "stop": "sent the task back",
    "pre_tool": "denied the call",
    "post_tool": "added a note",
    "prompt_submit": "refused the prompt",
}
"""What a block from each hook did."""


class AnswerBlock(Vertical):
    """The task's structured answer (an `answered` event): its JSON, indented."""

    DEFAULT_CSS = """
    AnswerBlock { height: auto; margin: 1 0 0 0; padding: 0 1; border-left: thick $success; }
    AnswerBlock .answer-title { text-style: bold; color: $success; }
    """

    def __init__(self, answer: Any, seq: int = 0) -> None:
        super().__init__()
        self.seq = seq
        self.answer = answer

    def compose(self) -> ComposeResult:
        yield Static("Answer", classes="answer-title")
        yield Static(json.dumps(self.answer, indent=2, ensure_ascii=False), markup=False)


def hook_text(body: ev.HookRan | ev.HookFailed) -> str:
    """One line for a hook run: which hook, its command, what it decided (or how it failed)."""
    from harnez.events import HookFailed

    if isinstance(body, HookFailed):
        return f"✗ {body.message}"
    head = f"⚓ {body.hook} hook `{body.command}`"
    took = f" ({body.duration:.1f} s)" if body.duration is not None else ""
    if body.decision == "block":
        verb = HOOK_VERBS.get(body.hook, "blocked")
        return f"{head} {verb}{took}: {body.reason or 'no reason given'}"
    added = f"; added: {body.context}" if body.context else ""
    return f"{head} allowed{took}{added}"


def answer_notice(
    body: ev.Answered | ev.AnswerNudged | ev.HookRan | ev.HookFailed | ev.StopHookExhausted, seq: int
) -> AnswerBlock | NoticeBlock:
    """The block an answer or hook event adds to the transcript."""
    from harnez import events as ev

    match body:
        case ev.Answered(answer=answer):
            return AnswerBlock(answer, seq)
        case ev.AnswerNudged(forced=forced):
            held = " (the next turn is held to it)" if forced else ""
            text = f"↻ The model ended without an answer: told once more to use the answer tool{held}."
            return NoticeBlock(text, "warning", seq)
        case ev.StopHookExhausted(limit=limit, command=command, reason=reason):
            why = f": {reason}" if reason else ""
            text = f"⚠ The stop hook `{command}` blocked again after sending the task back {limit} times{why}"
            return NoticeBlock(text, "warning", seq)
        case ev.HookFailed():
            return NoticeBlock(hook_text(body), "error", seq)
        case ev.HookRan(decision=decision):
            return NoticeBlock(hook_text(body), "warning" if decision == "block" else "info", seq)
