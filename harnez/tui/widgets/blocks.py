"""The blocks a transcript is made of: prompts, answers, reasoning, tool calls, notices, task ends."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from harnez.text import is_terminal_output, terminal_lines
from harnez.tui.widgets.sizing import SizedByLayout
from harnez.tui.widgets.terminal import terminal_content

if TYPE_CHECKING:
    from harnez.tui.widgets.markdown import AnswerMarkdown

LONG_RESULT_LINES = 12
"""Tool results longer than this start collapsed."""

STREAM_INTERVAL = 1 / 60
"""Seconds between two appends to a streaming answer's Markdown: the deltas that arrive in between are
appended together, so a fast stream costs one layout per interval, not one per delta."""

STOP_LABELS = {
    "completed": "✓ Completed",
    "cancelled": "■ Cancelled",
    "failed": "✗ Failed",
    "incomplete": "… Incomplete",
    "interrupted": "⚡ Interrupted",
}


class UserBlock(Static):
    """A prompt the person sent (a steering message or a queued prompt is marked as such)."""

    DEFAULT_CSS = """
    UserBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $boost;
    }
    UserBlock.-steering { border-left: thick $warning; }
    UserBlock.-queued { border-left: thick $foreground 30%; color: $text-muted; }
    UserBlock.-dropped { border-left: thick $foreground 30%; color: $text-muted; }
    UserBlock.-undelivered { border-left: thick $foreground 30%; color: $text-muted; }
    """

    def __init__(self, text: str, mode: str = "prompt", seq: int = 0) -> None:
        super().__init__(self._content(text, mode), classes=f"-{mode}")
        self.seq = seq
        self.text = text
        self.mode = mode

    @staticmethod
    def _content(text: str, mode: str) -> Content:
        label = USER_LABELS.get(mode, "")
        return Content.assemble((label, "italic"), (text, "strike" if mode in STRUCK else ""))

    def show_mode(self, mode: str) -> None:
        """Mark a queued prompt `dropped` (a cancel dropped it before it ran), or `queued` again; a
        steering message `undelivered` (its task ended before the model's next turn)."""
        self.remove_class(f"-{self.mode}")
        self.mode = mode
        self.add_class(f"-{mode}")
        self.update(self._content(self.text, mode))


USER_LABELS = {
    "steering": "steering: ",
    "queued": "queued: ",
    "dropped": "dropped, not sent (Up recalls it): ",
    "undelivered": "steering, not delivered (the task ended first): ",
}
"""What marks a prompt that is not a plain one, by its mode."""

STRUCK = frozenset({"dropped", "undelivered"})
"""The modes of a prompt the model never read."""


class AssistantBlock(SizedByLayout, Vertical):
    """The assistant's answer, as Markdown: a finished one in one go, a streaming one by appends.

    A streaming answer's deltas are appended at most every `STREAM_INTERVAL` (those in between are
    joined), without re-rendering the whole message.
    """

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantBlock Markdown { margin: 0; padding: 0; background: transparent; }
    """

    def __init__(self, text: str = "", seq: int = 0) -> None:
        super().__init__()
        self.seq = seq
        self.text = text
        """The answer so far (what the Markdown shows once streamed)."""
        self.finished = False
        """Whether the answer is complete: set before mounting, it is rendered whole, with no stream."""
        self._markdown: AnswerMarkdown | None = None
        self._streaming = False
        self._pending: list[str] = []
        self._flush_timer: Timer | None = None
        self._flush_scheduled = False
        self._last_flush = 0.0
        self._tail: tuple[int, int] | None = None

    def finish(self) -> None:
        """Mark a not yet mounted answer complete: it then renders its text at once when mounted."""
        self.finished = True

    def compose(self) -> ComposeResult:
        # Imported with the first answer: Markdown and its parser are not needed for the first frame.
        from harnez.tui.widgets.markdown import AnswerMarkdown

        self._markdown = AnswerMarkdown(self.text, self._tail) if self.finished else AnswerMarkdown()
        yield self._markdown

    def show_tail_first(self, rows: int, width: int) -> None:
        """Before its mount, for a finished answer: mount only its last blocks, those that fill about
        `rows` rows at `width` (a guess from their text); `mount_head` mounts the ones above them."""
        self._tail = (rows, width)

    @property
    def head_pending(self) -> bool:
        """Whether blocks above the ones mounted first (`show_tail_first`) are still to be mounted."""
        return self._markdown is not None and self._markdown.head_pending

    @property
    def tail_top(self) -> Widget | None:
        """The first of the blocks mounted first (`show_tail_first`): the others go above it."""
        return None if self._markdown is None else self._markdown.tail_top

    async def mount_head(self, tokens: int | None = None) -> None:
        """Mount the next blocks above those mounted first, in order: about `tokens` of their Markdown's
        tokens, or all (None)."""
        if self._markdown is not None:
            await self._markdown.mount_head(tokens)

    async def start_stream(self) -> None:
        """Once mounted: show the text so far, and stream what follows (no-op for a finished answer)."""
        if self._markdown is None or self._streaming or self.finished:
            return
        self._streaming = True
        self._last_flush = time.monotonic()
        if self.text:
            await self._markdown.append(self.text)
        else:  # a spare block: its first words will fill a paragraph already mounted
            await self._markdown.open_paragraph()

    async def take_first(self, text: str, seq: int) -> None:
        """Begin an answer mounted, hidden and streaming, before its turn had output (the transcript's
        spare) with its first words: shown, and the words appended at once."""
        self.seq, self.text, self.display = seq, text, True
        self._last_flush = time.monotonic()
        if self._markdown is not None and text:
            await self._markdown.append(text)

    async def add_text(self, text: str) -> None:
        """Append a streamed fragment (shown within `STREAM_INTERVAL`)."""
        self.text += text
        if not self._streaming or not text:
            return
        self._pending.append(text)
        if self._flush_scheduled:
            return
        self._flush_scheduled = True
        delay = self._last_flush + STREAM_INTERVAL - time.monotonic()
        if delay > 0:
            self._flush_timer = self.set_timer(delay, self._flush)
        else:
            self.call_later(self._flush)  # a timer of 0 s never fires (Textual divides by its interval)

    async def _flush(self) -> None:
        self._flush_scheduled = False
        self._flush_timer = None
        if not self._pending or self._markdown is None:
            return
        fragment = "".join(self._pending)
        self._pending.clear()
        self._last_flush = time.monotonic()
        await self._markdown.append(fragment)
        await self._markdown.settle_fences()

    async def close_stream(self) -> None:
        """Show what is still pending and stop streaming (the answer is complete)."""
        if not self._streaming:
            return
        self._streaming = False
        if self._flush_timer is not None:
            self._flush_timer.stop()
        await self._flush()
        if self._markdown is not None:  # after the frame that shows the last words
            self.call_after_refresh(self._markdown.settle_fences, True)

    @property
    def shown_blocks(self) -> int:
        """How many blocks of its Markdown are displayed (not folded)."""
        return 0 if self._markdown is None else self._markdown.shown_blocks

    async def fold_above(self, bottom: int) -> int:
        """Fold the blocks of its Markdown that end at or above the screen's row `bottom`
        (`AnswerMarkdown.fold_above`); returns how many."""
        return 0 if self._markdown is None else await self._markdown.fold_above(bottom)

    def unfold(self) -> bool:
        """Show its folded blocks again; returns whether any were folded."""
        return self._markdown is not None and self._markdown.unfold()

    def on_unmount(self) -> None:
        self._streaming = False
        self._pending.clear()
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None


class Fold(Collapsible):
    """A `Collapsible` whose body is composed only when it is first expanded.

    A collapsed one is two widgets (itself and its title) instead of four, which keeps mounting and
    laying out a long transcript cheap: most tool arguments, results and reasoning stay collapsed.
    """

    def compose(self) -> ComposeResult:
        yield self._title
        if not self.collapsed:
            yield self.Contents(*self._contents_list)

    def _watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and self.is_mounted and not self.query_children(Collapsible.Contents):
            self.mount(self.Contents(*self._contents_list))
        super()._watch_collapsed(collapsed)


class ReasoningBlock(Fold):
    """The model's reasoning, collapsed by default."""

    DEFAULT_CSS = """
    ReasoningBlock { margin: 1 0 0 0; border-top: none; padding: 0; background: transparent; }
    ReasoningBlock Static { color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "", seq: int = 0) -> None:
        self.seq = seq
        self.text = text
        self._body = Static(text, markup=False)
        super().__init__(self._body, title="Reasoning", collapsed=True)

    def add_text(self, text: str) -> None:
        """Append a streamed fragment."""
        self.text += text
        self._body.update(self.text)


class DiffView(Static):
    """A unified diff with added, removed and hunk lines coloured from the theme."""

    COMPONENT_CLASSES = {"diff--added", "diff--removed", "diff--hunk", "diff--file"}
    DEFAULT_CSS = """
    DiffView { padding: 0 1; background: $surface; }
    DiffView > .diff--added { color: $success; }
    DiffView > .diff--removed { color: $error; }
    DiffView > .diff--hunk { color: $accent; }
    DiffView > .diff--file { text-style: bold; }
    """

    def __init__(self, diff: str) -> None:
        super().__init__()
        self.diff = diff

    def render(self) -> Content:
        lines = [Content.styled(line, self._line_style(line)) for line in self.diff.splitlines()]
        return Content("\n").join(lines)

    def _line_style(self, line: str) -> Any:
        if line.startswith(("+++", "---")):
            name = "diff--file"
        elif line.startswith("+"):
            name = "diff--added"
        elif line.startswith("-"):
            name = "diff--removed"
        elif line.startswith("@@"):
            name = "diff--hunk"
        else:
            return ""
        return self.get_visual_style(name)


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def _summary(arguments: Any) -> str:
    if isinstance(arguments, dict):
        for key in ("path", "command", "pattern", "file_path"):
            if key in arguments:
                return str(arguments[key])
    return ""


LIVE_LINES = 8
"""How many of a running command's last lines show under its call (or `!` line) while it runs."""
LIVE_KEPT = 8192
"""Characters of a running command's output kept for that (its start is dropped: lines are long)."""
LIVE_REDRAW = 0.05
"""Seconds between two redraws of a running command's lines."""


class LiveTail(Static):
    """The last lines a running command printed, updated as more arrives (never stored: the call's
    result replaces it when the command ends). Redrawn at most every `LIVE_REDRAW` seconds, so a
    command that floods its output costs a few redraws a second, not one per read."""

    DEFAULT_CSS = """
    LiveTail { color: $text-muted; height: auto; }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.kept = ""
        self._shown = ""
        self._ready = False
        self._redraw: Timer | None = None

    def add(self, text: str) -> None:
        """More output (shown now, or with the next redraw when one is due soon)."""
        self.kept = (self.kept + text)[-LIVE_KEPT:]
        if self._redraw is None and self._ready:
            self._redrawn()

    def on_mount(self) -> None:
        self._ready = True  # (`is_mounted` turns true only after this handler)
        self._redrawn()

    def _redrawn(self) -> None:
        """Show what is kept, if it changed; then wait `LIVE_REDRAW` before the next redraw."""
        self._redraw = None
        if self.kept != self._shown:
            self._shown = self.kept
            self.update(self.view())
            self._redraw = self.set_timer(LIVE_REDRAW, self._redrawn)

    def view(self) -> Content:
        """The last `LIVE_LINES` lines as the command's block shows them when it ends (`terminal_content`:
        colours rendered, other terminal codes dropped, a progress bar at its last state)."""
        kept = self.kept.removesuffix("\n")  # the line end of the last complete line
        return terminal_content(kept, last_lines=LIVE_LINES)


class ToolBlock(Vertical):
    """One tool call: its name and arguments, its approval state, then its result."""

    DEFAULT_CSS = """
    ToolBlock { height: auto; margin: 1 0 0 0; border-left: thick $secondary; padding: 0 0 0 1; }
    ToolBlock.-error { border-left: thick $error; }
    ToolBlock .tool-title { text-style: bold; }
    ToolBlock .tool-state { color: $warning; }
    ToolBlock .tool-error { color: $error; }
    ToolBlock Collapsible { border-top: none; padding: 0; background: transparent; }
    """

    def __init__(self, call_id: str, name: str, arguments: Any = None, seq: int = 0) -> None:
        super().__init__()
        self.seq = seq
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.partial_arguments = ""
        self.has_result = False
        """Whether the call's result is shown (a call still running gets it later)."""
        self.requested = False
        """Whether the block was drawn from the call's request (`tool-requested`), not only from its
        later events (an approval, its result) met on a newer page of history."""
        self._title = Static(self._title_content(), classes="tool-title")
        self._arguments = Static(_arguments_text(arguments or {}), markup=False)
        self._parts: list[Widget] = []
        self._composed = False
        self._live: LiveTail | None = None

    def _title_content(self) -> Content:
        summary = _summary(self.arguments)
        return Content.assemble(
            ("⚙ ", ""), (self.tool_name, "bold"), ("  " + summary if summary else "", "dim")
        )

    def compose(self) -> ComposeResult:
        self._composed = True
        yield self._title
        yield Fold(self._arguments, title="Arguments", collapsed=True)
        yield from self._parts

    def _add(self, widget: Widget) -> None:
        """A part after those shown: yielded by `compose` if it has not run yet, else mounted. (Not
        `is_mounted`: it turns true only once the mount ends, after `compose` ran, and a part added
        in between was neither composed nor mounted — a running command's first lines, an approval's
        state or a result that arrived while the block was being mounted.)"""
        self._parts.append(widget)
        if self._composed:
            self.mount(widget)

    def attach(self, widget: Widget) -> None:
        """Another part under the arguments (a delegate call's sub-agent: widgets/delegation.py)."""
        self._add(widget)

    def adopt_request(self, arguments: Any, seq: int) -> None:
        """This call's own request, met after its later events (it was on an older page of history)."""
        self.seq, self.arguments, self.requested = seq, arguments, True
        self._title.update(self._title_content())
        self._arguments.update(_arguments_text(arguments or {}))

    def add_arguments(self, delta: str) -> None:
        """A streamed fragment of the call's arguments."""
        self.partial_arguments += delta
        self._arguments.update(self.partial_arguments)

    def show_state(self, text: str) -> None:
        """An approval request or answer, shown under the arguments."""
        self._add(Static(text, classes="tool-state", markup=False))

    def show_live(self, text: str) -> None:
        """Output the call's running command printed just now (until its result replaces it)."""
        if self.has_result:
            return
        if self._live is None:
            self._live = LiveTail()
            self._add(self._live)
        self._live.add(text)

    def end_without_result(self, why: str) -> None:
        """The task ended before this call got a result (cancelled while it waited for approval or
        ran, failed, interrupted): none will come, so the block says so instead of still waiting."""
        self.has_result = True
        if self._live is not None:
            self._parts.remove(self._live)
            if self._live.parent is not None:
                self._live.remove()
            self._live = None
        self._add(Static(f"No result: {why}.", classes="tool-state", markup=False))

    def show_result(self, content: Any, details: dict[str, Any] | None, is_error: bool) -> None:
        """The call's result: a diff when there is one, else the text (collapsed when long)."""
        self.has_result = True
        if self._live is not None:
            self._parts.remove(self._live)
            if self._live.parent is not None:  # composed or mounted (is_mounted may not say so yet)
                self._live.remove()
            self._live = None
        details = details or {}
        self.set_class(is_error, "-error")
        if details.get("diff"):
            self._add(DiffView(str(details["diff"])))
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=2)
        if not text:
            return
        shown = terminal_content(text) if is_terminal_output(self.tool_name, content) else text
        body = Static(shown, markup=False, classes="tool-error" if is_error else "")
        long = text.count("\n") >= LONG_RESULT_LINES or bool(details.get("diff"))
        meta = f" (exit {details['exit_code']})" if "exit_code" in details else ""
        self._add(Fold(body, title=f"Result{meta}", collapsed=long))


class ShellBlock(Vertical):
    """A `!command` the person ran: the command, how it ended, and its output (collapsed when long)."""

    DEFAULT_CSS = """
    ShellBlock { height: auto; margin: 1 0 0 0; border-left: thick $accent; padding: 0 0 0 1; }
    ShellBlock.-error { border-left: thick $error; }
    ShellBlock .shell-output { color: $text-muted; }
    ShellBlock Collapsible { border-top: none; padding: 0; background: transparent; }
    """

    def __init__(
        self,
        command: str,
        output: str,
        exit_code: int | None,
        *,
        duration: float | None = None,
        timed_out: bool = False,
        cancelled: bool = False,
        seq: int = 0,
    ) -> None:
        super().__init__()
        self.seq = seq
        self.command = command
        self.output = output
        self.exit_code = exit_code
        self._end = self._ending(exit_code, duration, timed_out, cancelled)
        self.set_class(timed_out or cancelled or exit_code != 0, "-error")

    @staticmethod
    def _ending(exit_code: int | None, duration: float | None, timed_out: bool, cancelled: bool) -> str:
        if timed_out:
            ending = "timed out"
        elif cancelled:
            ending = "cancelled"
        else:
            ending = f"exit {exit_code}"
        return ending + (f" · {duration:.1f} s" if duration is not None else "")

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("$ ", "bold"), (self.command, "bold"), ("  " + self._end, "dim")))
        if not self.output:
            return
        body = Static(terminal_content(self.output), classes="shell-output")
        lines = len(terminal_lines(self.output))
        if lines > LONG_RESULT_LINES:
            yield Fold(body, title=f"Output ({lines} lines)", collapsed=True)
        else:
            yield body


class RunningShell(Vertical):
    """A `!command` still running: the command and its last lines of output, live. Its `shell-line`
    event, once stored, shows it for good (a `ShellBlock`); this one is then removed."""

    DEFAULT_CSS = """
    RunningShell { height: auto; margin: 1 0 0 0; border-left: thick $accent; padding: 0 0 0 1; }
    """

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command
        self.tail = LiveTail()

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("$ ", "bold"), (self.command, "bold"), ("  running…", "dim")))
        yield self.tail


class NoticeBlock(Static):
    """A warning, an error, a retry or a compaction, inline in the transcript."""

    DEFAULT_CSS = """
    NoticeBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoticeBlock.-warning { color: $warning; }
    NoticeBlock.-error { color: $error; text-style: bold; }
    """

    def __init__(self, text: str, level: str = "info", seq: int = 0) -> None:
        super().__init__(text, markup=False, classes=f"-{level}")
        self.seq = seq


class TaskEndBlock(Static):
    """How a task ended: completed, cancelled, failed with its reason, incomplete or interrupted."""

    DEFAULT_CSS = """
    TaskEndBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    TaskEndBlock.-completed { color: $success; }
    TaskEndBlock.-failed, TaskEndBlock.-interrupted { color: $error; }
    TaskEndBlock.-cancelled, TaskEndBlock.-incomplete { color: $warning; }
    """

    def __init__(self, stop: str, turns: int | None, error: str | None, seq: int = 0) -> None:
        label = STOP_LABELS.get(stop, stop)
        parts = [label]
        if turns:
            parts.append(f"{turns} turn{'s' if turns != 1 else ''}")
        text = " · ".join(parts) + (f": {error}" if error else "")
        super().__init__(text, markup=False, classes=f"-{stop}")
        self.seq = seq
        self.stop = stop


def block_seq(widget: Widget) -> int:
    """The sequence number of the event that started a block (0 when unknown)."""
    return int(getattr(widget, "seq", 0))
