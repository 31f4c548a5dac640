"""The transcript: a session's events rendered as blocks, streamed live, bounded, older loaded on demand."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from textual import events
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.message import Message
from textual.widget import Widget

from harnez.text import is_terminal_output, printable_data
from harnez.tui.bridge import paint_after_batch, paint_without_skipping
from harnez.tui.widgets.answers import answer_notice, hook_text
from harnez.tui.widgets.blocks import (
    LIVE_KEPT,
    AssistantBlock,
    NoticeBlock,
    ReasoningBlock,
    RunningShell,
    ShellBlock,
    TaskEndBlock,
    ToolBlock,
    UserBlock,
    block_seq,
)
from harnez.tui.widgets.delegation import DelegationPanel
from harnez.tui.widgets.run_lines import program_refused_line, rates_line
from harnez.tui.widgets.sizing import SizedByLayout

if TYPE_CHECKING:  # the event vocabulary (~100 ms of dataclass set-up) is imported after the first frame
    from textual._arrange import DockArrangeResult

    from harnez import events as ev
    from harnez.events import EventBody, StoredEvent

STATUS_LINE_WARNINGS = frozenset({"unpriced-model"})
"""Warnings the status line shows (as "unpriced" beside the cost) instead of a notice per task."""

KEEP_SCREENS = 3
"""While the view follows the end, the mounted blocks cover this many heights of the view: older
ones are dropped (`Transcript._trim`) and read again when scrolled to. Textual lays out every mounted
widget in every frame, visible or not (~0.15 ms each on this machine): with 300 blocks mounted a long
session's frames took 100-200 ms, and every key and streamed word waited for them."""

OPEN_BLOCKS = 30
"""Blocks mounted when a session is shown: about the newest (from the start of their exchange, see
`_exchange_start`); the rest of the window read is dropped before it is mounted and read again when
scrolled to. Mounting and laying out every block of the newest 200 events took ~130 ms of a long
session's resume, for `_trim` to drop most of them after its first frame."""

MAX_BLOCKS = 120
"""Mounted blocks kept while following the end, however short they are. The window is trimmed when a
task ends, and during one only once it holds more blocks than this."""

FOLD_AFTER = 40
"""Displayed blocks of one answer (with the rows of a list it ends with) beyond which, while the view
follows the end, those above the last `FOLD_SCREENS` heights of the view are folded
(`AnswerMarkdown.fold_above`) until the person scrolls up. A 10,000-word answer is ~250 blocks,
and each of its frames laid all of them out."""

FOLD_SCREENS = 2
"""Heights of the view, from its bottom, whose blocks are never folded: scrolling up shows the folded
ones again before the next frame, so one more height than the view is enough."""

HEAD_TOKENS = 120
"""Markdown tokens of a stored answer's head (the blocks above its tail, `Transcript._tail_first`)
mounted in one frame: 40 paragraphs (3 tokens each), fewer lists or tables, whose rows are widgets
of their own. Each batch is laid out once and folded before the next one comes."""

EARLY_OUTPUT_CALLS = 8
"""Calls whose live output is kept while their block is not shown yet (the newest ones)."""


def _exchange_start(blocks: list[Widget], index: int) -> int:
    """The nearest index at or before `index` where a person's message begins an exchange (0: none).

    The blocks before it can be dropped and read again later as a page of older events without
    splitting an exchange: a tool call's block drawn again without its result (a later event) would
    show it still waiting.
    """
    for at in range(min(index, len(blocks) - 1), 0, -1):
        if isinstance(blocks[at], UserBlock):
            return at
    return 0


def _lines_guess(block: Widget, width: int) -> int:
    """A block's height before it is laid out, guessed: its text wrapped at `width` and a margin
    line; 3 for a block without text of its own (a tool call's, folded)."""
    text = getattr(block, "text", None)
    if not isinstance(text, str):
        return 3
    return 1 + sum(max(1, -(-len(line) // width)) for line in text.splitlines() or [""])


@dataclass(slots=True)
class Change:
    """Blocks an event added and blocks it discarded."""

    added: list[Widget] = field(default_factory=list)
    removed: list[Widget] = field(default_factory=list)


def printable_body(body: EventBody) -> EventBody:
    """The body with every text made safe for the terminal: a prompt, an answer or a tool's output
    holding `ESC [2J` shows it as `\\x1b[2J` instead of clearing the screen. A command's output (a `!`
    line's, the shell tool's result) is left as it is: its block renders its colours and drops the
    rest of its terminal codes (`terminal_content`)."""
    from harnez.events import ShellLine, ToolCompleted, UnknownEvent

    if isinstance(body, UnknownEvent):
        return body
    payload = body.to_payload()
    safe = printable_data(payload)
    if isinstance(body, ShellLine):
        safe["output"] = payload["output"]
    elif isinstance(body, ToolCompleted) and is_terminal_output(body.name, body.content):
        safe["content"] = payload["content"]
    return type(body)(**safe)


class BlockBuilder:
    """Turns events, in order, into blocks; keeps the streaming answer, reasoning and tool calls open."""

    def __init__(self, shown: dict[str, ToolBlock] | None = None) -> None:
        self.answer: AssistantBlock | None = None
        self.reasoning: ReasoningBlock | None = None
        self.tools: dict[str, ToolBlock] = dict(shown or {})
        """Tool blocks by call id; `shown` are those already on screen (newer pages of history)."""
        self.turn_blocks: list[Widget] = []
        self.delegations: dict[str, DelegationPanel] = {}
        """The sub-agent panels of delegate calls, by call id."""
        self.prices_shown: str | None = None
        self.spare: AssistantBlock | None = None
        """An answer block mounted (hidden) while a turn waits for the model: its first words take it."""
        self.steering: list[UserBlock] = []
        """Steering messages sent and not delivered yet, oldest first: shown under the transcript until
        the model's next turn takes them (`steering-delivered`), then in it at that point."""
        self.task: int | None = None
        """The task of the event being fed."""
        self.waiting: dict[int, UserBlock] = {}
        """Queued prompts not started yet, by task id."""
        self.dropped: dict[int, UserBlock] = {}
        """Queued prompts marked dropped by the last cancel, by task id (one queued while the cancel
        was under way still runs: its `user-message` marks it queued again)."""

    async def feed(self, event: StoredEvent) -> Change:
        """The blocks this event adds or removes (text deltas extend the open answer instead)."""
        handler = _handlers().get(type(event.body))
        if handler is None:
            return Change()
        self.task = event.task
        change = await handler(self, event.seq, printable_body(event.body))
        self.turn_blocks.extend(change.added)
        return change

    def forget(self, blocks: list[Widget]) -> None:
        """Let go of tool blocks (and their sub-agent panels) that are no longer shown."""
        for block in blocks:
            # A newer call may reuse the id (scripted models do): only the entry of this block goes.
            if isinstance(block, ToolBlock) and self.tools.get(block.call_id) is block:
                del self.tools[block.call_id]
                self.delegations.pop(block.call_id, None)

    async def close(self) -> None:
        """End the open answer and reasoning (a tool call, a new message or the task's end)."""
        if self.answer is not None:
            await self.answer.close_stream()
        self.answer = None
        self.reasoning = None

    async def _on_user_message(self, seq: int, body: ev.UserMessage) -> Change:
        if body.mode == "steering":
            # Stored as it is sent, between the deltas of the answer streaming; the model reads it at
            # its next turn (`steering-delivered`), where the transcript shows it. Drawn below the
            # answer still streaming it seemed to come after words the model wrote before reading it,
            # and closing the answer for it cut the Markdown in two.
            self.steering.append(UserBlock(body.text, body.mode, seq))
            return Change()
        await self.close()
        if self.task is not None:
            self.waiting.pop(self.task, None)
            if (block := self.dropped.pop(self.task, None)) is not None:
                block.show_mode("queued")
        self.dropped.clear()  # a task started after the cancel: the others stay dropped
        return Change([UserBlock(body.text, body.mode, seq)])

    async def _on_steering_delivered(self, seq: int, body: ev.SteeringDelivered) -> Change:
        # Between turns: the answer before it is whole (its turn ended), the model reads it now.
        await self.close()
        # FIFO as the task's inbox; a message sent in an older page of history is made again here.
        block = self.steering.pop(0) if self.steering else UserBlock(body.text, "steering", seq)
        return Change([block])

    async def _on_prompt_queued(self, seq: int, body: ev.PromptQueued) -> Change:
        block = UserBlock(body.text, "queued", seq)
        if self.task is not None:
            self.waiting[self.task] = block
        return Change([block])

    async def _on_shell_line(self, seq: int, body: ev.ShellLine) -> Change:
        # Stored when the command ends, often between the deltas of an answer streaming meanwhile:
        # the answer goes on whole above it (closing it cut its Markdown in two, as a steering
        # message did).
        return Change(
            [
                ShellBlock(
                    body.command,
                    body.output,
                    body.exit_code,
                    duration=body.duration,
                    timed_out=body.timed_out,
                    cancelled=body.cancelled,
                    seq=seq,
                )
            ]
        )

    async def _on_turn_started(self, seq: int, body: ev.TurnStarted) -> Change:
        await self.close()
        self.turn_blocks = []
        return Change()

    async def _on_text_delta(self, seq: int, body: ev.TextDelta) -> Change:
        if self.answer is None:
            spare, self.spare = self.spare, None
            if spare is not None and spare.is_mounted:
                self.answer = spare
                await spare.take_first(body.text, seq)
                return Change([spare])
            self.answer = AssistantBlock(body.text, seq)
            return Change([self.answer])
        await self.answer.add_text(body.text)
        return Change()

    async def _on_reasoning_delta(self, seq: int, body: ev.ReasoningDelta) -> Change:
        if self.reasoning is None:
            self.reasoning = ReasoningBlock(body.text, seq)
            return Change([self.reasoning])
        self.reasoning.add_text(body.text)
        return Change()

    async def _on_tool_requested(self, seq: int, body: ev.ToolRequested) -> Change:
        await self.close()
        arguments = body.arguments if body.raw_arguments is None else body.raw_arguments  # what was sent
        shown = self.tools.get(body.call_id)
        if shown is not None and shown.seq > seq and not shown.requested:
            # The same call, drawn already from its later events on a newer page: complete that
            # block instead of drawing a second one. (A request of an older exchange reusing the id
            # of a newer call, as scripted models do, is a call of its own, as is a later request.)
            shown.adopt_request(arguments, seq)
            return Change()
        block = ToolBlock(body.call_id, body.name, arguments, seq)
        block.requested = True
        self.tools[block.call_id] = block
        return Change([block])

    async def _on_tool_arguments_delta(self, seq: int, body: ev.ToolArgumentsDelta) -> Change:
        block = self.tools.get(body.call_id)
        if block is not None and block.arguments is None:
            block.add_arguments(body.delta)
        return Change()

    def _tool(
        self, seq: int, call_id: str, name: str, arguments: dict[str, Any] | None
    ) -> tuple[ToolBlock, Change]:
        block = self.tools.get(call_id)
        if block is not None:
            return block, Change()
        block = ToolBlock(call_id, name, arguments, seq)
        self.tools[call_id] = block
        return block, Change([block])

    async def _on_approval_required(self, seq: int, body: ev.ApprovalRequired) -> Change:
        block, change = self._tool(seq, body.call_id, body.name, body.arguments)
        block.show_state(f"Waiting for approval{': ' + body.reason if body.reason else ''}")
        return change

    async def _on_approval_resolved(self, seq: int, body: ev.ApprovalResolved) -> Change:
        block, change = self._tool(seq, body.call_id, body.name, None)
        text = VERDICTS.get(body.verdict, str(body.verdict))
        block.show_state(text + (f": {body.reason}" if body.reason else ""))
        if body.call_id.partition("/")[0] in self.delegations:
            # A sub-agent's call asked here (`<delegate call id>/<its id>`): it runs, and ends, in the
            # child's session; nothing more of it comes here, and the task's end must not say it got no
            # result.
            block.has_result = True
        return change

    async def _on_tool_completed(self, seq: int, body: ev.ToolCompleted) -> Change:
        block, change = self._tool(seq, body.call_id, body.name, None)
        block.show_result(body.content, body.details, body.is_error)
        return change

    def _delegation(self, seq: int, call_id: str, agent: str, child: str) -> tuple[DelegationPanel, Change]:
        block, change = self._tool(seq, call_id, "delegate", None)
        panel = self.delegations.get(call_id)
        if panel is None:
            panel = self.delegations[call_id] = DelegationPanel(agent, child)
            block.attach(panel)
        return panel, change

    async def _on_delegate_started(self, seq: int, body: ev.DelegateStarted) -> Change:
        panel, change = self._delegation(seq, body.call_id, body.agent, body.child)
        panel.show_start(body)
        return change

    async def _on_delegate_finished(self, seq: int, body: ev.DelegateFinished) -> Change:
        panel, change = self._delegation(seq, body.call_id, body.agent, body.child)
        panel.show_end(body)
        return change

    async def _on_turn_retried(self, seq: int, body: ev.TurnRetried) -> Change:
        discarded: list[Widget] = [
            b for b in self.turn_blocks if isinstance(b, AssistantBlock | ReasoningBlock)
        ]
        await self.close()
        self.turn_blocks = []
        reason = body.reason.strip() or "the stream failed"
        reason += "" if reason.endswith((".", "?", "!")) else "."
        dropped = " The partial answer was discarded." if discarded else ""
        text = f"↻ Retrying (attempt {body.attempt}, in {body.delay:.1f} s): {reason}{dropped}"
        return Change([NoticeBlock(text, "warning", seq)], discarded)

    async def _on_compacted(self, seq: int, body: ev.Compacted) -> Change:
        how = "summarised" if body.summarised else "older tool results elided"
        text = (
            f"Context compacted ({how}): about {body.before_tokens} → {body.after_tokens} tokens. "
            "The full history stays in the session."
        )
        return Change([NoticeBlock(text, "info", seq)])

    async def _on_warning(self, seq: int, body: ev.WarningEvent) -> Change:
        if body.code in STATUS_LINE_WARNINGS:
            return Change()
        return Change([NoticeBlock(f"⚠ {body.message} [{body.code}]", "warning", seq)])

    async def _on_error(self, seq: int, body: ev.Error) -> Change:
        return Change([NoticeBlock(f"✗ {body.message}", "error", seq)])

    async def _on_model_changed(self, seq: int, body: ev.ModelChanged) -> Change:
        return Change([NoticeBlock(f"Model: {body.model}", "info", seq)])

    async def _on_answer_or_hook(self, seq: int, body: Any) -> Change:
        """Answers and hooks (harnez/tui/widgets/answers.py); a tool call's hook shows in its block."""
        from harnez.events import HookFailed, HookRan

        block = self.tools.get(getattr(body, "call_id", None) or "")
        if isinstance(body, HookRan | HookFailed) and block is not None:
            block.show_state(hook_text(body))
            return Change()
        return Change([answer_notice(body, seq)])

    async def _on_rates(self, seq: int, body: ev.Rates) -> Change:
        line = rates_line(body)  # shown when the prices change, not before every task's first cost
        if line is None or line == self.prices_shown:
            return Change()
        self.prices_shown = line
        return Change([NoticeBlock(line, "info", seq)])

    async def _on_program_refused(self, seq: int, body: ev.ProgramRefused) -> Change:
        return Change([NoticeBlock(program_refused_line(body), "warning", seq)])

    async def _on_finished(self, seq: int, body: ev.Finished) -> Change:
        await self.close()
        if body.stop == "cancelled":  # a cancel drops the prompts queued behind the task
            for queued in self.waiting.values():
                queued.show_mode("dropped")
            self.dropped, self.waiting = self.waiting, {}
        why = UNANSWERED.get(body.stop, f"the task ended ({body.stop})")
        for block in self.tools.values():
            if not block.has_result and block.seq < seq:  # its task ended: no result will come
                block.end_without_result(why)
        undelivered, self.steering = self.steering, []  # the task ended before a turn took them
        for message in undelivered:
            message.show_mode("undelivered")
        return Change([*undelivered, TaskEndBlock(body.stop, body.turns, body.error, seq)])


VERDICTS = {"allow": "Allowed once", "allow-session": "Allowed for this session", "deny": "Denied"}
UNANSWERED = {
    "cancelled": "the task was cancelled",
    "interrupted": "the task was interrupted",
    "failed": "the task failed",
}
"""Why a tool call shown without a result will get none, by how its task ended."""


@cache
def _handlers() -> dict[type[EventBody], Callable[[BlockBuilder, int, Any], Awaitable[Change]]]:
    """What each kind of event becomes on screen; kinds not listed (usage, cost, title changes…) show
    elsewhere (the status line, the title bar) or not at all. Built at the first event, not at import."""
    from harnez import events as ev

    return {
        ev.UserMessage: BlockBuilder._on_user_message,
        ev.PromptQueued: BlockBuilder._on_prompt_queued,
        ev.SteeringDelivered: BlockBuilder._on_steering_delivered,
        ev.ShellLine: BlockBuilder._on_shell_line,
        ev.TurnStarted: BlockBuilder._on_turn_started,
        ev.TextDelta: BlockBuilder._on_text_delta,
        ev.ReasoningDelta: BlockBuilder._on_reasoning_delta,
        ev.ToolRequested: BlockBuilder._on_tool_requested,
        ev.ToolArgumentsDelta: BlockBuilder._on_tool_arguments_delta,
        ev.ApprovalRequired: BlockBuilder._on_approval_required,
        ev.ApprovalResolved: BlockBuilder._on_approval_resolved,
        ev.ToolCompleted: BlockBuilder._on_tool_completed,
        ev.TurnRetried: BlockBuilder._on_turn_retried,
        ev.Compacted: BlockBuilder._on_compacted,
        ev.WarningEvent: BlockBuilder._on_warning,
        ev.Error: BlockBuilder._on_error,
        ev.ModelChanged: BlockBuilder._on_model_changed,
        ev.Finished: BlockBuilder._on_finished,
        ev.Answered: BlockBuilder._on_answer_or_hook,
        ev.AnswerNudged: BlockBuilder._on_answer_or_hook,
        ev.HookRan: BlockBuilder._on_answer_or_hook,
        ev.HookFailed: BlockBuilder._on_answer_or_hook,
        ev.StopHookExhausted: BlockBuilder._on_answer_or_hook,
        ev.DelegateStarted: BlockBuilder._on_delegate_started,
        ev.DelegateFinished: BlockBuilder._on_delegate_finished,
        ev.Rates: BlockBuilder._on_rates,
        ev.ProgramRefused: BlockBuilder._on_program_refused,
    }


SHOWN_TEXT = frozenset({"text-delta", "reasoning-delta"})
"""Events that add text to a block already shown (new blocks are `Change.added`)."""


class Transcript(SizedByLayout, VerticalScroll, can_focus=True):
    """The rendered events of one session; only a window of recent blocks is mounted.

    A layout that grows it asks for no second one (`SizedByLayout`): its scroll position follows the
    bottom within the layout itself (`anchor`), and a scrollbar that appears asks for its own.
    """

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    """

    class OlderWanted(Message):
        """The person scrolled to the top and older events exist."""

        def __init__(self, before: int) -> None:
            super().__init__()
            self.before = before
            """Load events with a sequence number below this."""

    class OutputBelow(Message):
        """Whether output arrived below a view the person scrolled up from, since it was released:
        posted only when that changes (a new block or the first words after the release, the view
        back at its end), never per streamed delta."""

        def __init__(self, arrived: bool) -> None:
            super().__init__()
            self.arrived = arrived

    class SteeringWaits(Message):
        """The steering messages sent and not yet delivered to the model changed (oldest first)."""

        def __init__(self, texts: list[str]) -> None:
            super().__init__()
            self.texts = texts

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._builder = BlockBuilder()
        self._steering_said: list[str] = []
        """The undelivered steering messages last posted (`SteeringWaits`)."""
        self.oldest_seq = 0
        """The first event sequence number rendered (0 before anything is loaded)."""
        self.has_older = False
        """Whether events older than `oldest_seq` exist and are not mounted."""
        self._loading_older = False
        self._trim_asked = False
        self._dropping: set[Widget] = set()
        """Blocks `_trim` is removing: no longer among `blocks` while their removal is under way."""
        self._fold_asked = False
        self._folded: list[AssistantBlock] = []
        """Answers with folded blocks (`_fold`), shown whole again when the person scrolls up."""
        self._folded_width = 0
        self._scrolled_open = False
        """Whether a scroll up showed folded blocks again and the view has not been folded at the end
        since: each scroll down folds what went out of view above (`_fold`), wherever the view is."""
        self._held: dict[Widget, Region] | None = None
        """The blocks' places while an answer's head is being mounted (`_hold_view`)."""
        self._held_tail: tuple[Widget | None, int] = (None, 0)
        self._places_held = False
        """Whether `_held` is `_hold_places`'s (blocks mounted above the view), until they are laid out."""
        self._early_output: dict[str, str] = {}
        """Live output of calls whose block is not shown yet, by call id (`live_output`)."""
        self._output_below = False
        """Whether output arrived since the view was released (`OutputBelow` said so)."""

    def on_mount(self) -> None:
        self.anchor()
        paint_without_skipping(self.screen)

    async def apply(self, event: StoredEvent) -> None:
        """Render one live event (none once the transcript's screen is gone: the app quitting, or
        another session shown, while the task's last events arrive)."""
        if not self.is_attached:
            return
        if not self.oldest_seq:
            self.oldest_seq = event.seq
        change = await self._builder.feed(event)
        self._say_steering()
        if change.added or event.body.kind in SHOWN_TEXT:
            self._arrived_below()
        for widget in change.removed:
            if widget.is_mounted:
                await widget.remove()
        added = [widget for widget in change.added if not widget.is_mounted]
        for widget in added:
            if isinstance(widget, ToolBlock) and widget.call_id in self._early_output:
                widget.show_live(self._early_output.pop(widget.call_id))
        if added:
            # One frame for a new answer's block and its first words, not a layout for each.
            with self.app.batch_update():
                await self.mount_all(added, before=self._builder.spare)
                for block in added:
                    if isinstance(block, AssistantBlock):
                        await block.start_stream()
            if len(self.children) > MAX_BLOCKS:
                self._trim_soon()
        if not self.is_attached:  # its screen went away while the blocks were mounted
            return
        if change.added:
            paint_after_batch(self.screen)
        if event.body.kind in ("turn-started", "finished"):
            await self.keep_spare()  # ready for the next turn, or for the next prompt's first turn
        if event.body.kind == "finished":
            self._trim_soon()  # between tasks: the removal's frame is in nobody's way
        elif (answer := self._builder.answer) is not None and answer.shown_blocks > FOLD_AFTER:
            self._fold_soon()

    def _say_steering(self) -> None:
        """Tell the screen which steering messages wait for the model, when that changed."""
        texts = [block.text for block in self._builder.steering]
        if texts != self._steering_said:
            self._steering_said = texts
            self.post_message(self.SteeringWaits(texts))

    def _arrived_below(self) -> None:
        """Output was added: said once per release of the view (a flag looked at for every delta)."""
        if self._anchor_released and not self._output_below:
            self._output_below = True
            self.post_message(self.OutputBelow(True))

    def _followed_again(self) -> None:
        """The view follows the end again: the sign of output below goes (said once)."""
        if self._output_below and not self._anchor_released:
            self._output_below = False
            self.post_message(self.OutputBelow(False))

    def jump_to_end(self) -> None:
        """Ctrl+End: the view at its end at once, following the stream again (Textual's `scroll_end`
        takes the release back)."""
        self.scroll_end(animate=False, immediate=True)
        self._followed_again()

    def live_output(self, call_id: str, text: str) -> None:
        """What the running command of tool call `call_id` printed just now, under its call (kept
        until the call's block shows, when its request's event has not arrived yet)."""
        block = self._builder.tools.get(call_id)
        if block is not None:
            block.show_live(text)
            self._arrived_below()
            return
        if call_id not in self._early_output and len(self._early_output) >= EARLY_OUTPUT_CALLS:
            self._early_output.pop(next(iter(self._early_output)))
        self._early_output[call_id] = (self._early_output.get(call_id, "") + text)[-LIVE_KEPT:]

    async def show_running_shell(self, command: str) -> RunningShell:
        """A block for a `!command` that runs now, its output shown live; the caller removes it."""
        block = RunningShell(command)
        await self.mount(block, before=self._builder.spare)
        return block

    async def keep_spare(self) -> None:
        """Keep a hidden answer block mounted last, for the next turn's first words to take.

        Those words then only append to a mounted block: its mount (its Markdown composed, its styles
        applied: 3-7 ms; the first answer block of a process also parses the stylesheets of the
        answer's widgets, 20-40 ms) happens when the session is shown, when a task ends or while the
        model works, not between the words and the frame that shows them. New blocks go before it; a
        taken one is replaced when the task ends (or when its next turn starts).
        """
        if self._builder.spare is not None:
            return
        spare = self._builder.spare = AssistantBlock()
        spare.display = False
        await self.mount(spare)
        await spare.start_stream()

    async def load_batch(self, events: list[StoredEvent], has_older: bool) -> None:
        """Render the newest stored events (opening or resuming a session): the newest exchanges of
        them (`OPEN_BLOCKS`), those that fill the view first (`_first_screen`), the rest right after."""
        if not events:
            return
        self.oldest_seq = events[0].seq
        self.has_older = has_older
        spare, self._builder.spare = self._builder.spare, None  # for live words, not stored ones
        try:
            blocks = await self._build(self._builder, events)
        finally:
            self._builder.spare = spare
        self._say_steering()
        start = _exchange_start(blocks, len(blocks) - OPEN_BLOCKS)
        if start:
            self._builder.forget(blocks[:start])
            blocks = blocks[start:]
            self.oldest_seq, self.has_older = block_seq(blocks[0]) or self.oldest_seq, True
        self._finish_answers(blocks, keep_open=self._builder.answer)
        split = self._first_screen(blocks)
        rest, first = blocks[:split], blocks[split:]
        self._loading_older = bool(rest)  # no older page read before those are mounted above
        self._tail_first(first)
        await self._mount_batch(first, before=self._builder.spare)
        if any(isinstance(block, AssistantBlock) and block.head_pending for block in first):
            self.call_after_refresh(self._mount_heads)
        if self._builder.answer is not None and self._builder.answer in first:
            await self._builder.answer.start_stream()
        if rest:
            self.call_after_refresh(self._mount_rest, rest)
        else:
            self.call_after_refresh(self._fill_view)

    def _first_screen(self, blocks: list[Widget]) -> int:
        """Where the newest blocks that (by a guess at their heights) fill the view begin: those are
        mounted first. All of them (0) while the view's size is not known yet."""
        width, height = self.scrollable_content_region.size
        if not width or not height:
            return 0
        lines, at = 0, len(blocks)
        while at > 0 and lines <= height:
            at -= 1
            lines += _lines_guess(blocks[at], width)
        return at

    def _tail_first(self, blocks: list[Widget]) -> None:
        """Have the stored answers among `blocks` mount first only their last blocks, those that fill
        the last `FOLD_SCREENS` heights of the view: the first frame shows the end of a long answer
        without building, mounting and laying out all of it (a 10,000-word answer is ~250 blocks).
        The blocks above come after that frame (`_mount_heads`)."""
        width, height = self.scrollable_content_region.size
        if width and height:
            for block in blocks:
                if isinstance(block, AssistantBlock) and block.finished:
                    block.show_tail_first(FOLD_SCREENS * height, width - 2)  # 2: the block's padding

    async def _mount_heads(self) -> None:
        """Mount the heads of the answers that showed their tails first (`_tail_first`), `HEAD_TOKENS`
        a frame, above their tails, in order; each batch, once laid out, is folded (`_fold`)
        with the next one's mount, so that every layout walks a batch and a few heights of the view.
        While the view follows the end nothing shown moves; once the person scrolled up, the rest
        comes at once, and the view stays on what it shows (`_hold_view`)."""
        if not self._places_held:  # blocks mounted above the view are not laid out yet
            self._held = None  # the blocks mounted last are laid out
        if not self.is_attached:
            return
        pending = [b for b in self.children if isinstance(b, AssistantBlock) and b.head_pending]
        following = self.is_vertical_scroll_end
        with self.app.batch_update():
            if following:
                await self._fold()
            if pending:
                self._hold_view(pending[0])
                await pending[0].mount_head(HEAD_TOKENS if following else None)
        if pending:
            self.refresh(layout=True)
            self.call_after_refresh(self._mount_heads)

    def _hold_view(self, answer: AssistantBlock) -> None:
        """Before blocks are mounted in `answer` above its tail: the blocks' places as last laid out,
        and how far its tail begins above its bottom. Textual keeps an anchored view at its end as
        blocks are added above; `arrange` keeps a released one (the person scrolled up before the new
        blocks were laid out) on what it shows."""
        top = answer.tail_top
        self._held = {child: child.virtual_region for child in self.children}
        self._held_tail = (
            answer,
            answer.region.bottom - top.region.y if top is not None and top.region else 0,
        )

    def _hold_places(self) -> None:
        """Before blocks are mounted above the view's: the blocks' places as last laid out (unless
        an answer's head holds them already), for `arrange` to keep a released view on what it
        shows (the person scrolled up before the new blocks were laid out). Without it the view
        would show the blocks pushed down for a frame, until a scroll after that frame mended it."""
        if self._held is None:
            self._held = {child: child.virtual_region for child in self.children}
            self._held_tail = (None, 0)
            self._places_held = True

    def _release_places(self) -> None:
        """Let go of `_hold_places`'s hold once its blocks are laid out (not of an answer's head's)."""
        if self._places_held:
            self._places_held = False
            if self._held_tail[0] is None:
                self._held = None

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement; while an answer's head is being mounted (`_hold_view`), a view the
        person scrolled up keeps what it shows (`_keep_view`)."""
        arranged = super().arrange(size, optimal)
        if self._held is not None:
            places = {placement.widget: placement.region for placement in arranged.placements}
            if self._anchor_released:
                self._keep_view(places)
            self._held = places
        return arranged

    def _keep_view(self, places: dict[Widget, Region]) -> None:
        """Scroll by as much as the block at the view's top moved (`_hold_view`): down by its new
        blocks above the tail when it is the answer and the view shows its tail, else by what came
        above it. The scroll position is set as Textual's compositor sets an anchored one's."""
        top = round(self.scroll_y)
        held = self._held or {}
        block = next((child for child, was in held.items() if was.bottom > top and child in places), None)
        if block is None:
            return
        was, now = held[block], places[block]
        answer, tail = self._held_tail
        in_tail = block is answer and top >= was.bottom - tail
        shift = now.bottom - was.bottom if in_tail else now.y - was.y
        if shift:
            y = self.scroll_y + shift
            self.set_reactive(VerticalScroll.scroll_y, y)
            self.set_reactive(VerticalScroll.scroll_target_y, y)
            self.vertical_scrollbar.position = y

    @property
    def mounting_older(self) -> bool:
        """Whether blocks read are still to be mounted: the rest of the window read when the session
        was shown, or a page of older events."""
        return self._loading_older

    async def _mount_rest(self, rest: list[Widget]) -> None:
        """Mount the older blocks of the window read above the first ones, once those are painted.
        The view does not move: it follows the end, or the person scrolled up meanwhile and the
        layout that places them keeps what it shows (`_hold_places`)."""
        if self.is_attached:
            self._hold_places()
            await self._mount_batch(rest, before=0)
            if self._builder.answer is not None and self._builder.answer in rest:
                await self._builder.answer.start_stream()  # a task's answer still being written
            self.call_after_refresh(self._release_places)
        self._loading_older = False
        self.call_after_refresh(self._fill_view)

    async def follow(self, events: list[StoredEvent], has_older: bool) -> None:
        """Render the newest stored events (`load_batch`) of a session whose live events follow, with a
        spare answer block ready for its next turn (`keep_spare`)."""
        await self.load_batch(events, has_older)
        await self.keep_spare()
        self._trim_soon()

    def _fill_view(self) -> None:
        """Load older events when the view sits at the top once laid out: the blocks do not fill it,
        or the person scrolled up while they were being mounted."""
        if self.scroll_y <= 0:
            self.want_older()

    async def prepend(self, events: list[StoredEvent], has_older: bool) -> None:
        """Render older events above the mounted ones; the layout that places them keeps the view on
        what it shows (`_hold_places`, `arrange`)."""
        self._loading_older = False
        self.has_older = has_older
        if not events:
            return
        self.oldest_seq = events[0].seq
        shown = {b.call_id: b for b in self.blocks if isinstance(b, ToolBlock)}
        blocks = await self._build(BlockBuilder(shown), events)
        if not blocks:  # nothing drawn for that page (usage, cost…): look further back
            self.call_after_refresh(self._fill_view)
            return
        self._finish_answers(blocks, keep_open=None)
        self._hold_places()
        await self._mount_batch(blocks, before=0 if self.children else None)
        self.call_after_refresh(self._release_places)
        self.call_after_refresh(self._fill_view)

    async def _mount_batch(self, blocks: list[Widget], before: int | Widget | None = None) -> None:
        """Mount many blocks with one frame at the end, not a frame per block mounted."""
        with self.app.batch_update():
            await self.mount_all(blocks, before=before)
        self.refresh(layout=True)  # the screen paints once the batch is over

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

    def _trim_soon(self) -> None:
        """Drop the blocks beyond the kept window once the screen has laid out the new ones (their
        heights are known then, and the removal is not in the way of the frame that shows them)."""
        if not self._trim_asked:
            self._trim_asked = True
            self.call_after_refresh(self._trim)

    async def _trim(self) -> None:
        """While the view is at the end: drop the oldest blocks that lie wholly above the last
        `KEEP_SCREENS` heights of the view, or beyond `MAX_BLOCKS`; not from a block still being
        written on (the streaming answer or reasoning; a tool call waiting for its result, unless
        beyond `MAX_BLOCKS`: an interrupted task's call never gets one)."""
        self._trim_asked = False
        if not self.is_attached or not self.is_vertical_scroll_end:
            return  # the person reads further up: what they read stays
        blocks = self.blocks
        cutoff = self.virtual_size.height - KEEP_SCREENS * max(self.scrollable_content_region.height, 1)
        count = 0
        for block in blocks[:-1]:
            if not self._droppable(block, cutoff, beyond=len(blocks) - count > MAX_BLOCKS):
                break
            count += 1
        whole = _exchange_start(blocks, count)  # whole exchanges: a call's result is with its call
        if len(blocks) - whole <= MAX_BLOCKS:
            count = whole
        if count:
            old = blocks[:count]
            self._dropping.update(old)  # out of `blocks` at once, not only once removed
            self._builder.forget(old)
            self.oldest_seq = block_seq(blocks[count]) or self.oldest_seq
            self.has_older = True
            try:
                await self.remove_children(old)
            finally:
                self._dropping.difference_update(old)
        self._fold_soon()  # once the removal is laid out: a long answer kept

    def _fold_soon(self) -> None:
        """Fold long answers' first blocks once the screen has laid out their last ones."""
        if not self._fold_asked:
            self._fold_asked = True
            self.call_after_refresh(self._fold)

    async def _fold(self) -> None:
        """While the view is at the end, or once the person scrolls down again after a scroll up
        showed folded blocks (`_scrolled_open`): fold the blocks of answers longer than `FOLD_AFTER`
        blocks that lie wholly above the last `FOLD_SCREENS` heights of the view (out of view). Their
        place stays, so the view does not move; scrolling up shows them again (`watch_scroll_y`)."""
        self._fold_asked = False
        if not self.is_attached or not (self.is_vertical_scroll_end or self._scrolled_open):
            return
        region = self.scrollable_content_region
        cutoff = region.bottom - FOLD_SCREENS * max(region.height, 1)
        long = [b for b in self.blocks if isinstance(b, AssistantBlock) and b.shown_blocks > FOLD_AFTER]
        for block in long:
            if await block.fold_above(cutoff) and block not in self._folded:
                self._folded.append(block)
                self._folded_width = region.width
        if self.is_vertical_scroll_end:
            self._scrolled_open = False  # folded as far as the end's view goes

    def unfold(self) -> None:
        """Show every folded block again (the heights of the folded space are those of their last
        layout: nothing moves at the same width)."""
        folded, self._folded = self._folded, []
        with self.app.batch_update():
            for block in folded:
                if block.is_attached:
                    block.unfold()

    def _droppable(self, block: Widget, cutoff: int, beyond: bool) -> bool:
        """Whether `_trim` may drop this block (and so go on to the next one)."""
        if block in (self._builder.answer, self._builder.reasoning) or block.virtual_region == Region():
            return False  # still streaming, or not laid out yet (a laid-out block lies below the first)
        region = block.virtual_region_with_margin
        if beyond:
            return True
        waiting = isinstance(block, ToolBlock) and not block.has_result
        return region.bottom <= cutoff and not waiting

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._followed_again()  # scrolled back to the end (Page Down, the wheel, a prompt sent)
        if new_value < old_value and self._folded and self._anchor_released:
            self.unfold()  # the person scrolls up (a layout that shrank the view moves it too)
            self._scrolled_open = True
        elif new_value > old_value and self._scrolled_open:
            self._fold_soon()  # and down again: what went out of view above folds again
        if new_value <= 0 < old_value or (new_value <= 0 and self.max_scroll_y == 0):
            self.want_older()

    def on_resize(self, event: events.Resize) -> None:
        if self._folded and self.scrollable_content_region.width != self._folded_width:
            self.unfold()  # their wrapped heights change with the width: fold again once laid out
            self._fold_soon()

    def want_older(self) -> None:
        """Ask for the events before the oldest rendered one, once at a time."""
        if self.has_older and not self._loading_older and self.oldest_seq > 1:
            self._loading_older = True
            self.post_message(self.OlderWanted(self.oldest_seq))

    @property
    def blocks(self) -> list[Widget]:
        """The mounted blocks, oldest first (not the spare answer block while nothing took it)."""
        return [
            block
            for block in self.children
            if block is not self._builder.spare and block not in self._dropping
        ]
