"""Approvals: a tool call that asks waits on a future here until the person (or a policy) answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from harnez.errors import ApprovalError as ApprovalError  # re-exported: its home is the tree in errors.py

Verdict = Literal["allow", "allow-session", "deny"]
VERDICTS: tuple[str, ...] = ("allow", "allow-session", "deny")
Policy = Literal["ask", "allow", "deny"]
POLICIES: tuple[str, ...] = ("ask", "allow", "deny")


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to one approval prompt, and who gave it (`user` or `policy`)."""

    verdict: Verdict
    reason: str | None = None
    by: str = "user"

    @property
    def allowed(self) -> bool:
        return self.verdict != "deny"


def check_verdict(verdict: str) -> Verdict:
    """The verdict itself, or an ApprovalError listing the accepted ones."""
    if verdict not in VERDICTS:
        raise ApprovalError(f"Unknown approval verdict {verdict!r}; answer one of {', '.join(VERDICTS)}.")
    return verdict  # type: ignore[return-value]


def check_policy(policy: object) -> Policy:
    """An approval policy from task options: `ask` (wait for a person), `allow` or `deny` (headless)."""
    if policy not in POLICIES:
        raise ApprovalError(f"Unknown approval policy {policy!r}; use one of {', '.join(POLICIES)}.")
    return policy  # type: ignore[return-value]


def policy_answer(policy: Policy) -> Answer | None:
    """The automatic answer of a headless policy; None when a person must answer."""
    if policy == "allow":
        return Answer("allow", "Approved automatically (approve=allow).", by="policy")
    if policy == "deny":
        return Answer(
            "deny",
            "Denied automatically: this run cannot ask a person for approval "
            "(approve=deny). Do the task without this call, or explain what you need.",
            by="policy",
        )
    return None


class ApprovalDesk:
    """The approval prompts waiting for an answer, by session and call id.

    A sub-agent's calls are asked in its parent session (`forward`): they wait under the parent's id,
    their call ids prefixed, so whoever answers the parent's prompts answers them too.
    """

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], asyncio.Future[Answer]] = {}
        self._forwarded: dict[str, tuple[str, str]] = {}
        """A child session's calls → (the session they are asked in, the prefix of their ids there)."""
        self._watchers: list[Callable[[str, str], None]] = []

    def watch(self, watcher: Callable[[str, str], None]) -> Callable[[], None]:
        """Call `watcher(session, call id)` (the `key`) each time a call starts waiting: a front end
        showing another session still learns that one waits. Returns the function that stops it."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher)

    def forward(self, session_id: str, to_session: str, prefix: str) -> None:
        """Ask the calls of `session_id` in `to_session`, as `<prefix><call id>` (until `stop_forwarding`)."""
        self._forwarded[session_id] = (to_session, prefix)

    def stop_forwarding(self, session_id: str) -> None:
        """Ask a session's calls in the session itself again."""
        self._forwarded.pop(session_id, None)

    def key(self, session_id: str, call_id: str) -> tuple[str, str]:
        """(session, call id) under which a session's call waits: its parent's for a sub-agent's."""
        to_session, prefix = self._forwarded.get(session_id, (session_id, ""))
        return to_session, prefix + call_id

    def pending(self, session_id: str) -> list[str]:
        """The call ids waiting for an answer in a session, oldest first."""
        return [call for (session, call) in self._pending if session == session_id]

    def waits(self, session_id: str, call_id: str) -> bool:
        """Whether a call of the session waits for an answer, asked there or, for a sub-agent's call,
        in its parent session (either session's screen may answer it: `answer` forwards the same)."""
        return self.key(session_id, call_id) in self._pending

    async def wait(self, session_id: str, call_id: str) -> Answer:
        """Wait for the answer to a call's prompt; cancelling the wait withdraws the prompt."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        key = self.key(session_id, call_id)
        self._pending[key] = future
        for watcher in list(self._watchers):
            watcher(*key)
        try:
            return await future
        finally:
            self._pending.pop(key, None)

    def answer(self, session_id: str, call_id: str, verdict: str, reason: str | None = None) -> None:
        """Resolve a waiting prompt; raises ApprovalError when nothing waits under that id."""
        checked = check_verdict(verdict)
        future = self._pending.get(self.key(session_id, call_id))
        if future is None or future.done():
            waiting = ", ".join(self.pending(session_id)) or "none"
            raise ApprovalError(
                f"No tool call {call_id!r} waits for approval in session {session_id}; "
                f"waiting calls: {waiting}. It may have been answered or cancelled already."
            )
        future.set_result(Answer(checked, reason, by="user"))
