"""The conversation of a session as the agent sees it: loaded from context records, repaired, kept."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harnez.agent.task import TaskStore
from harnez.store.ledger import ModelCall, ToolExecution
from harnez.wires import (
    AssistantMessage,
    Conversation,
    Item,
    ToolCall,
    ToolResult,
    UserMessage,
    item_from_json,
)

INTERRUPTED = "interrupted: no result was recorded (the run stopped before this tool call finished)"
"""The synthetic result of a tool call whose run never recorded one (a crash, a kill)."""
NOT_RUN = "cancelled: the user stopped the task before this tool call ran"
COMPACTION_ROLE = "compaction"
ROLES = {UserMessage: "user", AssistantMessage: "assistant", ToolResult: "tool"}


def repair(items: Iterable[Item]) -> tuple[list[Item], int]:
    """Every tool call answered right after its message, orphan results left out.

    Returns the items and how many synthetic `INTERRUPTED` results were added. Results whose call
    is not in the message before them (left by an older compaction) are dropped: no wire accepts them.
    """
    repaired: list[Item] = []
    waiting: list[str] = []
    added = 0
    for item in items:
        if isinstance(item, ToolResult):
            if item.call_id in waiting:
                waiting.remove(item.call_id)
                repaired.append(item)
            continue
        added += len(waiting)
        repaired.extend(ToolResult(call_id, INTERRUPTED, is_error=True) for call_id in waiting)
        repaired.append(item)
        waiting = [call.id for call in item.tool_calls] if isinstance(item, AssistantMessage) else []
    repaired.extend(ToolResult(call_id, INTERRUPTED, is_error=True) for call_id in waiting)
    return repaired, added + len(waiting)


def items_from_records(records: list[tuple[str, str | None, dict[str, Any]]]) -> list[Item]:
    """The items to send: from the last compaction record on (its kept items), then later records."""
    start, items = 0, []
    for index, (role, _wire, body) in enumerate(records):
        if role == COMPACTION_ROLE:
            start, items = index + 1, [item_from_json(raw) for raw in body["items"]]
    items.extend(item_from_json(body) for role, _wire, body in records[start:] if role != COMPACTION_ROLE)
    return items


def _trailing_results(items: list[Item]) -> list[ToolResult]:
    """The tool results at the very end of the items, in order."""
    trailing: list[ToolResult] = []
    for item in reversed(items):
        if not isinstance(item, ToolResult):
            break
        trailing.append(item)
    return trailing[::-1]


class History:
    """The items of the conversation in memory, each new one stored as a context record at once."""

    def __init__(
        self, store: TaskStore, session_num: int, task: int | None, wire: str, items: list[Item] | None = None
    ) -> None:
        self.store, self.session_num, self.task, self.wire = store, session_num, task, wire
        self.items: list[Item] = list(items or [])
        self.repaired = 0
        """How many tool calls got a synthetic result when the history was loaded."""

    @classmethod
    async def load(cls, store: TaskStore, session_num: int, task: int | None, wire: str) -> History:
        """The stored conversation, from its last compaction, with every tool call answered.

        Synthetic results that answer the last message are stored, so the record is whole again.
        """
        raw = items_from_records(await store.context.items(session_num))
        items, repaired = repair(raw)
        history = cls(store, session_num, task, wire, items)
        history.repaired = repaired
        recorded = {item.call_id for item in raw if isinstance(item, ToolResult)}
        for item in _trailing_results(items):
            if item.call_id not in recorded:
                await store.context.append(session_num, task, "tool", item.to_json(), None)
        return history

    def conversation(self, system: str) -> Conversation:
        return Conversation(system, tuple(self.items))

    async def add(self, item: Item) -> None:
        """Append an item and store it."""
        self.items.append(item)
        wire = self.wire if isinstance(item, AssistantMessage) else None
        await self.store.context.append(self.session_num, self.task, ROLES[type(item)], item.to_json(), wire)

    def unanswered(self) -> list[ToolCall]:
        """The calls of the last assistant message that have no result yet."""
        for index in range(len(self.items) - 1, -1, -1):
            item = self.items[index]
            if isinstance(item, AssistantMessage):
                answered = {r.call_id for r in self.items[index + 1 :] if isinstance(r, ToolResult)}
                return [call for call in item.tool_calls if call.id not in answered]
        return []

    async def answer_unanswered(self, content: str = NOT_RUN) -> None:
        """Give every call still waiting a result (the task stopped before running it)."""
        for call in self.unanswered():
            await self.add(ToolResult(call.id, content, is_error=True))

    async def replace(self, items: list[Item], details: dict[str, Any]) -> None:
        """Compaction: later loads start from `items`; the full history stays in the store."""
        self.items = list(items)
        body = {"type": COMPACTION_ROLE, "items": [item.to_json() for item in items], **details}
        await self.store.context.append(self.session_num, self.task, COMPACTION_ROLE, body, self.wire)

    async def record_model_call(self, row: ModelCall) -> None:
        await self.store.ledger.record_model_call(row)

    async def record_tool(self, row: ToolExecution) -> None:
        await self.store.ledger.record_tool_execution(row)
