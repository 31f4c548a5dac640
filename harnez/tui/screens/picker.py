"""The resume picker: sessions newest first, server-side search as you type, open, rename, delete."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from harnez.errors import HarnezError
from harnez.text import printable
from harnez.tui.bridge import paint_without_skipping
from harnez.tui.screens.dialogs import ConfirmDialog, RenameDialog

if TYPE_CHECKING:
    from harnez.server import SessionRecord
    from harnez.server.server import Server

PAGE_SIZE = 50
SEARCH_DELAY = 0.05
"""Seconds of quiet typing before a search runs."""
LOAD_MORE_MARGIN = 10
REFRESH_EVERY = 2.0
"""Seconds between refreshes of the listed rows (titles, status and new sessions from any process)."""
"""Load the next page when the selection comes this close to the end."""
_MATCH = re.compile(r"\[([^\]]*)\]")


def relative_time(moment: float, now: float | None = None) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 d ago`, or the date for older moments."""
    delta = (now or time.time()) - moment
    if delta < 60:
        return "just now"
    if delta < 3600:
        return f"{int(delta // 60)} min ago"
    if delta < 86400:
        return f"{int(delta // 3600)} h ago"
    if delta < 7 * 86400:
        return f"{int(delta // 86400)} d ago"
    return time.strftime("%Y-%m-%d", time.localtime(moment))


def snippet_content(snippet: str) -> Content:
    """A search snippet with its [bracketed] matches highlighted."""
    parts: list[tuple[str, str] | str] = []
    position = 0
    for match in _MATCH.finditer(snippet):
        parts.append(snippet[position:match.start()])
        parts.append((match.group(1), "bold reverse"))
        position = match.end()
    parts.append(snippet[position:])
    return Content.assemble(*parts)


def origin_tag(record: SessionRecord) -> tuple[str | tuple[str, str], ...]:
    """`  claude-code` (the harness an imported session came from), or nothing for Harnez's own."""
    origin = getattr(record, "origin", None)
    return ("  ", (origin, "reverse")) if origin else ()


def session_row(record: SessionRecord, snippet: str | None) -> Content:
    """The lines of one picker row: title, id and status; workspace and times; the match."""
    head = Content.assemble((printable(record.display_title, one_line=True), "bold"), "  ",
                            (record.id[:8], "dim"), "  ", (record.status, "italic"), *origin_tag(record))
    info = Content.assemble((printable(record.workspace, one_line=True), "dim"), "  created ",
                            relative_time(record.created_at), " · active ", relative_time(record.updated_at))
    lines = [head, info]
    if snippet:
        lines.append(Content.assemble("  ", snippet_content(printable(" ".join(snippet.split()), one_line=True))))
    return Content("\n").join(lines)


class PickerScreen(Screen[str | None]):
    """Lists sessions to resume; dismisses with the chosen session's id, or None."""

    CSS_PATH = "picker.tcss"
    AUTO_FOCUS = "#picker-search"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("ctrl+t", "toggle_scope", "This workspace / all", priority=True),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
    ]

    def __init__(self, server: Server, workspace: Path, all_workspaces: bool = False) -> None:
        super().__init__()
        self.server = server
        self.workspace = workspace
        self.all_workspaces = all_workspaces
        """Whether sessions of every workspace are listed, not only this one."""
        self.records: dict[str, SessionRecord] = {}
        self.snippets: dict[str, str] = {}
        self.shown_query = ""
        """The search the listed rows answer ("" for the unfiltered list)."""
        self._cursor: str | None = None
        self._loading = False
        self._search_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Label(self._heading(), id="picker-heading")
        yield Input(placeholder="Search titles, workspaces, ids and conversations…", id="picker-search")
        yield OptionList(id="picker-sessions")
        yield Static("", id="picker-empty")
        yield Static("Enter open · Ctrl+T this workspace/all · Ctrl+R rename · Ctrl+D delete · Esc close",
                     id="picker-keys")

    def _heading(self) -> str:
        scope = "all workspaces" if self.all_workspaces else f"this workspace ({self.workspace})"
        return f"Resume a session — {scope}"

    async def on_mount(self) -> None:
        paint_without_skipping(self)
        self.watch(self.query_one(OptionList), "scroll_y", self._scrolled, init=False)
        # The first page is read before the screen's first paint (about a millisecond): painted in
        # the same frame as the screen, the rows do not wait for a second frame.
        await self._show_page(reset=True)
        self.set_interval(REFRESH_EVERY, self.refresh_rows)

    @property
    def query_text(self) -> str:
        """What is typed in the search box."""
        return self.query_one("#picker-search", Input).value.strip()

    # loading ----------------------------------------------------------------------------------

    @work(group="page", exclusive=True)
    async def load_page(self, reset: bool, keep: str | None = None) -> None:
        """Fetch the first page (reset) or the next one, and show it (`keep` stays highlighted)."""
        await self._show_page(reset, keep)

    async def _show_page(self, reset: bool, keep: str | None = None) -> None:
        self._loading = True
        query = self.query_text
        try:
            page = await self.server.list_sessions(
                query or None, None if self.all_workspaces else self.workspace,
                None if reset else self._cursor, PAGE_SIZE)
        finally:
            self._loading = False
        options = self.query_one(OptionList)
        if reset:
            self.shown_query = query
            options.clear_options()
            self.records.clear()
            self.snippets.clear()
        self._cursor = page.next_cursor
        self.snippets.update(page.snippets)
        fresh = [r for r in page.sessions if r.id not in self.records]
        self.records.update((r.id, r) for r in fresh)
        options.add_options([Option(session_row(r, page.snippets.get(r.id)), id=r.id) for r in fresh])
        if reset and options.option_count:
            index = options.get_option_index(keep) if keep in self.records else 0
            options.highlighted = index
        self._show_empty()

    @work(group="refresh", exclusive=True)
    async def refresh_rows(self) -> None:
        """Show changes made since the rows were read: titles, status, activity, deletions, and
        new sessions at the top of an unfiltered list. Rows further down are updated in place."""
        if self._loading or not self.is_active:
            return
        fresh = await self.server.reload_sessions(self.records.values())
        options = self.query_one(OptionList)
        for session_id, record in list(self.records.items()):
            current = fresh.get(session_id)
            if current is None:
                self.records.pop(session_id)
                options.remove_option(session_id)
            elif current != record:
                self.records[session_id] = current
                options.replace_option_prompt(session_id, session_row(current, self.snippets.get(session_id)))
        self._show_empty()
        if self.query_text or self._loading:
            return
        newest = await self.server.list_sessions(None, None if self.all_workspaces else self.workspace, None, 5)
        if any(record.id not in self.records for record in newest.sessions):
            self.load_page(reset=True, keep=self.selected_id)

    def _show_empty(self) -> None:
        empty = self.query_one("#picker-empty", Static)
        nothing = not self.records
        empty.display = nothing
        if nothing:
            empty.update(f"No session matches {self.query_text!r}." if self.query_text else "No saved session yet.")

    def _load_more_if_near_end(self, index: int | None) -> None:
        options = self.query_one(OptionList)
        if self._cursor and not self._loading and index is not None \
                and index >= options.option_count - LOAD_MORE_MARGIN:
            self._loading = True
            self.load_page(reset=False)

    def _scrolled(self, scroll_y: float) -> None:
        options = self.query_one(OptionList)
        if scroll_y >= options.max_scroll_y - options.size.height:
            self._load_more_if_near_end(options.option_count - 1)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._load_more_if_near_end(event.option_index)

    @on(Input.Changed, "#picker-search")
    def _typed(self, _: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.load_page(reset=True))

    # actions ----------------------------------------------------------------------------------

    @property
    def selected_id(self) -> str | None:
        """The highlighted session's id."""
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        return options.get_option_at_index(options.highlighted).id

    @on(Input.Submitted, "#picker-search")
    def _submitted(self, _: Input.Submitted) -> None:
        if self.selected_id:
            self.dismiss(self.selected_id)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_move(self, step: int) -> None:
        """Move the selection while the search box keeps the focus."""
        options = self.query_one(OptionList)
        options.action_cursor_down() if step > 0 else options.action_cursor_up()

    def action_close(self) -> None:
        """Leave without choosing."""
        self.dismiss(None)

    def action_toggle_scope(self) -> None:
        """Switch between this workspace and all workspaces."""
        self.all_workspaces = not self.all_workspaces
        self.query_one("#picker-heading", Label).update(self._heading())
        self.load_page(reset=True)

    def action_rename(self) -> None:
        """Rename the highlighted session (asks for the name)."""
        session_id = self.selected_id
        if session_id is not None:
            current = self.records[session_id].title or ""
            self.app.push_screen(RenameDialog(current), lambda name: self._rename(session_id, name))

    async def _rename(self, session_id: str, name: str | None) -> None:
        if not name:
            return
        try:
            await self.server.rename(session_id, name)
            record = await self.server.get_session(session_id)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.records[session_id] = record
        options = self.query_one(OptionList)
        options.replace_option_prompt(session_id, session_row(record, self.snippets.get(session_id)))

    def action_delete(self) -> None:
        """Delete the highlighted session after a confirmation."""
        session_id = self.selected_id
        if session_id is None:
            return
        title = printable(self.records[session_id].display_title, one_line=True)
        question = f"Delete the session {title!r} and all its history? This cannot be undone."
        self.app.push_screen(ConfirmDialog(question), lambda yes: self._delete(session_id, yes))

    async def _delete(self, session_id: str, yes: bool | None) -> None:
        if not yes:
            return
        try:
            await self.server.delete_session(session_id)
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.records.pop(session_id, None)
        self.query_one(OptionList).remove_option(session_id)
        self._show_empty()
