"""Compaction: when the conversation nears the model's window, elide old tool results, then summarise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace

from harnez import events as ev
from harnez.agent.context import History
from harnez.agent.task import Emit
from harnez.agent.turns import ModelTurn, StreamFn, TaskAccounting
from harnez.wires import (
    AssistantMessage,
    AssistantTurn,
    Conversation,
    Item,
    Opaque,
    ResolvedModel,
    ToolResult,
    UserMessage,
    WireRequest,
    lasting_opaque,
)
from harnez.wires.conversation import call_as_text, result_as_text, tool_names

THRESHOLD = 0.8
"""Compact when the estimate exceeds this share of the model's context window."""
KEEP_RESULTS = 3
"""The newest tool results are never elided."""
TAIL_SHARE = 0.3
"""A summary keeps the newest items verbatim up to this share of the window."""
ELIDED = (
    "[tool result elided to fit the context window; it had {chars} characters. Run the tool again if needed.]"
)
SUMMARY_SYSTEM = (
    "You summarise a coding session so that it can continue with less context. Write a dense summary: "
    "the user's goal and current request, decisions made, files read or changed (with paths), commands "
    "run and their outcome, what remains to do. No preamble."
)
SUMMARY_REQUEST = "Summarise the conversation so far as instructed; the summary replaces it."
SUMMARY_HEADER = "[Summary of the earlier conversation, written when it was compacted]\n"


def item_chars(item: Item) -> int:
    """The item's length as JSON, in characters."""
    return len(json.dumps(item.to_json(), ensure_ascii=False))


def estimate_tokens(system: str, items: Sequence[Item]) -> int:
    """Characters / 4 of the system text and the items as JSON: no tokenizer needed."""
    return (len(system) + sum(item_chars(item) for item in items)) // 4


class ItemSizes:
    """`estimate_tokens` for one task: each item object is encoded once, not at every request.

    A task estimates its whole conversation before every model call (to decide on compaction, and
    that the request fits); encoding every item each time cost ~4 ms per call at 140k tokens, on the
    event loop. The items are kept with their sizes, so an id is never reused while it is known.
    """

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[Item, int]] = {}

    def chars(self, item: Item) -> int:
        known = self._known.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        size = item_chars(item)
        self._known[id(item)] = (item, size)
        return size

    def tokens(self, system: str, items: Sequence[Item]) -> int:
        return (len(system) + sum(self.chars(item) for item in items)) // 4


def elide(items: Sequence[Item], keep: int = KEEP_RESULTS) -> list[Item]:
    """The items with every tool result but the newest `keep` replaced by a short note."""
    results = [i for i, item in enumerate(items) if isinstance(item, ToolResult)]
    older = set(results[:-keep] if keep else results)
    return [
        ToolResult(item.call_id, ELIDED.format(chars=len(item.content)), item.is_error)
        if i in older and isinstance(item, ToolResult) and not item.content.startswith("[tool result elided")
        else item
        for i, item in enumerate(items)
    ]


def summary_cut(items: Sequence[Item], tail_tokens: int, sizes: ItemSizes | None = None) -> int:
    """Where the verbatim tail starts: the earliest non-result item whose tail fits `tail_tokens`.

    One pass from the end, summing each item's size once (the tail's estimate is its characters / 4,
    as `estimate_tokens("", items[index:])`).
    """
    chars_of = (sizes or ItemSizes()).chars
    cut, tail = len(items), 0
    for index in range(len(items) - 1, 0, -1):
        tail += chars_of(items[index])
        if tail // 4 > tail_tokens:
            break
        if not isinstance(items[index], ToolResult):
            cut = index
    return cut


@dataclass(slots=True)
class Compactor:
    """Keeps one task's conversation under THRESHOLD of the window; the store keeps everything."""

    model: ResolvedModel
    stream: StreamFn
    emit: Emit
    accounting: TaskAccounting = field(default_factory=TaskAccounting)
    threshold: float = THRESHOLD
    keep_results: int = KEEP_RESULTS
    overhead_tokens: int = 0
    """What every request carries besides the conversation (the tools' schemas)."""
    summary_failed: bool = False
    sizes: ItemSizes = field(default_factory=ItemSizes)
    """The conversation's items measured so far (each is encoded once per task)."""

    @property
    def limit(self) -> int:
        return int(self.model.spec.context_window * self.threshold) - self.overhead_tokens

    def estimate(self, system: str, items: Sequence[Item]) -> int:
        """The larger of the char estimate and the tokens the last call reported it left in the
        context (its last request's prompt and answer)."""
        return max(self.sizes.tokens(system, items), self.accounting.context_tokens or 0)

    async def fit(self, history: History, system: str) -> None:
        """Compact the history if it is too big for the next model call."""
        before = self.estimate(system, history.items)
        if before <= self.limit:
            return
        items, summarised = elide(history.items, self.keep_results), False
        if self.sizes.tokens(system, items) > self.limit and not self.summary_failed:
            summary = await self._summarise(history, items)
            if summary is not None:
                items, summarised = summary, True
        after = self.sizes.tokens(system, items)
        if items == history.items:
            return
        await history.replace(
            items, {"before_tokens": before, "after_tokens": after, "summarised": summarised}
        )
        self.accounting.context_tokens = None
        self.emit(ev.Compacted(before_tokens=before, after_tokens=after, summarised=summarised))
        how = "summarised older turns" if summarised else "elided older tool results"
        window = self.model.spec.context_window
        where = "was over" if before > window else "neared"
        self.emit(
            ev.WarningEvent(
                code="conversation-compacted",
                message=(
                    f"The conversation {where} the model's window ({before} of {window} tokens) and was "
                    f"compacted to about {after}: {how}. The full history stays in the session."
                ),
            )
        )

    def overflow(self, history: History, system: str) -> str | None:
        """Why the next request cannot be sent — larger than the model's whole window even after
        compaction — or None when it fits. The provider is never sent a request known to be too big."""
        needed = self.estimate(system, history.items) + self.overhead_tokens
        window = self.model.spec.context_window
        if needed <= window:
            return None
        return (
            f"The conversation is still about {needed} tokens after compaction, more than the {window}-token "
            f"window of {self.model.provider}/{self.model.model}, so it was not sent. Start a new session "
            "(/new, or harnez run without --resume), or switch to a model with a larger window (/model)."
        )

    async def compact_now(self, history: History, system: str) -> None:
        """Compact on request (`/compact`): summarise all but the newest quarter of the conversation.

        When the summary cannot be written the old tool results are elided instead; when there is
        nothing to shorten, a `nothing-to-compact` warning says so.
        """
        before = self.estimate(system, history.items)
        items, summarised = elide(history.items, self.keep_results), False
        summary = await self._summarise(history, items, tail_tokens=self.sizes.tokens("", items) // 4)
        if summary is not None:
            items, summarised = summary, True
        if items == history.items:
            self.emit(
                ev.WarningEvent(
                    code="nothing-to-compact",
                    message=("There is nothing to compact yet: the conversation is too short to summarise."),
                )
            )
            return
        after = self.sizes.tokens(system, items)
        await history.replace(
            items,
            {"before_tokens": before, "after_tokens": after, "summarised": summarised, "requested": True},
        )
        self.accounting.context_tokens = None
        self.emit(ev.Compacted(before_tokens=before, after_tokens=after, summarised=summarised))

    async def _summarise(
        self, history: History, items: list[Item], tail_tokens: int | None = None
    ) -> list[Item] | None:
        if tail_tokens is None:
            tail_tokens = int(self.model.spec.context_window * TAIL_SHARE)
        cut = summary_cut(items, tail_tokens, self.sizes)
        if cut == 0:
            return None
        request = WireRequest(
            self.model.model,
            Conversation(SUMMARY_SYSTEM, (UserMessage(summary_prompt(items[:cut])),)),
            (),
            thinking="off",
            spec=self.model.spec,
        )
        call = ModelTurn(0, self.model, self.emit, self.accounting)
        async with aclosing(self.stream(request)) as events:
            async for event in events:
                call.turn.apply(event)
        turn: AssistantTurn = call.turn
        failed = turn.failure is not None or not turn.text.strip()
        await call.prices.look_up()
        call.account()
        await history.record_model_call(
            call.ledger_row(history.session_num, history.task, "failed" if failed else "completed")
        )
        if failed:
            self.summary_failed = True
            why = turn.failure.message if turn.failure else "the model returned no text"
            self.emit(
                ev.WarningEvent(
                    code="summary-failed",
                    message=(
                        f"Compaction could not summarise ({why}); older tool results stay elided instead."
                    ),
                )
            )
            return None
        carried = lasting_opaque(items[:cut])
        return [UserMessage(SUMMARY_HEADER + turn.text.strip()), *_after_summary(items[cut:], carried)]


def summary_prompt(items: Sequence[Item]) -> str:
    """The summary request's one message: the part to summarise written out as text (`transcript`),
    then `SUMMARY_REQUEST`."""
    return f"<conversation>\n{transcript(items)}\n</conversation>\n\n{SUMMARY_REQUEST}"


def transcript(items: Sequence[Item]) -> str:
    """The conversation as plain text: each message under its speaker, tool calls and their results
    written out. The summary request offers no tools (the model is to write, not act), and a request
    holding tool calls and results as such must offer tools on some servers (Anthropic: "Requests
    which include tool_use or tool_result blocks must define tools"; Bedrock the same), which refused
    every summary of a session that had used a tool. Reasoning and provider items are left out."""
    names = tool_names(items)
    parts: list[str] = []
    for item in items:
        if isinstance(item, UserMessage):
            parts.append(f"[user]\n{item.text}")
        elif isinstance(item, AssistantMessage):
            said = [item.text] if item.text else []
            said += [call_as_text(call) for call in item.tool_calls]
            if said:
                parts.append("[assistant]\n" + "\n".join(said))
        elif isinstance(item, ToolResult):
            parts.append(result_as_text(item, names))
    return "\n\n".join(parts)


def _after_summary(tail: Sequence[Item], carried: tuple[Opaque, ...] = ()) -> list[Item]:
    """The tail, opened by an assistant acknowledgement when it starts with a user message; its first
    assistant message carries the opaque items of the summarised part that outlive it (`carried`:
    Anthropic's container, where the model's files are)."""
    if not tail or isinstance(tail[0], UserMessage):
        return [AssistantMessage("Understood; continuing from the summary.", opaque=carried), *tail]
    first = tail[0]
    if carried and isinstance(first, AssistantMessage):
        return [replace(first, opaque=(*carried, *first.opaque)), *tail[1:]]
    return list(tail)
