"""The in-process server: the one async API that the TUI, the headless commands and tests call."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harnez.agent.approvals import ApprovalDesk
from harnez.agents.delegate import child_options
from harnez.errors import (
    HarnezError,
    ModelConfigError,
    SessionNotFoundError,
    SettingsError,
    StoreError,
    StoreWriteError,
)
from harnez.events import (
    Event,
    Finished,
    LiveOutput,
    ModelChanged,
    PromptQueued,
    ShellLine,
    Started,
    StoredEvent,
    TitleChanged,
    Usage,
    warning,
)
from harnez.events import UserMessage as UserMessageEvent
from harnez.hooks import HookReview, HookTrust
from harnez.paths import settings_sources
from harnez.server.bus import EventBus
from harnez.server.chains import TaskChains
from harnez.server.delegations import Delegations
from harnez.server.folders import write_harness_skills
from harnez.server.harnesses import Harness, session_harness
from harnez.server.listing import SessionListing
from harnez.server.runner import TaskOutcome, TaskRun, TaskWork
from harnez.server.totals import SessionTotals, context_tokens
from harnez.settings import Settings, load_settings, parse_model_ref, reload_settings
from harnez.store import Store
from harnez.store.commands import boot_id
from harnez.store.delegations import DelegationLink
from harnez.store.search import FullTextSearch
from harnez.store.sessions import SessionRecord, SessionTable, new_session_id
from harnez.store.tasks import TaskRecord
from harnez.store.uhp import UhpTables
from harnez.text import valid_text
from harnez.titles.keywords import clean_title, excerpt_title
from harnez.titles.policy import ModelTitler, TitlePolicy
from harnez.tools.base import ToolContext
from harnez.tools.shell import DEFAULT_TIMEOUT, ShellParams, ShellTool, stop_orphaned_group
from harnez.wires.catalogue import suggested_models
from harnez.wires.conversation import UserMessage

if TYPE_CHECKING:
    from harnez.importers.importer import ImportReport, Progress

REPLAY_PAGE = 2000
NAMING_GRACE = 120.0
"""Seconds after a session's last activity during which its naming may still be running in another
process (a model title waits for its provider): an opening leaves such a session's naming alone."""
NAMING_LOOKBACK = 7 * 24 * 3600.0
"""How far back an opening looks for sessions whose naming was cut short (one indexed read)."""
UHP_WORKSPACES = "uhp-workspaces"
"""The folder beside the database where `harnez serve` makes each HTTP session's folder (by default)."""
COMPACT_COMMAND = "/compact"
"""The input recorded for a compaction task (its user-message has mode `command`)."""


def shared_shell_text(command: str, output: str, exit_code: int | None) -> str:
    """How a `!!command` reaches the model: a user message with the command, output and exit code."""
    status = "no exit code (stopped)" if exit_code is None else f"exit code {exit_code}"
    return (
        f"[I ran this command in the workspace and share its output with you; {status}.]\n"
        f"$ {command}\n{output or '(no output)'}"
    )


def _shell_event(line: ShellLine) -> Event:
    """A `!command`'s event: its command and output are searchable."""
    return Event(line, search_text=f"{line.command}\n{line.output}")


def _warm_up(tls: bool) -> None:
    """`Server.warm_up`'s work, in its worker thread: the tools' schemas, then the HTTP transport."""
    from harnez.tools.registry import warm_up as build_tool_schemas
    from harnez.wires.clients import warm_up as prepare_transport

    build_tool_schemas()
    prepare_transport(tls)


@dataclass(slots=True)
class Draft:
    """A session opened but not yet persisted: it becomes a row when its first message arrives."""

    id: str
    workspace: str
    model: str | None
    title: str | None = None


class Server(SessionListing):
    """Owns the store and the running tasks of one process (its session listing calls, `list_sessions`
    and `reload_sessions`: harnez/server/listing.py)."""

    def __init__(self, store: Store, bus: EventBus, settings: Settings, work: TaskWork | None = None) -> None:
        self.store = store
        self.settings = settings
        self._bus = bus
        self._work = work
        self._drafts: dict[str, Draft] = {}
        self.approvals = ApprovalDesk()
        """Tool calls of running tasks that wait for a person's answer."""
        self.chains = TaskChains(store, self.approvals, self)
        """The running tasks, one chain per session (harnez/server/chains.py)."""
        self.delegations = Delegations(self)
        """Child sessions of delegate calls (harnez/server/delegations.py)."""
        self._lock = asyncio.Lock()
        self.titles = TitlePolicy(self, settings.session.title)
        self._closed = False
        self._workspace_settings: dict[Path, Settings] = {}
        self._hosted_roots: set[Path] = set()
        self._session_folder_roots: set[Path] = set()
        self._settings_watchers: list[Callable[[Settings], None]] = []
        self._overlays: list[Callable[[Settings], Settings]] = []

    def set_model_titler(self, titler: ModelTitler | None) -> None:
        """Choose how `model/...` title sources reach a model."""
        self.titles.model_titler = titler

    async def wait_for_titles(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) for automatic naming still running; a headless command's
        last step, so the title it printed or stored is the final one."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.titles.wait_idle(), timeout)

    async def warm_up(self) -> None:
        """Prepare, in a worker thread, what a process's first model request needs (the built-in
        tools' schemas, the HTTP transport's imports, and the TLS context unless the default model's
        provider is plain http: ~100 ms). A front end calls it once, after opening, before a prompt
        is likely, so that the first prompt does not pay it. Nothing leaves the machine."""
        await asyncio.to_thread(_warm_up, self._default_model_uses_tls())

    def _default_model_uses_tls(self) -> bool:
        """Whether the default model's provider is reached over TLS (True when that is unknown)."""
        from harnez.wires.http import needs_tls

        try:
            provider = parse_model_ref(self.settings.model or "").provider
        except HarnezError:
            return True
        found = self.settings.providers.get(provider)
        return found is None or needs_tls(found.base_url)

    @classmethod
    async def open(
        cls, database: Path, settings: Settings | None = None, work: TaskWork | None = None
    ) -> Server:
        """Open the database, close tasks a dead process left running, and serve."""
        bus = EventBus()
        store = await Store.open(database, on_commit=bus.publish)
        server = cls(store, bus, settings or Settings(), work)
        # the folders `harnez serve` made for its HTTP sessions carry no settings of their own: such a
        # session continued here (the TUI, `harnez run --resume`) runs under this project's, as it did there
        server.host_session_folders(Path(database).parent / UHP_WORKSPACES)
        store.events.on_failure = server._saving_failed
        await server._recover()
        return server

    async def close(self) -> None:
        """Cancel running tasks and naming, close the work's resources (its `aclose`, when it has one),
        commit what is pending, close the database (once)."""
        if self._closed:
            return
        self._closed = True
        try:
            for session_id in self.chains.sessions():
                await self.cancel(session_id)
            await self.titles.close()
            closing = getattr(self._work, "aclose", None)  # the work's own resources (TaskWork)
            if closing is not None:
                await closing()
        finally:
            await self.store.close()

    @property
    def notices(self) -> list[str]:
        """What opening the database changed that the person should hear of (files made private)."""
        return list(self.store.db.notices)

    def add_notice(self, text: str) -> None:
        """Add to `notices` (something about opening that the person should hear of once)."""
        self.store.db.notices.append(text)

    @property
    def database(self) -> Path:
        """The database file this server opened."""
        return self.store.db.path

    @property
    def work(self) -> TaskWork | None:
        """What runs a task (the agent loop), or None when no model layer is wired."""
        return self._work

    @property
    def closed(self) -> bool:
        """Whether `close` has begun: no queued prompt starts after it."""
        return self._closed

    def set_work(self, work: TaskWork | None) -> None:
        """Choose what runs a task (the agent loop)."""
        self._work = work

    def _saving_failed(self, failure: StoreWriteError) -> None:
        """Saving failed for good: stop every task's work; every subscription ends with the reason."""
        self.chains.stop_all()
        self._bus.fail(failure)

    async def _recover(self) -> None:
        orphans = await self.store.commands.orphans()
        for command in orphans:  # outlived a killed Harnez: stop them before anything else runs
            if command.boot_id == boot_id():
                stop_orphaned_group(command.pgid, command.leader_start)
        await self.store.commands.forget([command.id for command in orphans])
        await self._close_abandoned()
        await self._title_unfinished_naming()

    async def close_abandoned(self, session_id: str) -> bool:
        """Close the session's tasks whose process died before they finished (killed mid-task, its
        machine lost power): each ends `interrupted`, as at opening. A front end showing the task as
        running elsewhere calls it once that process is gone; a prompt sent to the session closes them
        first too, so their end comes before it in the log. Whether any was closed."""
        if session_id in self._drafts:
            return False
        return await self._close_abandoned((await self.get_session(session_id)).num)

    async def _close_abandoned(self, session_num: int | None = None) -> bool:
        closed = False
        for task_id, num in await self.store.tasks.abandoned(session_num):
            if not await self.store.tasks.mark_interrupted(task_id):
                continue  # another process closed it meanwhile
            closed = True
            rows = await self.store.sessions.by_nums([num])
            record = rows[num]
            await self.delegations.recover(task_id, record)
            await self.store.events.append_now(
                record.num,
                record.id,
                Event(
                    Finished(
                        stop="interrupted", error="The process running this task stopped before it finished."
                    ),
                    task=task_id,
                ),
            )
            await self.store.sessions.set_fields(record.num, status="interrupted")
            if record.naming_used and record.title is None and self.titles.settings.generated:
                await self._title_by_excerpt(record)
        return closed

    async def _title_unfinished_naming(self) -> None:
        """Name by their first prompt's excerpt the sessions whose naming began and never stored a
        title, their task having ended: a process killed (or its terminal closed) between the first
        answer's end and the keyword title. A task killed mid-way is handled with its task above.
        Only sessions of the last week (`NAMING_LOOKBACK`), idle for `NAMING_GRACE`: another process
        may be naming a session it has just answered."""
        if not self.titles.settings.generated:
            return
        now = time.time()
        for record in await self.store.sessions.naming_unfinished(now - NAMING_LOOKBACK, now - NAMING_GRACE):
            await self._title_by_excerpt(record)

    async def _title_by_excerpt(self, record: SessionRecord) -> None:
        """Name a session whose naming began but never ended (its process died first) by the excerpt of
        its first prompt: without it the session would stay untitled for good (naming runs once)."""
        prompt = next(
            (task.input for task in await self.store.tasks.of_session(record.num) if task.input), ""
        )
        title = excerpt_title(prompt)
        if title:
            await self.save_automatic_title(record.id, title, "excerpt", only_if_untitled=True)

    # sessions ---------------------------------------------------------------------------------

    def create_session(self, workspace: Path, model: str | None = None) -> Draft:
        """A new session; it is persisted only when its first user message arrives."""
        draft = Draft(new_session_id(), str(Path(workspace).resolve()), model)
        self._drafts[draft.id] = draft
        return draft

    def draft(self, session_id: str) -> Draft | None:
        """The unsaved session with this id, if any."""
        return self._drafts.get(session_id)

    async def get_session(self, id_or_prefix: str) -> SessionRecord:
        """A stored session by exact id or unique prefix (`latest` is handled by newest_session)."""
        if len(id_or_prefix) == 32:
            try:
                return await self.store.sessions.get(id_or_prefix)
            except SessionNotFoundError:
                pass
        return await self.store.sessions.find(id_or_prefix)

    async def newest_session(self, workspace: Path) -> SessionRecord:
        """The most recently active session of a workspace."""
        record = await self.store.sessions.newest(str(Path(workspace).resolve()))
        if record is None:
            raise SessionNotFoundError(
                f"No saved session in {Path(workspace).resolve()}; start one with `harnez`."
            )
        return record

    def _listed_tables(self) -> tuple[SessionTable, FullTextSearch]:
        return self.store.sessions, self.store.search

    async def reload_sessions(self, records: Iterable[SessionRecord]) -> dict[str, SessionRecord]:
        """As `SessionListing.reload_sessions`, after closing the tasks of listed sessions that say
        running whose process has died since this one opened (a picker kept open showed them running
        for good: only an opening closed them)."""
        records = list(records)
        for record in records:
            if record.status == "running" and self.chains.get(record.id) is None:
                await self._close_abandoned(record.num)
        return await super().reload_sessions(records)

    async def rename(self, session_id: str, title: str) -> str:
        """A person's title: saved at once, never overwritten by automatic naming; returns it as stored
        (one line, control characters dropped, at most 80 characters: `clean_title`)."""
        title = clean_title(title)
        if not title:
            raise HarnezError("A session name cannot be empty: /session-name <name>.")
        draft = self._drafts.get(session_id)
        if draft is not None:
            draft.title = title
            return title
        record = await self.get_session(session_id)
        await self.store.sessions.set_title(record.num, title, "user")
        await self.store.events.append_now(
            record.num, record.id, Event(TitleChanged(title=title, source="user"))
        )
        return title

    async def set_automatic_title(
        self, session_id: str, title: str, source: str, *, only_if_untitled: bool = False
    ) -> bool:
        """An automatic title; refused (False) once the person has named the session, and with
        only_if_untitled once it has any title."""
        title = clean_title(title)
        record = await self.get_session(session_id)
        stored = await self.store.sessions.set_title(
            record.num, title, source, only_if_automatic=True, only_if_untitled=only_if_untitled
        )
        if not stored:
            return False
        await self.store.events.append_now(
            record.num, record.id, Event(TitleChanged(title=title, source=source))
        )
        return True

    async def save_automatic_title(
        self, session_id: str, title: str, source: str, *, only_if_untitled: bool = False
    ) -> bool:
        """TitleStore: an automatic title, refused once the person named the session (and with
        only_if_untitled once it has any title)."""
        try:
            return await self.set_automatic_title(
                session_id, title, source, only_if_untitled=only_if_untitled
            )
        except SessionNotFoundError:
            return False  # deleted while naming ran

    async def mark_naming_used(self, session_id: str) -> bool:
        """TitleStore: True only the first time (persisted, so it holds across restarts)."""
        record = await self.get_session(session_id)
        return await self.store.sessions.mark_naming_used(record.num)

    async def warn(self, session_id: str, code: str, message: str) -> None:
        """TitleStore: a warning event in the session."""
        try:
            await self.append(session_id, warning(code, message))
        except SessionNotFoundError:
            pass  # deleted meanwhile: nobody is left to warn

    async def _workspace_of(self, session_id: str) -> str:
        draft = self._drafts.get(session_id)
        return draft.workspace if draft is not None else (await self.get_session(session_id)).workspace

    async def session_model(self, session_id: str) -> str | None:
        """The session's active model reference (its draft's, or the stored one)."""
        draft = self._drafts.get(session_id)
        if draft is not None:
            return draft.model
        try:
            return (await self.get_session(session_id)).model
        except SessionNotFoundError:
            return None

    async def delete_session(self, session_id: str) -> None:
        """Cancel its running task, then delete everything of the session and of its child sessions."""
        if self._drafts.pop(session_id, None) is not None:
            return
        record = await self.get_session(session_id)
        await self.cancel(record.id)
        await self.store.events.flush()
        children = await self.store.delegations.children(record.num)
        await self.store.sessions.delete(record.num)  # its children with it (a trigger: migrations/)
        for session in [record.id, *(child.child for child in children)]:
            self._bus.close_session(session)

    async def persist(self, session_id: str) -> SessionRecord:
        """The stored session, creating its row from the draft if needed."""
        draft = self._drafts.get(session_id)
        if draft is None:
            return await self.get_session(session_id)
        async with self._lock:
            if session_id not in self._drafts:
                return await self.store.sessions.get(session_id)
            record = await self.store.sessions.insert(
                draft.id,
                draft.workspace,
                draft.model,
                title=draft.title,
                title_source="user" if draft.title else None,
            )
            if draft.model:
                ref = parse_model_ref(draft.model)
                await self.store.ledger.record_model_selection(record.num, ref.name, ref.thinking)
            del self._drafts[session_id]
            return record

    # imports ----------------------------------------------------------------------------------

    async def import_sessions(
        self,
        home: Path,
        *,
        workspace: Path,
        harnesses: Iterable[str] | None = None,
        since: float | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import the Claude Code, Codex, OpenCode and pi sessions under `home` (docs/importers.md).

        Importing again updates sessions whose source changed and never duplicates; sessions that
        record no folder get `workspace`. The sources are only read.
        """
        # The importers are imported here: a front end that never imports sessions (the TUI's first
        # prompt waits for the server side's imports) does not pay for them.
        from harnez.importers.importer import import_sessions

        chosen = list(harnesses) if harnesses else None
        return await import_sessions(
            self.store,
            home,
            workspace=Path(workspace).resolve(),
            **({"harnesses": chosen} if chosen else {}),
            since=since,
            progress=progress,
        )

    async def session_origin(self, session_id: str) -> dict | None:
        """Where an imported session came from: harness, original id, agent id, source; None for Harnez's own."""
        if session_id in self._drafts:
            return None
        record = await self.get_session(session_id)
        return await self.store.imports.origin(record.num) if record.origin else None

    # events -----------------------------------------------------------------------------------

    async def append(self, session_id: str, event: Event) -> StoredEvent:
        """Append an event to a stored session and wait for its commit."""
        record = await self.persist(session_id)
        return await self.store.events.append_now(record.num, record.id, event)

    async def events_after(
        self, session_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Stored events after a cursor."""
        if session_id in self._drafts:
            return []
        record = await self.get_session(session_id)
        return await self.store.events.read_after(record.num, record.id, after, limit)

    async def events_before(self, session_id: str, before: int, limit: int) -> list[StoredEvent]:
        """Up to `limit` stored events with seq < before, oldest first (scrolling back)."""
        if session_id in self._drafts:
            return []
        record = await self.get_session(session_id)
        return await self.store.events.read_before(record.num, record.id, before, limit)

    async def prompts_before(self, session_id: str, before: int, limit: int) -> list[StoredEvent]:
        """The newest `limit` of what the person sent before `before` (prompts, queued prompts and
        `!` lines), oldest first: the prompt history of a session reopened past its newest events."""
        if session_id in self._drafts:
            return []
        record = await self.get_session(session_id)
        kinds = ("user-message", "prompt-queued", "shell-line")
        return await self.store.events.newest_of_kinds(record.num, record.id, kinds, before, limit)

    async def last_seq(self, session_id: str) -> int:
        """The newest committed sequence number of a session (0 for a draft or an empty log)."""
        if session_id in self._drafts:
            return 0
        record = await self.get_session(session_id)
        return await self.store.events.last_seq(record.num)

    async def task(self, task_id: int) -> TaskRecord | None:
        """A task's record (state, input, model, stop reason, error, times), or None."""
        return await self.store.tasks.get(task_id)

    async def session_totals(self, session_id: str, up_to: int | None = None) -> SessionTotals:
        """Tokens, cost and context in use over the whole session (events with seq ≤ up_to)."""
        totals = SessionTotals()
        if session_id in self._drafts:
            return totals
        record = await self.get_session(session_id)
        events = self.store.events
        sums = await events.usage_sums(record.num, up_to)
        totals.input, totals.output, totals.usd, totals.unpriced = (
            sums.input,
            sums.output,
            sums.usd,
            sums.unpriced > 0,
        )
        totals.calls, totals.reported = sums.calls, sums.reported
        for body in sums.packed:
            totals.add(body)
        started = await events.last_of_kind(record.num, record.id, "started", up_to)
        if started is not None and isinstance(started.body, Started):
            totals.context_window = started.body.context_window
        last_call = await events.last_of_kind(record.num, record.id, "usage", up_to)
        if last_call is not None and isinstance(last_call.body, Usage):
            totals.context_tokens = context_tokens(last_call.body)
        totals.add_child(await self.store.delegations.rolled_up(record.num, up_to))
        return totals

    async def children(self, session_id: str) -> list[DelegationLink]:
        """The child sessions a session's delegate calls ran (docs/agents.md), oldest first."""
        if session_id in self._drafts:
            return []
        record = await self.get_session(session_id)
        return await self.store.delegations.children(record.num)

    async def delegation_of(self, session_id: str) -> DelegationLink | None:
        """Where a child session came from (parent session, task, call, agent); None for any other."""
        if session_id in self._drafts:
            return None
        record = await self.get_session(session_id)
        return await self.store.delegations.of_child(record.num)

    def watch_output(self, session_id: str, watcher: Callable[[LiveOutput], None]) -> Callable[[], None]:
        """Call `watcher` with what the running commands of the session's tool calls print, as it
        arrives (`LiveOutput`: shown live, never stored; the call's `tool-completed` keeps what the
        model saw); returns the function that stops it."""
        return self._bus.watch_live(session_id, watcher)

    def publish_live(self, output: LiveOutput) -> None:
        """ChainHost: a task's command printed `output` (to the session's watchers)."""
        self._bus.publish_live(output)

    async def subscribe(
        self, session_id: str, after: int = 0, poll: float | None = None
    ) -> AsyncGenerator[StoredEvent, None]:
        """Stored events after `after`, then live ones: no gap, no duplicate.

        With `poll`, also re-reads the database every `poll` seconds, to follow appends made by
        another process.
        """
        queue = self._bus.register(session_id)
        try:
            last = after
            async for event in self._replay(session_id, last):
                last = event.seq
                yield event
            while True:
                try:
                    item = await (asyncio.wait_for(queue.get(), poll) if poll else queue.get())
                except TimeoutError:
                    async for polled in self._replay(session_id, last):
                        last = polled.seq
                        yield polled
                    continue
                if item is None:
                    return
                if isinstance(item, StoreError):
                    raise item
                if item.seq > last:
                    last = item.seq
                    yield item
        finally:
            self._bus.unregister(session_id, queue)

    async def _replay(self, session_id: str, after: int) -> AsyncIterator[StoredEvent]:
        if session_id in self._drafts:
            return
        record = await self.get_session(session_id)
        while True:
            batch = await self.store.events.read_after(record.num, record.id, after, REPLAY_PAGE)
            for event in batch:
                yield event
            if len(batch) < REPLAY_PAGE:
                return
            after = batch[-1].seq

    # tasks ------------------------------------------------------------------------------------

    async def request_on_its_way(self, session_id: str, most: float) -> None:
        """Return once the session's running task has sent its first model request (or ended), or
        after `most` seconds; at once when no task runs. A front end sharing the event loop waits
        for this before its own work on the prompt (a screen's mount), which would otherwise delay
        the task's reads and the request."""
        run = self.running(session_id)
        if run is not None and not run.requested.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.requested.wait(), most)

    def any_running(self) -> bool:
        """Whether a task runs in any session."""
        return bool(self.chains.sessions())

    def running(self, session_id: str) -> TaskRun | None:
        """The task running in a session, if any."""
        chain = self.chains.get(session_id)
        return chain.run if chain else None

    async def running_elsewhere(self, session_id: str) -> int | None:
        """The pid of another live Harnez process running (or queueing) a task in the session, if any
        (`harnez run --resume`, another terminal's app, `harnez serve`): `running` knows this
        process's tasks only, and a front end must not show such a session idle."""
        if session_id in self._drafts:
            return None
        record = await self.get_session(session_id)
        return await self.store.tasks.runner_elsewhere(record.num)

    async def select_model(self, session_id: str, model: str) -> SessionRecord:
        """Change a session's model (`<provider>/<model>[:<thinking>]`); recorded as a selection and an event.

        The provider must be configured for the session's workspace (ModelConfigError says which are).
        """
        ref = parse_model_ref(model)
        workspace = await self._workspace_of(session_id)
        providers = self.settings_for(workspace).providers
        if ref.provider not in providers:
            known = ", ".join(sorted(providers)) or "none is configured"
            raise ModelConfigError(
                f"Unknown provider {ref.provider!r} (configured: {known}). Add it under "
                f"`providers` in settings.json, or pick one with /model. {settings_sources(Path(workspace))}"
            )
        draft = self._drafts.get(session_id)
        if draft is not None:
            draft.model = str(ref)
            return SessionRecord(
                num=0,
                id=draft.id,
                workspace=draft.workspace,
                title=draft.title,
                title_source=None,
                naming_used=False,
                model=draft.model,
                status="idle",
                created_at=0,
                updated_at=0,
            )
        record = await self.get_session(session_id)
        await self.store.sessions.set_fields(record.num, model=str(ref))
        await self.store.ledger.record_model_selection(record.num, ref.name, ref.thinking)
        await self.store.events.append_now(record.num, record.id, Event(ModelChanged(model=str(ref))))
        return await self.get_session(session_id)

    async def model_choices(self, limit: int = 40) -> list[str]:
        """Models to offer in a picker: the default, models whose recent calls completed (never one
        that only failed), then those described or priced in settings and what the catalogue knows
        for each configured provider. Every entry names a configured provider."""
        recent = await self.store.ledger.recent_successful_models(10)
        return suggested_models(self.settings, recent)[:limit]

    async def submit(
        self,
        session_id: str,
        prompt: str,
        *,
        steer: bool = False,
        model: str | None = None,
        options: dict | None = None,
    ) -> int:
        """A user prompt: starts a task, or is queued (or steers) while one runs. Returns the task id."""
        prompt = valid_text(prompt)  # invalid UTF-8 from any front end arrives as U+FFFD
        # Settings files edited since they were read apply from this prompt on, its session's model
        # included; a file now broken fails the task itself, naming the file (`task_settings`).
        with contextlib.suppress(SettingsError):
            self.reread_settings()
        record = await self.persist(session_id)
        entry = self.chains.get(record.id)
        if entry is not None and steer:
            entry.run.steering.put_nowait(prompt)
            await self.append(
                record.id,
                Event(
                    UserMessageEvent(text=prompt, mode="steering"), task=entry.run.task_id, search_text=prompt
                ),
            )
            return entry.run.task_id
        if model and model != record.model:
            record = await self.select_model(record.id, model)
        options = await self._session_options(record, options or {})
        if self.chains.get(record.id) is None:  # a task another process left: its end comes first
            await self._close_abandoned(record.num)
        task = await self.store.tasks.create(record.num, prompt, record.model)
        # Decided after the last await: a task that ended meanwhile leaves the session idle.
        if self.chains.enqueue(record.id, task.id, prompt, dict(options)):
            await self.append(record.id, Event(PromptQueued(text=prompt), task=task.id, search_text=prompt))
            return task.id
        await self.chains.start(record, task.id, prompt, record.model, options)
        chain = self.chains.get(record.id)
        await self.titles.on_prompt(record.id, prompt, after=chain.run.answered if chain else None)
        return task.id

    async def _session_options(self, record: SessionRecord, options: dict) -> dict:
        """A task's options over those of the UHP harness its session was made with (its MCP servers,
        disabled tools, system prompt, budgets, skills: written afresh for this task unless the caller
        did): a session made over HTTP keeps its harness whichever front end continues it. A value the
        caller gives (not None) wins."""
        given = {key: value for key, value in options.items() if value is not None}
        harness, link = await self._harness_of(record)
        if harness is None:
            return given
        own = harness.task_options(None, None, None)
        if link is not None:  # a sub-agent's session: its MCP servers narrowed to its tools again
            own = child_options(own, link.tools)
        if harness.skills and "skills_dir" not in given:
            written = await asyncio.to_thread(
                write_harness_skills,
                Path(record.workspace),
                harness,
                session_folder=self.is_session_folder(record.workspace),
            )
            own["skills_dir"] = str(written)
        return {**own, **given}

    async def _harness_of(self, record: SessionRecord) -> tuple[Harness | None, DelegationLink | None]:
        """The UHP harness a session's tasks run under: the one it was made with over HTTP, else, for
        a sub-agent's session continued on its own, its parent's (with the child's link: its tools).
        A child's first task got the harness's options lent by its parent's task; its later ones get
        them here, so that no task of a harness's work runs outside it. Children are offered no
        `delegate`, so a parent is never a child itself."""
        tables = UhpTables(self.store.db)
        harness = await session_harness(tables, record.num)
        if harness is not None:
            return harness, None
        link = await self.store.delegations.of_child(record.num)
        if link is None:
            return None, None
        return await session_harness(tables, link.parent_num), link

    async def compact(self, session_id: str) -> int:
        """Compact the conversation now (a task of its own: `/compact`); returns the task id.

        Refused for a session with no conversation yet and while a task runs.
        """
        if session_id in self._drafts:
            raise HarnezError("Nothing to compact yet: this session has no conversation.")
        busy = HarnezError(
            "A task is running in this session; wait for it to end (or press Esc to cancel it), then compact."
        )
        record = await self.get_session(session_id)
        if record.id in self.chains:
            raise busy
        task = await self.store.tasks.create(record.num, COMPACT_COMMAND, record.model)
        if record.id in self.chains:  # a prompt started a task meanwhile
            await self.store.tasks.transition(task.id, "cancelled", stop_reason="cancelled")
            raise busy
        await self.chains.start(
            record, task.id, COMPACT_COMMAND, record.model, {"compact": True}, mode="command"
        )
        return task.id

    async def wait(self, session_id: str) -> TaskOutcome | None:
        """Wait for the running task (and those queued behind it) to end; the last outcome."""
        return await self.chains.wait(session_id)

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running task and drop queued ones; a session with nothing running is left as is."""
        return await self.chains.cancel(session_id)

    def answer_approval(self, session_id: str, call_id: str, verdict: str, reason: str | None = None) -> None:
        """Answer a tool call's approval prompt: `allow`, `allow-session` or `deny` (with a reason).

        Raises ApprovalError when no call of that id waits in the session.
        """
        self.approvals.answer(session_id, call_id, verdict, reason)

    # shell lines ------------------------------------------------------------------------------

    async def run_shell(
        self,
        session_id: str,
        command: str,
        *,
        mode: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        share: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> StoredEvent:
        """A `!command` the person typed: run in the session's workspace, stored as a `shell-line` event.

        The shell tool runs it (`bash -c`, own process group, timeout, last 32 KiB of output kept).
        Nothing reaches the model: the agent rebuilds its history from context records only. It may
        run while a task runs (the person's own command needs no approval), but never in read-only
        `mode` (the session's, default the settings'), which promises no shell at all.

        With `share` (a `!!command`), the command and its output also join the conversation as a
        user message for the next task's model; refused while a task runs (its conversation is fixed).
        `on_output` is called with what the command prints as it arrives (for showing it live).
        """
        command = valid_text(command).strip()
        settings = await self._shell_line_allowed(session_id, command, mode, share)
        record = await self.persist(session_id)
        context = ToolContext(
            Path(record.workspace),
            on_output=on_output,
            processes=self.store.commands,
            pass_env=frozenset(settings.permissions.shell.pass_env),
        )
        try:
            result = await ShellTool().run(ShellParams(command=command, timeout=timeout), context)
        except asyncio.CancelledError as exc:
            partial = getattr(exc, "result", None)
            if partial is not None:
                line = self._shell_line(command, partial.content, partial.details)
                await asyncio.shield(self.append(record.id, _shell_event(line)))
            raise
        line = self._shell_line(command, result.content, result.details, share)
        if share:
            shared = UserMessage(shared_shell_text(command, line.output, line.exit_code))
            await self.store.context.append(record.num, None, "user", shared.to_json(), None)
        return await self.append(record.id, _shell_event(line))

    async def _shell_line_allowed(
        self, session_id: str, command: str, mode: str | None, share: bool
    ) -> Settings:
        """The session's settings when a `!command` may run now; a HarnezError saying why not otherwise."""
        if not command:
            raise HarnezError("Type a command after `!`, for example `!git status`.")
        settings = self.settings_for(await self._workspace_of(session_id))
        if (mode or settings.permissions.mode) == "read-only":
            raise HarnezError(
                "Read-only mode runs no shell commands, `!` lines included: press Shift+Tab "
                "to switch to ask or accept-edits, then send the line again."
            )
        if share and session_id in self.chains:
            raise HarnezError(
                "A task is running: `!!` shares output with the model between tasks. Wait for it "
                "to end (or press Esc), or use `!` to run the command without sharing."
            )
        return settings

    @staticmethod
    def _shell_line(command: str, content: str, details: dict, shared: bool = False) -> ShellLine:
        """The `shell-line` event of a finished (or cut short) `!command`."""
        # The tool's content ends with a trailer line for the model ("[exit code 0 after 0.1 s]");
        # the event keeps the exit code and duration as fields, and the output alone.
        output = content.rsplit("\n", 1)[0]
        output = "" if output == "(no output)" and not details.get("dropped_bytes") else output
        return ShellLine(
            command=command,
            output=output,
            exit_code=details.get("exit_code"),
            duration=details.get("duration"),
            timed_out=bool(details.get("timed_out")),
            cancelled=bool(details.get("cancelled")),
            shared=shared,
        )

    # settings ---------------------------------------------------------------------------------

    def task_settings(self, workspace: str | Path) -> Settings | None:
        """ChainHost: the settings a task of this workspace's session gets, or None when they are the
        server's own (its work already holds them). Raises SettingsError for a broken project file.

        Called as each task starts: settings files edited since they were read are read again first
        (`reread_settings`), so a prompt runs under the files as they are when it is sent.
        """
        self.reread_settings()
        own = self.settings_for(workspace)
        return None if own is self.settings else own

    def reread_settings(self) -> bool:
        """Read the server's settings again when one of their files changed since they were read;
        whether they were. Applied as `update_settings` applies them (with this run's overlays).

        Raises SettingsError, and keeps the settings in use, when a changed file is now broken: the
        task that asked fails with the message naming the file and what to fix, rather than run
        under settings the person has just changed (a tightened permission must not be ignored).
        """
        workspace = self.settings.workspace
        if workspace is None or not self.settings.files_changed():
            return False
        found = reload_settings(self.settings, workspace)
        for overlay in self._overlays:
            found = overlay(found)
        self.update_settings(found)
        return True

    def host_workspaces(self, root: Path) -> None:
        """Sessions whose workspace is `root` or lies under it run under this server's own settings.

        For folders this process makes or serves on its operator's behalf (`harnez serve`'s session
        folders and fixed workspaces): they have no project settings of their own to honour.
        """
        self._hosted_roots.add(Path(root).resolve())

    def host_session_folders(self, root: Path) -> None:
        """`root` holds the folders made for HTTP sessions, one each (`SessionFolders`): hosted as
        `host_workspaces` hosts it, and each folder in it is the server's own (`is_session_folder`)."""
        self.host_workspaces(root)
        self._session_folder_roots.add(Path(root).resolve())

    def is_session_folder(self, workspace: str | Path) -> bool:
        """Whether a workspace is a folder made for an HTTP session (not a person's project, nor a
        harness's fixed workspace): what an older version left in it is the server's to tidy."""
        return Path(workspace).resolve().parent in self._session_folder_roots

    def settings_for(self, workspace: str | Path) -> Settings:
        """The settings a session runs under: the global file and its OWN workspace's project file.

        A session resumed from another folder keeps its workspace's permissions, providers and tools:
        the folder Harnez was started in never lends its project settings to another workspace's
        session. Raises SettingsError when that workspace's project file is broken.
        """
        folder = Path(workspace).resolve()
        if (
            self.settings.workspace is None
            or self.settings.workspace == folder
            or any(root == folder or root in folder.parents for root in self._hosted_roots)
        ):
            return self.settings
        found = self._workspace_settings.get(folder)
        if found is None or found.files_changed():
            found = load_settings(folder) if found is None else reload_settings(found, folder)
            for overlay in self._overlays:
                found = overlay(found)
            self._workspace_settings[folder] = found
        return found

    def update_settings(self, settings: Settings) -> None:
        """Use new settings from now on (after the first-run setup saved a model).

        Tasks already running keep what they resolved; the next task, naming, and whoever watches
        (`watch_settings`: the agent and the model titler, harnez/server/factory.py) get the new ones.
        """
        before, self.settings = self.settings.model, settings
        self._workspace_settings.clear()
        if settings.model != before:
            for draft in self._drafts.values():  # nothing sent yet: a default model follows the default
                if draft.model == before:
                    draft.model = settings.model
        self.titles.settings = settings.session.title
        for watcher in self._settings_watchers:
            watcher(settings)

    def overlay_settings(self, change: Callable[[Settings], Settings]) -> None:
        """Apply `change` over every workspace's settings for this server's life, never saved: the run
        flags of a headless command (an ad-hoc provider). The server's own settings change at once;
        another workspace's (a session resumed from elsewhere) when they are read."""
        self._overlays.append(change)
        self.update_settings(change(self.settings))

    def watch_settings(self, watcher: Callable[[Settings], None]) -> None:
        """Call `watcher` with the new settings whenever `update_settings` applies them."""
        self._settings_watchers.append(watcher)

    # hooks (docs/hooks.md) --------------------------------------------------------------------

    def untrusted_hooks(self, workspace: str | Path) -> HookReview | None:
        """The hooks of the workspace's project file when the person has not trusted them as they are
        now (they do not run until then), else None. Raises SettingsError for a broken project file."""
        return HookTrust().review(self.settings_for(workspace))

    def trust_hooks(self, review: HookReview) -> None:
        """Trust exactly these project hooks from now on (changed ones ask again); remembered in the
        global config folder, never in the project. Raises SettingsError when it cannot be written."""
        HookTrust().trust(review)
