"""The resume picker: sessions newest first, server-side search as you type, open, rename, delete.

Two scopes, Ctrl+T between them: this workspace (the open database, this folder's sessions) and every
project (every workspace of the open database and of every other database in the index, read through
`harnez.server.projects.AllProjects`). With no database here yet the picker still opens: this
workspace is empty, every project is one key away, and Enter starts a new session.

`harnez --resume` shows the picker as the app's first screen (`early_picker`): it lists through a
read-only `EarlyListing` of the database while the server opens in the background, then the app
`attach`es the server (a session chosen meanwhile opens then).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from harnez.errors import HarnezError
from harnez.text import printable
from harnez.tui.bridge import paint_without_skipping
from harnez.tui.widgets.keys import QUIT_WINDOW, KeyHints
from harnez.tui.widgets.origin import harness_name

if TYPE_CHECKING:
    from harnez.server import SessionRecord
    from harnez.server.listing import EarlyListing
    from harnez.server.projects import AllProjects
    from harnez.server.server import Server

DatabaseOpener = Callable[[Path], Awaitable["Server"]]
ChoiceHandler = Callable[["PickerChoice | None"], Awaitable[None]]

PAGE_SIZE = 50
SEARCH_DELAY = 0.05
"""Seconds of quiet typing before the full-text search runs (each key filters titles at once)."""
LOAD_MORE_MARGIN = 10
"""Load the next page when the selection comes this close to the end."""
REST_MARGIN = 2
"""List the rest of the page shown (the rows that did not fit the screen) when the selection comes this
close to the last row listed (no read: they are at hand)."""
REFRESH_EVERY = 2.0
"""Seconds between refreshes of the listed rows (titles, status and new sessions from any process)."""
KEYS = (
    ("Enter", "open"),
    ("Ctrl+T", "this workspace/all"),
    ("Ctrl+R", "rename"),
    ("Ctrl+D", "delete"),
    ("Esc", "close"),
)
"""The keys listed at the picker's foot."""
ROW_LINES = 2
"""Lines of a row without a match: its title line and its workspace line (a match adds one or two)."""
ROWS_KEPT = 1000
"""Built rows kept for reuse (`RowCache`): a few pages of every scope and of the searches typed."""
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
        parts.append(snippet[position : match.start()])
        parts.append((match.group(1), "bold reverse"))
        position = match.end()
    parts.append(snippet[position:])
    return Content.assemble(*parts)


def origin_tag(record: SessionRecord) -> tuple[str | tuple[str, str], ...]:
    """`  imported from Claude Code` (the harness an imported session came from), or nothing for
    Harnez's own."""
    origin = getattr(record, "origin", None)
    return ("  ", (f"imported from {harness_name(origin)}", "dim")) if origin else ()


def session_row(
    record: SessionRecord, snippet: str | None, project: str | None = None, now: float | None = None
) -> Content:
    """The lines of one picker row: title, id, status (and project, across projects); workspace and
    times (relative to `now`); the match."""
    where = ("  ", (printable(project, one_line=True), "reverse")) if project else ()
    head = Content.assemble(
        (printable(record.display_title, one_line=True), "bold"),
        "  ",
        (record.id[:8], "dim"),
        "  ",
        (record.status, "italic"),
        *origin_tag(record),
        *where,
    )
    info = Content.assemble(
        (printable(record.workspace, one_line=True), "dim"),
        "  created ",
        relative_time(record.created_at, now),
        " · active ",
        relative_time(record.updated_at, now),
    )
    lines = [head, info]
    if snippet:
        lines.append(
            Content.assemble("  ", snippet_content(printable(" ".join(snippet.split()), one_line=True)))
        )
    return Content("\n").join(lines)


class RowCache:
    """The rows built lately, by what they show: a row shown again (the next key's filter keeps most of
    the last one's matches; the picker opened again) reuses its Content, and with it the height the
    OptionList measured (a Content keeps it per width), instead of building and measuring it anew."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._rows: OrderedDict[Hashable, Content] = OrderedDict()

    def clear(self) -> None:
        """Forget every row kept (the next ones are built anew)."""
        self._rows.clear()

    def row(self, record: SessionRecord, snippet: str | None, project: str | None) -> Content:
        """The row of `record` as `session_row` builds it, reused when it would read the same."""
        now = time.time()
        key = (
            record,
            snippet,
            project,
            relative_time(record.created_at, now),
            relative_time(record.updated_at, now),
        )
        row = self._rows.pop(key, None)
        if row is None:
            row = session_row(record, snippet, project, now)
        self._rows[key] = row
        if len(self._rows) > self.size:
            self._rows.popitem(last=False)
        return row


ROWS = RowCache(ROWS_KEPT)
"""One for every picker: the rows of sessions shown in a picker opened before are reused."""


def early_picker(workspace: Path, database: Path | None, on_chosen: ChoiceHandler) -> PickerScreen | None:
    """The picker as the app's first screen, listing `database` read-only until the app attaches its
    server (no database there: an empty picker); None when it cannot list before the server opens
    (the database's place is not known without the settings, or its schema must be migrated first)."""
    if database is None:
        return None
    early = None
    if database.exists():
        from harnez.server.listing import EarlyListing

        early = EarlyListing.of(database)
        if early is None:
            return None
    return PickerScreen(None, workspace, early=early, on_chosen=on_chosen)


def _retrieved(read: asyncio.Future[Any]) -> None:
    """Mark the outcome of a page read as seen (a load cancelled meanwhile never awaits it)."""
    if not read.cancelled():
        read.exception()


@dataclass(frozen=True, slots=True)
class PickerChoice:
    """What the picker was closed with: a session to open (in `database` when that is another
    project's), or `session_id` None to start a new session."""

    session_id: str | None
    database: Path | None = None


class PickerScreen(Screen[PickerChoice | None]):
    """Lists sessions to resume; dismisses with a PickerChoice, or None (Esc). Its stylesheet,
    picker.tcss, is the app's: as the first screen of `harnez --resume` it is the default screen, whose
    own CSS_PATH Textual does not load."""

    AUTO_FOCUS = "#picker-search"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("pagedown", "page(1)", "Next page", show=False),
        Binding("pageup", "page(-1)", "Previous page", show=False),
        Binding("ctrl+t", "toggle_scope", "This workspace / all", priority=True),
        Binding("ctrl+r", "rename", "Rename", priority=True),
        Binding("ctrl+d", "delete", "Delete", priority=True),
        Binding("ctrl+c", "clear_or_quit", "Clear / quit", show=False, priority=True),
    ]

    def __init__(
        self,
        server: Server | None,
        workspace: Path,
        all_workspaces: bool = False,
        *,
        open_database: DatabaseOpener | None = None,
        early: EarlyListing | None = None,
        on_chosen: ChoiceHandler | None = None,
    ) -> None:
        super().__init__()
        self.server = server
        """The open database's server; None when this project has no database yet (nothing is created)
        or while it opens (the first screen)."""
        self.early = early
        """This project's database read read-only until the server is attached (the first screen)."""
        self.on_chosen = on_chosen
        """Given (the app's first screen, which cannot be dismissed), the choice goes there; it then
        waits for `attach`: a choice made before is kept and acted on when it comes."""
        self._pending: PickerChoice | None = None
        self.workspace = workspace
        self.all_workspaces = all_workspaces
        """Whether sessions of every project are listed, not only this workspace's."""
        self.open_database = open_database
        """Opens another project's database (to rename or delete its sessions); None: those are refused."""
        self.projects: AllProjects | None = None
        self._told: set[str] = set()
        """Databases skipped across projects that the person was already told of."""
        self.records: dict[str, SessionRecord] = {}
        self.snippets: dict[str, str] = {}
        self.shown_query = ""
        """The search the listed rows answer ("" for the unfiltered list)."""
        self.shown_full_text = False
        """Whether the listed rows are the full-text search's (else the title, workspace and id filter's)."""
        self._cursor: str | None = None
        self._loading = False
        self._rest: list[SessionRecord] = []
        """The rows of the page shown not listed yet: they did not fit the screen (`_replace_rows`)."""
        self._search_timer: Timer | None = None
        self._typed_at = 0.0
        """When the last key changed the search (time.monotonic)."""
        self._reading: asyncio.Future[Any] | None = None
        """The page read last (`_read_alone`)."""
        self._attached = on_chosen is None
        self._quit_armed_at: float | None = None

    def compose(self) -> ComposeResult:
        yield Label(self._heading(), id="picker-heading")
        yield Input(placeholder="Search titles, workspaces, ids and conversations…", id="picker-search")
        yield OptionList(id="picker-sessions")
        yield Static("", id="picker-empty")
        yield KeyHints(KEYS, id="picker-keys")

    def _heading(self) -> str:
        scope = "all projects" if self.all_workspaces else f"this workspace ({self.workspace})"
        return f"Resume a session — {scope}"

    def on_unmount(self) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._close_readers()

    def _close_readers(self) -> None:
        if self.projects is not None:
            self.projects.close()
            self.projects = None
        if self.early is not None:
            self.early.close()
            self.early = None

    @property
    def starting(self) -> bool:
        """Whether this is the app's first screen and the server is not attached yet."""
        return self.on_chosen is not None and not self._attached

    def attach(self, server: Server | None, open_database: DatabaseOpener | None) -> None:
        """Read through the app's server from now on (None: this project has no database); act on a
        choice made while it opened."""
        self._close_readers()
        self.server, self.open_database, self._attached = server, open_database, True
        self.query_one("#picker-heading", Label).update(self._heading())
        pending, self._pending = self._pending, None
        if pending is not None:
            self._finish(pending)
        else:
            self.load_page(reset=True, keep=self.selected_id, full_text=self.shown_full_text)

    def _all_projects(self) -> AllProjects:
        if self.projects is None:
            from harnez.server.projects import AllProjects

            self.projects = AllProjects(self.server)
        return self.projects

    async def _listing(
        self, query: str | None, cursor: str | None, limit: int, full_text: bool = True
    ):  # -> SessionPage | ProjectsPage
        """A page of the scope shown: every project's sessions, or this workspace's (none without a
        database); with a query, its full-text matches or (`full_text` False) the title filter's."""
        if self.all_workspaces:
            page = await self._all_projects().page(query, cursor, limit, full_text)
            for reason in set(page.skipped) - self._told:
                self._told.add(reason)  # once per picker, not at every refresh
                self.notify(printable(reason), severity="warning", timeout=8)
            return page
        lister = self.server or self.early
        if lister is None:
            from harnez.server.projects import ProjectsPage

            return ProjectsPage([], None, {}, {})
        return await lister.list_sessions(query, self.workspace, cursor, limit, full_text)

    async def _read_alone(self, read: Callable[[], Awaitable[Any]]) -> Any:
        """Run `read()` once the page read before it has ended. A page load cancelled by the next key
        cancels its read, and the store stops that query in the database's thread (`until_stopped`), so
        the next key's query starts at once instead of queueing behind it; none starts for text already
        typed over (its load is cancelled while it waits)."""
        while self._reading is not None and not self._reading.done():
            await asyncio.wait([self._reading])
        self._reading = reading = asyncio.ensure_future(read())
        reading.add_done_callback(_retrieved)
        return await reading

    def _project_of(self, session_id: str) -> str | None:
        """The project name shown on a row across projects."""
        database = self.projects.database_of(session_id) if self.projects is not None else None
        if not self.all_workspaces or database is None:
            return None
        from harnez.server.projects import project_of

        return project_of(database).name or str(project_of(database))

    def _row(self, record: SessionRecord) -> Content:
        return ROWS.row(record, self.snippets.get(record.id), self._project_of(record.id))

    def database_of(self, session_id: str) -> Path | None:
        """The database of a listed session when it is not the open one (another project's), else None."""
        database = self.projects.database_of(session_id) if self.projects is not None else None
        if database is None or (self.server is not None and database == Path(self.server.database).resolve()):
            return None
        return database

    async def on_mount(self) -> None:
        paint_without_skipping(self)
        self.watch(self.query_one(OptionList), "scroll_y", self._scrolled, init=False)
        # The first page is read before the screen's first paint (about a millisecond): painted in
        # the same frame as the screen, the rows do not wait for a second frame.
        await self._show_page(reset=True)
        self.set_interval(REFRESH_EVERY, self.refresh_rows)

    @property
    def showing(self) -> bool:
        """Whether the screen is still there with its widgets (a worker may end after it closed)."""
        return self.is_attached and bool(self.query("#picker-empty")) and bool(self.query(OptionList))

    @property
    def query_text(self) -> str:
        """What is typed in the search box."""
        return self.query_one("#picker-search", Input).value.strip()

    # loading ----------------------------------------------------------------------------------

    @work(group="page", exclusive=True)
    async def load_page(self, reset: bool, keep: str | None = None, full_text: bool = True) -> None:
        """Fetch the first page (reset) or the next one, and show it (`keep` stays highlighted); a query
        is searched in the full text, or (`full_text` False) in titles, workspaces and ids."""
        await self._show_page(reset, keep, full_text)

    async def _show_page(self, reset: bool, keep: str | None = None, full_text: bool = True) -> None:
        if not self.showing:
            return  # a search timer or a late key after the picker closed
        self._loading = True
        query = self.query_text
        cursor = None if reset else self._cursor
        try:
            page = await self._read_alone(lambda: self._listing(query or None, cursor, PAGE_SIZE, full_text))
        finally:
            self._loading = False
        if not self.showing:
            return  # closed while the page was read
        options = self.query_one(OptionList)
        if reset:
            self.shown_query, self.shown_full_text = query, full_text and bool(query)
            self.records.clear()
            self.snippets.clear()
        self._cursor = page.next_cursor
        self.snippets.update(page.snippets)
        fresh = [r for r in page.sessions if r.id not in self.records]
        if reset:
            self._replace_rows(options, fresh, keep)
        else:
            self._add_rows(options, fresh)
        if reset and options.option_count:
            index = options.get_option_index(keep) if keep in self.records else 0
            options.highlighted = index
        self._show_empty()
        if not fresh and self._cursor and self._cursor != cursor:  # a cursor that did not move: stop
            self._read_on()
        elif reset and query and not full_text:
            self._search_after_filter(query)

    def _read_on(self) -> None:
        """Read the next page at once after one that listed nothing new (none of its sessions, or only
        ones listed already): no row would come near the end to ask for it, and the list would stop."""
        self._loading = True
        self.call_later(self.load_page, reset=False, full_text=self.shown_full_text)

    def _add_rows(self, options: OptionList, records: list[SessionRecord]) -> None:
        """List `records` after the rows shown."""
        self.records.update((r.id, r) for r in records)
        options.add_options([Option(self._row(r), id=r.id) for r in records])

    def _replace_rows(self, options: OptionList, records: list[SessionRecord], keep: str | None) -> None:
        """List `records` instead of the rows shown. When the rows listed read the same in a page as long
        (the same sessions, their rows reused from `ROWS`: a key that did not change the matches, a
        refresh), the options and their measured heights and rendered lines stay, the rows not listed
        yet are taken as read now, and the list only goes back to its top, as when cleared.
        Otherwise only the rows that fit the screen are listed; the rest of the page waits in `_rest`
        until the selection or the scroll comes near the end (`_load_more_if_near_end`): each row is
        built and measured (a full wrap of its text) as it is listed, and listing more later repaints
        the whole list, which each key's new list would pay for rows nobody scrolled to."""
        shown = options.options
        if len(shown) + len(self._rest) == len(records) and all(
            old.id == new.id and old.prompt is self._row(new)
            for old, new in zip(shown, records[: len(shown)], strict=True)
        ):
            self.records.update((r.id, r) for r in records[: len(shown)])
            self._rest = records[len(shown) :]  # still not listed, as read now
            options.highlighted = None
            options.scroll_y = 0
            return
        options.clear_options()
        first = self._rows_that_fit(options)
        if any(r.id == keep for r in records[first:]):
            first = len(records)  # the highlighted row stays where it was: everything now
        self._add_rows(options, records[:first])
        self._rest = records[first:]

    def _rows_that_fit(self, options: OptionList) -> int:
        """How many rows the list can show at most (one more for a row cut at the foot): every row
        takes its two lines and the option's padding, and the list is never taller than the terminal
        (before the first layout the list's own height is not known yet)."""
        padding = options.get_component_styles("option-list--option").padding
        return self.app.size.height // (ROW_LINES + padding.top + padding.bottom) + 1

    def _search_after_filter(self, query: str) -> None:
        """Once the title filter's rows for the query typed are shown, search the full text after
        SEARCH_DELAY of quiet typing (counted from the last key): a search never cancels the filter
        that comes before it, however slow."""
        if query != self.query_text:
            return
        if self._search_timer is not None:
            self._search_timer.stop()
        wait = max(0.001, SEARCH_DELAY - (time.monotonic() - self._typed_at))  # 0 would not run
        self._search_timer = self.set_timer(wait, lambda: self.load_page(reset=True))

    @work(group="refresh", exclusive=True)
    async def refresh_rows(self) -> None:
        """Show changes made since the rows were read: titles, status, activity, deletions, and
        new sessions at the top of an unfiltered list. Rows further down are updated in place, and
        the rows not listed yet (`_rest`) are kept as they read now."""
        lister = self.server or self.early
        if self._loading or not self.is_active or (self.server is not None and self.server.closed):
            return
        rest, shown = self._rest, [*self.records.values(), *self._rest]
        if self.all_workspaces:
            fresh = await self._all_projects().reload(shown)
        elif lister is not None:
            fresh = await lister.reload_sessions(shown)
        else:
            return
        if not self.showing:
            return
        if self._rest is rest:  # else a page read meanwhile replaced them
            self._rest = [fresh[r.id] for r in rest if r.id in fresh]
        options = self.query_one(OptionList)
        for session_id, record in list(self.records.items()):
            current = fresh.get(session_id)
            if current is None:
                self.records.pop(session_id)
                with suppress(OptionDoesNotExist):  # a page read since may have cleared the rows
                    options.remove_option(session_id)
            elif current != record:
                self.records[session_id] = current
                options.replace_option_prompt(session_id, self._row(current))
        self._show_empty()
        if self.query_text or self._loading:
            return
        newest = await self._listing(None, None, 5)
        waiting = {record.id for record in self._rest}
        if any(record.id not in self.records and record.id not in waiting for record in newest.sessions):
            self.load_page(reset=True, keep=self.selected_id)

    def _show_empty(self) -> None:
        empty = self.query_one("#picker-empty", Static)
        nothing = not self.records
        empty.display = nothing
        if nothing:
            where = "in any project" if self.all_workspaces else "in this workspace"
            found = (
                f"No session {where} matches {self.query_text!r}."
                if self.query_text
                else f"No saved session {where} yet."
            )
            empty.update(
                f"{found}\n\nEnter: start a new session · Ctrl+T: "
                f"{'this workspace' if self.all_workspaces else 'all projects'} · Esc: close"
            )

    def _load_more_if_near_end(self, index: int | None) -> None:
        """At the last rows listed, list the rest of the page shown; near the end of a whole page, read
        the next one."""
        options = self.query_one(OptionList)
        if index is None:
            return
        if self._rest and index >= options.option_count - REST_MARGIN:
            rest, self._rest = self._rest, []
            self._add_rows(options, rest)
        if (
            not self._rest
            and self._cursor
            and not self._loading
            and index >= options.option_count - LOAD_MORE_MARGIN
        ):
            self._loading = True
            self.load_page(reset=False, full_text=self.shown_full_text)

    def _scrolled(self, scroll_y: float) -> None:
        options = self.query_one(OptionList)
        if scroll_y >= options.max_scroll_y - options.size.height:
            self._load_more_if_near_end(options.option_count - 1)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._load_more_if_near_end(event.option_index)

    @on(Input.Changed, "#picker-search")
    def _typed(self, _: Input.Changed) -> None:
        """Each key lists the title, workspace and id matches at once; a pause then searches the full
        text (`_search_after_filter`)."""
        if self._search_timer is not None:
            self._search_timer.stop()
        self._typed_at = time.monotonic()
        self.load_page(reset=True, full_text=False)

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
            self._choose(self.selected_id)
        elif not self.records and not self._loading:
            self._finish(PickerChoice(None))  # the empty picker starts a new session

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self._choose(event.option.id)

    def _choose(self, session_id: str) -> None:
        self._finish(PickerChoice(session_id, self.database_of(session_id)))

    def action_move(self, step: int) -> None:
        """Move the selection while the search box keeps the focus."""
        options = self.query_one(OptionList)
        options.action_cursor_down() if step > 0 else options.action_cursor_up()

    def action_page(self, step: int) -> None:
        """Move the selection by the rows in view while the search box keeps the focus; near the end
        the next rows are read (`_load_more_if_near_end`), so paging on reaches every session."""
        options = self.query_one(OptionList)
        options.action_page_down() if step > 0 else options.action_page_up()

    def action_close(self) -> None:
        """Leave without choosing."""
        self._finish(None)

    def action_clear_or_quit(self) -> None:
        """As in the prompt: Ctrl+C clears the search; pressed again within `QUIT_WINDOW` with the
        search empty, it quits Harnez. Each press that does not quit says so."""
        search = self.query_one("#picker-search", Input)
        armed_at, now = self._quit_armed_at, time.monotonic()
        if not search.value and armed_at is not None and now - armed_at <= QUIT_WINDOW:
            quit_harnez = getattr(self.app, "quit_harnez", None)
            self.app.call_next(quit_harnez) if quit_harnez is not None else self.app.exit()
            return
        search.value = ""
        self._quit_armed_at = now
        self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)

    def _finish(self, choice: PickerChoice | None) -> None:
        """Close with the choice, or hand it to `on_chosen` (the first screen stays under what opens)."""
        if self.on_chosen is None:
            self.dismiss(choice)
        elif choice is not None and self.starting:
            self._pending = choice
            self.query_one("#picker-heading", Label).update(f"{self._heading()} — opening…")
        else:
            self.app.call_next(self.on_chosen, choice)

    def action_toggle_scope(self) -> None:
        """Switch between this workspace and all workspaces."""
        self.all_workspaces = not self.all_workspaces
        self.query_one("#picker-heading", Label).update(self._heading())
        self.load_page(reset=True, full_text=self.shown_full_text)

    def _still_opening(self) -> bool:
        """Whether the server is not attached yet (said so): renaming and deleting wait for it."""
        if self.starting:
            self.notify("Still opening the database: try again in a moment.", timeout=3)
        return self.starting

    def action_rename(self) -> None:
        """Rename the highlighted session (asks for the name)."""
        session_id = self.selected_id
        if session_id is not None and not self._still_opening():
            from harnez.tui.screens.dialogs import RenameDialog  # not on the way to the first paint

            current = self.records[session_id].title or ""
            self.app.push_screen(RenameDialog(current), lambda name: self._rename(session_id, name))

    async def _rename(self, session_id: str, name: str | None) -> None:
        if not name:
            return
        try:
            record = await self._in_its_database(
                session_id, lambda server: self._renamed(server, session_id, name)
            )
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.records[session_id] = record
        self.query_one(OptionList).replace_option_prompt(session_id, self._row(record))

    @staticmethod
    async def _renamed(server: Server, session_id: str, name: str) -> SessionRecord:
        await server.rename(session_id, name)
        return await server.get_session(session_id)

    async def _in_its_database(self, session_id: str, action: Callable[[Server], Awaitable]):
        """Run `action` with the server of the session's database: the open one, or another project's
        opened for it and closed after."""
        database = self.database_of(session_id)
        if database is None:
            assert self.server is not None
            return await action(self.server)
        if self.open_database is None:
            raise HarnezError(f"That session belongs to another project ({database}); open it first.")
        server = await self.open_database(database)
        try:
            return await action(server)
        finally:
            await server.close()

    def action_delete(self) -> None:
        """Delete the highlighted session after a confirmation."""
        session_id = self.selected_id
        if session_id is None or self._still_opening():
            return
        from harnez.tui.screens.dialogs import ConfirmDialog  # not on the way to the first paint

        title = printable(self.records[session_id].display_title, one_line=True)
        question = f"Delete the session {title!r} and all its history? This cannot be undone."
        self.app.push_screen(ConfirmDialog(question), lambda yes: self._delete(session_id, yes))

    async def _delete(self, session_id: str, yes: bool | None) -> None:
        if not yes:
            return
        try:
            await self._in_its_database(session_id, lambda server: server.delete_session(session_id))
        except HarnezError as exc:
            self.notify(str(exc), severity="error")
            return
        self.records.pop(session_id, None)
        self.query_one(OptionList).remove_option(session_id)
        self._show_empty()
