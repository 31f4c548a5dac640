"""Whether a task may end when the model stops: its structured answer first, then its stop hooks.

A task asked for a structured answer that ends in prose is told once to answer through the tool
(`answer-nudged`; the next turns are held to the tool where the wire can force one), and fails if it
still does not. Then the stop hooks decide: one that blocks sends the task back with its message,
until `hooks.stop_limit` blocks were spent (`stop-hook-exhausted`, the task ends incomplete).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harnez import events as ev
from harnez.agent.answer import ANSWER_TOOL, AnswerTool
from harnez.agent.context import History
from harnez.agent.task import Emit
from harnez.hooks import TaskHooks
from harnez.outcome import TaskOutcome
from harnez.wires import UserMessage

NUDGE = (
    f"You ended without giving the answer through the `{ANSWER_TOOL}` tool. This task ends only with "
    f"a call to `{ANSWER_TOOL}` whose input is the answer as JSON matching the tool's schema: call it now."
)
NO_ANSWER = (
    f"The model ended without a valid answer through the `{ANSWER_TOOL}` tool, even when told once more; "
    "continue the session asking for the answer, or try another model."
)


@dataclass(slots=True)
class TaskEnding:
    """The end of one task: answers taken from the answer tool, the nudge, the stop hooks' verdict."""

    emit: Emit
    answer_tool: AnswerTool | None = None
    hooks: TaskHooks | None = None
    can_force: bool = False
    """Whether the wire can hold a turn to one tool (harnez.wires.forces_tools)."""
    nudged: bool = False
    answered: bool = False
    answer: Any = None
    """The newest valid answer of the task."""

    @property
    def force_tool(self) -> str | None:
        """The tool the next turn is held to: the answer tool after the nudge, until an answer came."""
        waiting = self.answer_tool is not None and self.nudged and not self.answered
        return ANSWER_TOOL if waiting and self.can_force else None

    def take_answers(self) -> bool:
        """Emit `answered` for each valid answer the last tool calls gave; whether there was one."""
        if self.answer_tool is None or not self.answer_tool.accepted:
            return False
        for call_id, answer in self.answer_tool.accepted:
            self.emit(ev.Answered(call_id=call_id, answer=answer))
            self.answered, self.answer = True, answer
        self.answer_tool.accepted.clear()
        return True

    async def settle(self, history: History, turns: int, text: str) -> TaskOutcome | None:
        """How the task ends now, or None when it goes on (told to answer, or sent back by a stop hook)."""
        if self.answer_tool is not None and not self.answered:
            if self.nudged:
                return TaskOutcome("failed", turns, NO_ANSWER)
            self.nudged = True
            self.emit(ev.AnswerNudged(message=NUDGE, forced=self.can_force))
            await history.add(UserMessage(NUDGE))
            return None
        if self.hooks is None:
            return TaskOutcome("completed", turns)
        check = await self.hooks.stop(turns, text, self.answer)
        if check.exhausted is not None:
            limit = self.hooks.hooks.stop_limit
            why = check.exhausted.told(
                f"A stop hook blocked the end again after {limit} times (hooks.stop_limit)"
            )
            return TaskOutcome("incomplete", turns, f"{why} Continue the session, or raise hooks.stop_limit.")
        if check.back is not None:
            await history.add(UserMessage(check.back))
            return None
        return TaskOutcome("completed", turns)
