"""The transcript: a session's events rendered as blocks, streamed live, bounded, older loaded on demand."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from harnez.events import StoredEvent
from harnez.text import printable_data
from harnez.tui.bridge import paint_without_skipping
from harnez.tui.widgets.blocks import (
    AssistantBlock,
    NoticeBlock,
    ReasoningBlock,
    ShellBlock,
    TaskEndBlock,
    ToolBlock,
    UserBlock,
    block_seq,
)

STATUS_LINE_WARNINGS = frozenset({"unpriced-model"})
"""Warnings the status line shows (as "unpriced" beside the cost) instead of a notice per task."""

MAX_BLOCKS = 300
"""Mounted blocks kept while following a live session; older ones are dropped and reloaded on scroll."""


@dataclass(slots=True)
class Change:
    """Blocks an event added and blocks it discarded."""

    added: list[Widget] = field(default_factory=list)
    removed: list[Widget] = field(default_factory=list)


class BlockBuilder:
    """Turns events, in order, into blocks; keeps the streaming answer, reasoning and tool calls open."""

    def __init__(self) -> None:
        self.answer: AssistantBlock | None = None
        self.reasoning: ReasoningBlock | None = None
        self.tools: dict[str, ToolBlock] = {}
        self.turn_blocks: list[Widget] = []

    async def feed(self, event: StoredEvent) -> Change:
        """The blocks this event adds or removes (text deltas extend the open answer instead).

        Every text of the payload is made safe for the terminal first: a prompt, an answer or a
        tool's output holding `ESC [2J` shows it as `\\x1b[2J` instead of clearing the screen.
        """
        handler = getattr(self, "_on_" + event.kind.replace("-", "_"), None)
        if handler is None:
            return Change()
        change: Change = await handler(replace(event, payload=printable_data(event.payload)))
        self.turn_blocks.extend(change.added)
        return change

    async def close(self) -> None:
        """End the open answer and reasoning (a tool call, a new message or the task's end)."""
        if self.answer is not None:
            await self.answer.close_stream()
        self.answer = None
        self.reasoning = None

    async def _on_user_message(self, event: StoredEvent) -> Change:
        await self.close()
        mode = event.payload.get("mode", "prompt")
        return Change([UserBlock(event.payload.get("text", ""), mode, event.seq)])

    async def _on_prompt_queued(self, event: StoredEvent) -> Change:
        return Change([UserBlock(event.payload.get("text", ""), "queued", event.seq)])

    async def _on_shell_line(self, event: StoredEvent) -> Change:
        await self.close()
        p = event.payload
        return Change([ShellBlock(p.get("command", ""), p.get("output") or "", p.get("exit_code"),
                                  duration=p.get("duration"), timed_out=bool(p.get("timed_out")),
                                  cancelled=bool(p.get("cancelled")), seq=event.seq)])

    async def _on_turn_started(self, event: StoredEvent) -> Change:
        await self.close()
        self.turn_blocks = []
        return Change()

    async def _on_text_delta(self, event: StoredEvent) -> Change:
        text = event.payload.get("text", "")
        if self.answer is None:
            self.answer = AssistantBlock(text, event.seq)
            return Change([self.answer])
        await self.answer.add_text(text)
        return Change()

    async def _on_reasoning_delta(self, event: StoredEvent) -> Change:
        text = event.payload.get("text", "")
        if self.reasoning is None:
            self.reasoning = ReasoningBlock(text, event.seq)
            return Change([self.reasoning])
        self.reasoning.add_text(text)
        return Change()

    async def _on_tool_requested(self, event: StoredEvent) -> Change:
        await self.close()
        payload = event.payload
        block = ToolBlock(payload.get("call_id", ""), payload.get("name", "tool"), payload.get("arguments"), event.seq)
        self.tools[block.call_id] = block
        return Change([block])

    async def _on_tool_arguments_delta(self, event: StoredEvent) -> Change:
        block = self.tools.get(event.payload.get("call_id", ""))
        if block is not None and block.arguments is None:
            block.add_arguments(event.payload.get("delta", ""))
        return Change()

    def _tool(self, event: StoredEvent, name: str) -> tuple[ToolBlock, Change]:
        call_id = event.payload.get("call_id", "")
        block = self.tools.get(call_id)
        if block is not None:
            return block, Change()
        block = ToolBlock(call_id, name, event.payload.get("arguments"), event.seq)
        self.tools[call_id] = block
        return block, Change([block])

    async def _on_approval_required(self, event: StoredEvent) -> Change:
        block, change = self._tool(event, event.payload.get("tool", "tool"))
        reason = event.payload.get("reason") or ""
        block.show_state(f"Waiting for approval{': ' + reason if reason else ''}")
        return change

    async def _on_approval_resolved(self, event: StoredEvent) -> Change:
        block, change = self._tool(event, "tool")
        verdict = {"allow": "Allowed once", "allow-session": "Allowed for this session", "deny": "Denied"}
        reason = event.payload.get("reason") or ""
        text = verdict.get(event.payload.get("verdict", ""), str(event.payload.get("verdict")))
        block.show_state(text + (f": {reason}" if reason else ""))
        return change

    async def _on_tool_completed(self, event: StoredEvent) -> Change:
        block, change = self._tool(event, event.payload.get("name", "tool"))
        payload = event.payload
        block.show_result(payload.get("content"), payload.get("details"), bool(payload.get("is_error")))
        return change

    async def _on_turn_retried(self, event: StoredEvent) -> Change:
        discarded = [b for b in self.turn_blocks if isinstance(b, AssistantBlock | ReasoningBlock)]
        await self.close()
        self.turn_blocks = []
        payload = event.payload
        delay = payload.get("delay")
        when = f", in {delay:.1f} s" if isinstance(delay, int | float) else ""
        reason = str(payload.get("reason") or "the stream failed").strip()
        reason += "" if reason.endswith((".", "?", "!")) else "."
        dropped = " The partial answer was discarded." if discarded else ""
        text = f"↻ Retrying (attempt {payload.get('attempt')}{when}): {reason}{dropped}"
        return Change([NoticeBlock(text, "warning", event.seq)], discarded)

    async def _on_compacted(self, event: StoredEvent) -> Change:
        payload = event.payload
        how = "summarised" if payload.get("summarised") else "older tool results elided"
        text = (f"Context compacted ({how}): about {payload.get('before_tokens')} → "
                f"{payload.get('after_tokens')} tokens. The full history stays in the session.")
        return Change([NoticeBlock(text, "info", event.seq)])

    async def _on_warning(self, event: StoredEvent) -> Change:
        if event.payload.get("code") in STATUS_LINE_WARNINGS:
            return Change()
        text = f"⚠ {event.payload.get('message', '')} [{event.payload.get('code', 'warning')}]"
        return Change([NoticeBlock(text, "warning", event.seq)])

    async def _on_error(self, event: StoredEvent) -> Change:
        return Change([NoticeBlock(f"✗ {event.payload.get('message', '')}", "error", event.seq)])

    async def _on_model_changed(self, event: StoredEvent) -> Change:
        return Change([NoticeBlock(f"Model: {event.payload.get('model')}", "info", event.seq)])

    async def _on_finished(self, event: StoredEvent) -> Change:
        await self.close()
        payload = event.payload
        return Change([TaskEndBlock(payload.get("stop", "completed"), payload.get("turns"),
                                    payload.get("error"), event.seq)])


class Transcript(VerticalScroll, can_focus=True):
    """The rendered events of one session; only a window of recent blocks is mounted."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    """

    class OlderWanted(Message):
        """The person scrolled to the top and older events exist."""

        def __init__(self, before: int) -> None:
            super().__init__()
            self.before = before
            """Load events with a sequence number below this."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._builder = BlockBuilder()
        self.oldest_seq = 0
        """The first event sequence number rendered (0 before anything is loaded)."""
        self.has_older = False
        """Whether events older than `oldest_seq` exist and are not mounted."""
        self._loading_older = False

    def on_mount(self) -> None:
        self.anchor()
        paint_without_skipping(self.screen)

    async def apply(self, event: StoredEvent) -> None:
        """Render one live event."""
        if not self.oldest_seq:
            self.oldest_seq = event.seq
        change = await self._builder.feed(event)
        for widget in change.removed:
            if widget.is_mounted:
                await widget.remove()
        if change.added:
            await self.mount_all(change.added)
            for block in change.added:
                if isinstance(block, AssistantBlock):
                    await block.start_stream()
            self._trim()

    async def load_batch(self, events: list[StoredEvent], has_older: bool) -> None:
        """Render the newest stored events at once (opening or resuming a session)."""
        if not events:
            return
        self.oldest_seq = events[0].seq
        self.has_older = has_older
        blocks = await self._build(self._builder, events)
        self._finish_answers(blocks, keep_open=self._builder.answer)
        await self._mount_batch(blocks)
        if self._builder.answer is not None and self._builder.answer in blocks:
            await self._builder.answer.start_stream()
        self.call_after_refresh(self._fill_view)

    def _fill_view(self) -> None:
        """Load older events when the view sits at the top once laid out: the blocks do not fill it,
        or the person scrolled up while they were being mounted."""
        if self.scroll_y <= 0:
            self.want_older()

    async def prepend(self, events: list[StoredEvent], has_older: bool) -> None:
        """Render older events above the mounted ones, keeping the view where it was."""
        self._loading_older = False
        self.has_older = has_older
        if not events:
            return
        self.oldest_seq = events[0].seq
        blocks = await self._build(BlockBuilder(), events)
        if not blocks:  # nothing drawn for that page (usage, cost…): look further back
            self.call_after_refresh(self._fill_view)
            return
        height = self.virtual_size.height
        self._finish_answers(blocks, keep_open=None)
        await self._mount_batch(blocks, before=0 if self.children else None)
        self.call_after_refresh(self._keep_position, height)

    async def _mount_batch(self, blocks: list[Widget], before: int | None = None) -> None:
        """Mount many blocks with one frame at the end, not a frame per block mounted."""
        with self.app.batch_update():
            await self.mount_all(blocks, before=before)
        self.refresh(layout=True)  # the screen paints once the batch is over

    def _keep_position(self, old_height: int) -> None:
        self.scroll_to(y=self.scroll_y + self.virtual_size.height - old_height, animate=False)
        if self.max_scroll_y == 0:  # still not enough to scroll: there is no way up to ask for more
            self.want_older()

    @staticmethod
    def _finish_answers(blocks: list[Widget], keep_open: AssistantBlock | None) -> None:
        """Render stored answers whole (no stream); only the one still being written streams."""
        for block in blocks:
            if isinstance(block, AssistantBlock) and block is not keep_open:
                block.finish()

    @staticmethod
    async def _build(builder: BlockBuilder, events: Iterable[StoredEvent]) -> list[Widget]:
        blocks: list[Widget] = []
        for event in events:
            change = await builder.feed(event)
            blocks = [b for b in blocks if b not in change.removed] + change.added
        return blocks

    def _trim(self) -> None:
        extra = len(self.children) - MAX_BLOCKS
        if extra <= 0 or not self.is_anchored:
            return
        old = list(self.children[:extra])
        self.remove_children(old)
        self.oldest_seq = block_seq(self.children[extra]) or self.oldest_seq
        self.has_older = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value or (new_value <= 0 and self.max_scroll_y == 0):
            self.want_older()

    def want_older(self) -> None:
        """Ask for the events before the oldest rendered one, once at a time."""
        if self.has_older and not self._loading_older and self.oldest_seq > 1:
            self._loading_older = True
            self.post_message(self.OlderWanted(self.oldest_seq))

    @property
    def blocks(self) -> list[Widget]:
        """The mounted blocks, oldest first."""
        return list(self.children)
