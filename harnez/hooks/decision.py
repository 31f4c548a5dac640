"""What a hook decided, read from its exit code and its stdout (the contract of docs/hooks.md).

exit 0, stdout empty or plain text      allow (the text is not a decision)
exit 0, stdout a JSON object            {"decision": "allow" | "block", "reason": …, "context": …}
exit 2                                  block; stderr is the reason
any other exit, a timeout, bad JSON     the hook failed: HookError, and the task ends
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from harnez.errors import HookError
from harnez.hooks.command import CommandResult
from harnez.text import printable, sentence

Verdict = Literal["allow", "block"]
BLOCK_EXIT = 2
STDERR_SHOWN = 400
"""Characters of a failed hook's stderr quoted in its message."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A hook's answer: go on (`allow`) or not (`block`), why, and text to add for the model."""

    verdict: Verdict = "allow"
    reason: str | None = None
    context: str | None = None

    @property
    def blocks(self) -> bool:
        return self.verdict == "block"


def read_decision(hook: str, command: str, timeout: float, result: CommandResult) -> Decision:
    """The decision of a hook that ended; raises HookError, saying what to fix, when it failed."""
    name = f"The {hook} hook `{printable(command, one_line=True)}`"
    if result.timed_out:
        raise HookError(
            f"{name} did not finish within {timeout:g} s and was killed; make it quicker or raise its "
            "`timeout` in settings.json."
        )
    if result.exit_code == BLOCK_EXIT:
        return Decision("block", result.stderr.strip() or None)
    if result.exit_code != 0:
        raise HookError(f"{name} failed with exit code {result.exit_code}{_quoted(result.stderr)}")
    text = result.stdout.strip()
    if not text.startswith("{"):
        return Decision()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookError(
            f"{name} printed JSON that cannot be read ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            'print one object such as {"decision": "block", "reason": "…"}, or nothing.'
        ) from None
    return _from_json(name, data)


def _from_json(name: str, data: Any) -> Decision:
    if not isinstance(data, dict):
        raise HookError(f"{name} printed JSON that is not an object; print {{}} or a decision object.")
    verdict = data.get("decision", "allow")
    if verdict not in ("allow", "block"):
        raise HookError(f'{name} printed the decision {verdict!r}; use "allow" or "block".')
    texts = {key: data.get(key) for key in ("reason", "context")}
    for key, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise HookError(f"{name} printed a `{key}` that is not text; give it as a JSON string.")
    return Decision(verdict, texts["reason"] or None, texts["context"] or None)


def _quoted(stderr: str) -> str:
    """`: <the end of stderr>` when the hook said something, else advice to make it say something."""
    said = " ".join(stderr.split())
    if not said:
        return "; it printed nothing on stderr. Run it by hand with the event on stdin to see why."
    cut = said if len(said) <= STDERR_SHOWN else "…" + said[-STDERR_SHOWN:]
    return f": {sentence(printable(cut))}"
