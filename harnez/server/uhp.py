"""The engine side of `harnez serve`: UHP responses as Harnez tasks, HTTP sessions, files and shares.

Every front-end-facing rule of the protocol that is not about HTTP lives here: which harness and
model a task runs with, that a busy session refuses a second task, idempotency keys, where a
session works, which files are its artifacts. `harnez.http` only parses, calls and renders.

Every object belongs to the principal that made it (Security §2): each lookup takes the caller's
principal name (`owner`), and another principal's object is refused exactly as an unknown id is.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harnez.errors import SessionNotFoundError, SettingsError
from harnez.server.folders import SessionFolders, WorkspaceFile, write_harness_skills
from harnez.server.harnesses import Harness, HarnessCatalog, Refusal
from harnez.server.rates import TASKS_PER_MINUTE, CreationRate, RateExceeded
from harnez.server.server import Server
from harnez.settings import Settings
from harnez.store.sessions import SessionPage, SessionRecord
from harnez.store.uhp import DEFAULT_OWNER, ResponseRow, UhpTables, UploadRow

DEFAULT_PRINCIPAL = DEFAULT_OWNER
"""The principal of `--token-env`, and of a server without a token."""
SESSION_PREFIX = "hsess"
CONTAINER_PREFIX = "cntr_"
MAX_UPLOAD_BYTES = 32 * 1024 * 1024
"""The largest file accepted as task input (upload or inline); larger ones are refused, never cut."""
MAX_RUNNING_TASKS = 64
"""How many tasks `harnez serve` runs at once by default (`--max-tasks`); one more is `rate_limited`."""
RETRY_AFTER_SECONDS = 1
"""The `Retry-After` of a refusal for capacity: when a running task ends cannot be foreseen, so this
is a polling interval, not an estimate."""


@dataclass(slots=True)
class TaskRequest:
    """What a `POST /v1/responses` asks for, already parsed."""

    text: str
    input_items: list[Any]
    file_ids: list[str] = field(default_factory=list)
    inline: list[tuple[UploadRow, bytes]] = field(default_factory=list)
    """Files sent inside the request (`HarnessHost.inline_file`): stored only once the task is
    accepted, so that a refused request leaves no upload behind."""
    model: str | None = None
    harness_id: str | None = None
    previous_response_id: str | None = None
    instructions: str | None = None
    max_step: int | None = None
    timeout: int | None = None
    store: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None
    owner: str = DEFAULT_PRINCIPAL
    """The principal asking: the new response (and session) is its own, and it may use only its own."""


def session_ref(session_id: str) -> str:
    """The UHP id of a Harnez session."""
    return SESSION_PREFIX + session_id


def container_ref(session_id: str) -> str:
    """The UHP container id of a session's files."""
    return CONTAINER_PREFIX + session_id


class HarnessHost:
    """Runs UHP work on one `Server`: the harness catalogue, session folders and the `uhp_*` tables."""

    def __init__(
        self,
        server: Server,
        workspaces: Path,
        fixed_workspace: Path | None = None,
        max_tasks: int = MAX_RUNNING_TASKS,
        tasks_per_minute: int | None = TASKS_PER_MINUTE,
    ) -> None:
        self.server = server
        self.max_tasks = max_tasks
        self.rate = CreationRate(tasks_per_minute)
        """Tasks each principal may create per minute (None: no limit)."""
        self._admitted = 0
        """Requests past the capacity check whose task is not running yet."""
        self.tables = UhpTables(server.store.db)
        self.folders = SessionFolders(workspaces)
        server.host_session_folders(workspaces)
        if fixed_workspace is not None:
            server.host_workspaces(fixed_workspace)
        self.harnesses = HarnessCatalog(
            self.tables, server.settings, str(Path(fixed_workspace).resolve()) if fixed_workspace else None
        )
        server.watch_settings(self._follow_settings)
        self._starting: dict[tuple[str, str], asyncio.Future[ResponseRow]] = {}
        """Per (owner, idempotency key): the response a first request is still starting."""
        self._session_locks: dict[str, asyncio.Lock] = {}
        self._live: dict[str, ResponseRow] = {}
        """Responses started by this process whose task may still run (pruned as they end)."""
        self._watchers: dict[tuple[str, str], set[asyncio.Queue[ResponseRow]]] = {}
        """Per (harness id, owner): the queues of the event feeds following its responses."""

    def _follow_settings(self, settings: Settings) -> None:
        """The catalogue answers with the settings in use (read again when their files changed)."""
        self.harnesses.settings = settings

    async def open(self) -> HarnessHost:
        """Make sure the default harness exists (and follows the settings)."""
        await self.harnesses.ensure_default()
        return self

    # tasks -------------------------------------------------------------------------------------

    async def start(self, request: TaskRequest) -> tuple[ResponseRow, bool]:
        """Start a task as a new response; with a known idempotency key, the first request's response.

        Returns (response, replayed). A repeated key never starts a second task: it gets the
        response the first request created, even while that one is still starting. Keys are the
        principal's own: another principal's same key is another key.
        """
        if request.idempotency_key is None:
            return self._started(await self._admit(request, "resp_" + uuid.uuid4().hex)), False
        key = (request.owner, request.idempotency_key)
        if key in self._starting:
            return await asyncio.shield(self._starting[key]), True
        response_id = "resp_" + uuid.uuid4().hex
        claimed = await self.tables.claim_key(*key, response_id)
        if claimed != response_id:
            return await self._known_response(claimed), True
        pending: asyncio.Future[ResponseRow] = asyncio.get_running_loop().create_future()
        self._starting[key] = pending
        try:
            row = self._started(await self._admit(request, response_id))
            pending.set_result(row)
            return row, False
        except BaseException as exc:
            await asyncio.shield(self.tables.forget_key(*key))
            pending.set_exception(exc)
            pending.exception()  # retrieved: a lone first request must not log "never retrieved"
            raise
        finally:
            self._starting.pop(key, None)

    async def _admit(self, request: TaskRequest, response_id: str) -> ResponseRow:
        """Start the task unless `max_tasks` run already, or its principal created its tasks of the
        minute (Security §5: task creation is limited): Refusal `rate_limited`, with `Retry-After`.
        A repeated Idempotency-Key never gets here. A task that has finished and is only recording
        its end (its stream still draining) does not count: a client that has read its end may
        start the next one at once."""
        running = len(self.server.chains.running()) + self._admitted
        if running >= self.max_tasks:
            raise Refusal(
                "rate_limited",
                f"This server runs at most {self.max_tasks} tasks at once and all are busy; "
                "retry once one has ended.",
                detail={"max_running_tasks": self.max_tasks},
                retry_after=RETRY_AFTER_SECONDS,
            )
        stamp = self._take_rate(request.owner)
        self._admitted += 1
        try:
            row = await self._start(request, response_id)
        except Exception:
            self.rate.give_back(request.owner, stamp)  # refused, nothing started: it costs nothing
            raise
        finally:
            self._admitted -= 1
        return row

    def _take_rate(self, principal: str) -> float | None:
        """A place in the principal's tasks of the minute (`CreationRate`), else Refusal `rate_limited`
        saying when one frees (`Retry-After`, `detail.retry_after_seconds`)."""
        try:
            return self.rate.take(principal)
        except RateExceeded as exc:
            raise Refusal(
                "rate_limited",
                f"This client created {exc.limit} tasks in the last minute, the most this server "
                f"allows; retry in {exc.retry_after} s.",
                detail={
                    "tasks_per_minute": exc.limit,
                    "remaining": 0,
                    "retry_after_seconds": exc.retry_after,
                },
                retry_after=exc.retry_after,
            ) from None

    def _started(self, row: ResponseRow) -> ResponseRow:
        """A new response: remembered while it runs, and announced to the feeds of its harness."""
        self._live = {key: live for key, live in self._live.items() if self._runs(live)}
        self._live[row.id] = row
        for queue in self._watchers.get((row.harness, row.owner), ()):
            queue.put_nowait(row)
        return row

    def _runs(self, row: ResponseRow) -> bool:
        return row.task is not None and self.running_task(row.session_id) == row.task

    def watch_responses(
        self, harness_id: str, owner: str = DEFAULT_PRINCIPAL
    ) -> tuple[list[ResponseRow], asyncio.Queue[ResponseRow], Callable[[], None]]:
        """Follow `owner`'s work with a harness: (its responses whose task runs now, a queue of the
        responses it starts from now on, the function that ends the watch). Other principals' work
        with the same (built-in) harness is never in it."""
        queue: asyncio.Queue[ResponseRow] = asyncio.Queue()
        watched = (harness_id, owner)
        self._watchers.setdefault(watched, set()).add(queue)
        running = [
            row for row in self._live.values() if (row.harness, row.owner) == watched and self._runs(row)
        ]
        return running, queue, lambda: self._watchers.get(watched, set()).discard(queue)

    async def follow_settings(self) -> None:
        """Settings files edited since they were read apply now (the default harness follows the
        default model): before a task chooses its model, and before harnesses and models are listed.
        A broken file changes nothing here; the task it reaches fails naming it (`Server.task_settings`)."""
        with contextlib.suppress(SettingsError):
            if self.server.reread_settings():
                await self.harnesses.ensure_default()

    async def _start(self, request: TaskRequest, response_id: str) -> ResponseRow:
        await self.follow_settings()
        session_id, harness, previous = await self._session_of(request)
        if harness.workspace:  # a harness's fixed folder runs under the operator's settings too
            self.server.host_workspaces(Path(harness.workspace))
        current = None if previous is None else await self.server.session_model(session_id)
        model, requested, reason = self._choose_model(request.model, current, harness)
        uploads = [await self._upload_of(file_id, request.owner) for file_id in request.file_ids]
        uploads += request.inline
        options = harness.task_options(request.max_step, request.timeout, request.instructions)
        submit = partial(
            self._submit, harness=harness, request=request, uploads=uploads, model=model, options=options
        )
        if previous is None:
            session_id = self._new_session(harness, model)
            start_seq, task_id = 0, await self._first_task(session_id, submit)
        else:
            start_seq, task_id = await self._next_task(session_id, submit)
        record = await self.server.get_session(session_id)
        row = ResponseRow(
            id=response_id,
            task=task_id,
            session_num=record.num,
            session_id=record.id,
            harness=harness.id,
            previous=previous,
            model=model,
            requested_model=requested,
            fallback_reason=reason,
            input=request.input_items,
            options={"max_step": options["max_steps"], "timeout": options["timeout"]},
            metadata=request.metadata,
            stored=request.store,
            deleted=False,
            start_seq=start_seq,
            created_at=time.time(),
            owner=request.owner,
        )
        await self.tables.add_response(row, fixed_workspace=harness.workspace is not None)
        return row

    async def _first_task(self, session_id: str, submit: Callable[[str], Awaitable[int]]) -> int:
        """Start a new session's first task; a session that could not start leaves nothing behind."""
        try:
            return await submit(session_id)
        except BaseException:
            await asyncio.shield(self._discard(session_id))
            raise

    async def _next_task(self, session_id: str, submit: Callable[[str], Awaitable[int]]) -> tuple[int, int]:
        """(the session's last seq before it, the task id) of a task continuing an idle session."""
        async with self._session_locks.setdefault(session_id, asyncio.Lock()):
            await self._check_idle(session_id)
            start_seq = await self.server.last_seq(session_id)
            return start_seq, await submit(session_id)

    async def _submit(
        self,
        session_id: str,
        harness: Harness,
        request: TaskRequest,
        uploads: list[tuple[UploadRow, bytes]],
        model: str,
        options: dict[str, Any],
    ) -> int:
        """Place the inputs and skills, keep the request's inline files, then start the task (shielded:
        a dropped request never halves it). Refused on the way, it takes its inline files back."""
        workspace = Path(await self._workspace(session_id))
        try:
            prompt = await self._prepare(workspace, request.text, uploads)
            if harness.skills:  # offered to this task alone (its option), not to the folder's other tasks
                written = await asyncio.to_thread(
                    write_harness_skills,
                    workspace,
                    harness,
                    session_folder=self.server.is_session_folder(workspace),
                )
                options = {**options, "skills_dir": str(written)}
            for upload, content in request.inline:
                await self.tables.add_upload(upload, content)
            return await asyncio.shield(self.server.submit(session_id, prompt, model=model, options=options))
        except Exception:
            await asyncio.shield(self._take_back(workspace, request.inline))
            raise

    async def _take_back(self, workspace: Path, inline: list[tuple[UploadRow, bytes]]) -> None:
        """Forget the inline files of a request refused once they were placed: their rows, and their
        folders under `.uhp-inputs/` (new ids, so no other task's)."""
        ids = [upload.id for upload, _ in inline]
        if ids:
            await self.tables.delete_uploads(ids)
            await asyncio.to_thread(self.folders.remove_inputs, workspace, ids)

    async def _check_idle(self, session_id: str) -> None:
        """Refuse a second task in a session; a task that has ended but is still closing is waited for."""
        run = self.server.running(session_id)
        if run is None:
            return
        task = await self.server.task(run.task_id)
        if task is not None and task.state not in ("queued", "running"):
            await self.server.wait(session_id)
        if self.server.running(session_id) is not None:
            raise Refusal(
                "session_busy",
                "A task is already running in this session; wait until it ends, then send this one again.",
            )

    async def _discard(self, session_id: str) -> None:
        """Forget a new session whose first task could not start (its draft and its folder)."""
        workspace = await self._workspace(session_id)
        with contextlib.suppress(SessionNotFoundError):
            await self.server.delete_session(session_id)
        await asyncio.to_thread(self.folders.remove, workspace)

    async def _upload_of(self, file_id: str, owner: str) -> tuple[UploadRow, bytes]:
        found = await self.tables.upload(file_id)
        if found is None or found[0].owner != owner:
            raise Refusal("file_not_found", f"No file with id {file_id!r}.", param="input")
        return found

    async def _session_of(self, request: TaskRequest) -> tuple[str, Harness, str | None]:
        """(session id, harness, previous response id): a continued session's, or a new one's harness."""
        if request.previous_response_id is None:
            harness = await self.harnesses.get(request.harness_id, "metadata.harness_id", request.owner)
            return "", harness, None
        previous = await self.tables.response(request.previous_response_id)
        if previous is None or previous.deleted or previous.owner != request.owner:
            raise Refusal(
                "response_not_found",
                f"No response with id {request.previous_response_id!r}.",
                param="previous_response_id",
            )
        if previous.session_num is None:
            raise Refusal(
                "session_expired",
                "The session of that response was deleted; start a new one.",
                param="previous_response_id",
            )
        if request.harness_id is not None and request.harness_id != previous.harness:
            raise Refusal(
                "harness_mismatch",
                "The session continues with the harness that started it, not "
                "the one named in metadata.harness_id.",
                param="metadata.harness_id",
            )
        return (
            previous.session_id,
            await self.harnesses.get(previous.harness, owner=request.owner),
            previous.id,
        )

    def _choose_model(
        self, asked: str | None, current: str | None, harness: Harness
    ) -> tuple[str, str | None, str | None]:
        """(model to run, requested model when substituted, why): the asked one, else the default."""
        fallback = current or self.harnesses.default_model(harness)
        fallback_problem = self.harnesses.availability(fallback)
        if asked:
            problem = self.harnesses.availability(asked)
            if problem is None:
                return asked, None, None
            if fallback_problem is None and fallback:
                return fallback, asked, f"model {asked!r} is not available for this harness: {problem}"
            raise Refusal(
                "model_unavailable", f"The model {asked!r} cannot run here: {problem}.", param="model"
            )
        if fallback_problem is not None or not fallback:
            raise Refusal(
                "model_unavailable", f"No model can run this task: {fallback_problem}.", param="model"
            )
        return fallback, None, None

    def _new_session(self, harness: Harness, model: str) -> str:
        workspace = Path(harness.workspace) if harness.workspace else self.folders.new()
        return self.server.create_session(workspace, model).id

    async def _workspace(self, session_id: str) -> str:
        draft = self.server.draft(session_id)
        return draft.workspace if draft is not None else (await self.server.get_session(session_id)).workspace

    async def _prepare(self, workspace: Path, text: str, uploads: list[tuple[UploadRow, bytes]]) -> str:
        """Place input files in the workspace; the prompt that names them."""
        mentions = []
        for upload, content in uploads:
            mentions.append(
                "@"
                + await asyncio.to_thread(
                    self.folders.place_input, workspace, upload.id, upload.filename, content
                )
            )
        attached = "Attached files: " + " ".join(mentions) if mentions else ""
        return "\n\n".join(part for part in (text.strip(), attached) if part)

    async def _known_response(self, response_id: str) -> ResponseRow:
        for _ in range(100):  # another process may still be writing the first request's row
            row = await self.tables.response(response_id)
            if row is not None:
                return row
            await asyncio.sleep(0.05)
        raise Refusal(
            "harnez_idempotency_pending",
            "A request with this Idempotency-Key is still starting elsewhere; retry in a moment.",
        )

    async def response(self, response_id: str, owner: str = DEFAULT_PRINCIPAL) -> ResponseRow:
        """A readable response of `owner`'s; Refusal `response_not_found` for an unknown or deleted one,
        one whose session was deleted, or another principal's."""
        row = await self.tables.response(response_id)
        if row is None or row.deleted or row.session_num is None or row.owner != owner:
            raise Refusal("response_not_found", f"No response with id {response_id!r}.")
        return row

    async def hide_unstored(self, row: ResponseRow) -> None:
        """A finished `store: false` response is no longer kept for reading."""
        if not row.stored:
            await self.tables.delete_response(row.id)

    async def delete_response(self, response_id: str, owner: str = DEFAULT_PRINCIPAL) -> None:
        """Delete a stored response (never cancels its task: the conversation keeps it)."""
        await self.tables.delete_response((await self.response(response_id, owner)).id)

    async def settle(self, row: ResponseRow) -> None:
        """Wait until the server has closed the task's bookkeeping (session status, chain) after `finished`,
        so that a client continuing the session at once never finds it busy."""
        if self.running_task(row.session_id) == row.task:
            await self.server.wait(row.session_id)

    def running_task(self, session_id: str) -> int | None:
        run = self.server.running(session_id)
        return run.task_id if run is not None else None

    async def cancel_task(self, row: ResponseRow, wait: float = 1.0) -> None:
        """Cancel a response's task if it is the one running; reply within `wait` seconds either way."""
        if row.task is None or self.running_task(row.session_id) != row.task:
            return
        cancelling = asyncio.ensure_future(self.server.cancel(row.session_id))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(cancelling), wait)

    async def cancel_all(self) -> None:
        """Cancel every running task (the server is stopping); each ends `cancelled`, its output kept."""
        await asyncio.gather(
            *(self.server.cancel(session_id) for session_id in self.server.chains.sessions())
        )

    # sessions ----------------------------------------------------------------------------------

    async def session(self, ref: str, owner: str = DEFAULT_PRINCIPAL) -> SessionRecord:
        """An HTTP session of `owner`'s by UHP id (`hsess…`); Refusal `session_not_found` for any
        other (made elsewhere, or by another principal)."""
        hex_id = ref.removeprefix(SESSION_PREFIX)
        if not ref.startswith(SESSION_PREFIX) or len(hex_id) != 32:
            raise Refusal("session_not_found", f"No session with id {ref!r}.")
        try:
            record = await self.server.get_session(hex_id)
        except SessionNotFoundError:
            raise Refusal("session_not_found", f"No session with id {ref!r}.") from None
        if await self.tables.session_owner(record.num) != owner:
            raise Refusal("session_not_found", f"No session with id {ref!r}.")
        return record

    async def session_harness(self, record: SessionRecord) -> str:
        found = await self.tables.session_harness(record.num)
        return found[0] if found else ""

    async def list_sessions(
        self, harness_id: str | None, cursor: str | None, limit: int, owner: str = DEFAULT_PRINCIPAL
    ) -> SessionPage:
        try:
            return await self.tables.session_page(owner, harness_id, cursor, limit)
        except ValueError:
            raise Refusal(
                "invalid_input",
                "The cursor is not one this server gave; pass next_cursor as received.",
                param="cursor",
            ) from None

    async def session_responses(self, record: SessionRecord) -> list[ResponseRow]:
        return [row for row in await self.tables.session_responses(record.num) if not row.deleted]

    async def cancel_session(self, record: SessionRecord, wait: float = 1.0) -> None:
        cancelling = asyncio.ensure_future(self.server.cancel(record.id))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(cancelling), wait)

    async def delete_session(self, record: SessionRecord) -> None:
        """Cancel its task, delete the session and its own workspace folder."""
        await self.server.delete_session(record.id)
        self._session_locks.pop(record.id, None)
        await asyncio.to_thread(self.folders.remove, record.workspace)

    # files -------------------------------------------------------------------------------------

    async def upload(
        self, filename: str, media_type: str, content: bytes, owner: str = DEFAULT_PRINCIPAL
    ) -> UploadRow:
        """Keep a file of `owner`'s for use as task input; Refusal `file_too_large` above MAX_UPLOAD_BYTES."""
        row = inline_file(filename, media_type, content, owner)
        await self.tables.add_upload(row, content)
        return row

    async def artifacts(
        self, record: SessionRecord, written: Iterable[str]
    ) -> list[tuple[str, float, WorkspaceFile]]:
        """(file id, first seen, file) of every artifact of a session.

        A session folder of its own: every file in it. A fixed workspace: the files its tasks wrote
        with the write and edit tools (`written`, read from its events).
        """
        workspace = Path(record.workspace)
        fixed = (await self.tables.session_harness(record.num) or ("", True))[1]
        if fixed:
            files = await asyncio.to_thread(self.folders.existing, workspace, list(written))
        else:
            files = await asyncio.to_thread(self.folders.scan, workspace)
        ids = await self.tables.artifact_ids(
            record.num, [f.path for f in files], lambda: "file_" + uuid.uuid4().hex
        )
        return [(ids[f.path][0], ids[f.path][1], f) for f in files]

    async def task_artifacts(
        self, record: SessionRecord, written: Iterable[str]
    ) -> list[tuple[str, WorkspaceFile]]:
        """(file id, file) of the files a task wrote with the write and edit tools that still exist."""
        files = await asyncio.to_thread(self.folders.existing, Path(record.workspace), list(written))
        ids = await self.tables.artifact_ids(
            record.num, [f.path for f in files], lambda: "file_" + uuid.uuid4().hex
        )
        return [(ids[f.path][0], f) for f in files]

    async def artifact(
        self, container: str, file_id: str, owner: str = DEFAULT_PRINCIPAL
    ) -> tuple[SessionRecord, Path]:
        """The session and file of an artifact id; Refusal `file_not_found` unless both ids agree and
        the session is `owner`'s."""
        found = await self.tables.artifact(file_id)
        missing = Refusal("file_not_found", f"No file with id {file_id!r} in container {container!r}.")
        if found is None or await self.tables.session_owner(found[0]) != owner:
            raise missing
        records = await self.server.store.sessions.by_nums([found[0]])
        record = records.get(found[0])
        if record is None or container != container_ref(record.id):
            raise missing
        path = await asyncio.to_thread(self.folders.open, Path(record.workspace), found[1])
        if path is None:
            raise missing
        return record, path

    # shares ------------------------------------------------------------------------------------

    async def share(self, record: SessionRecord, create: bool) -> tuple[str, float]:
        """The session's live share; with `create`, made when there is none."""
        found = await self.tables.share(record.num)
        if found is None and create:
            await self.tables.add_share("shr_" + uuid.uuid4().hex, record.num)
            found = await self.tables.share(record.num)
        if found is None:
            raise Refusal(
                "harnez_share_not_found", "This session is not shared; POST to its share endpoint first."
            )
        return found

    async def revoke_share(self, record: SessionRecord) -> bool:
        return await self.tables.revoke_share(record.num)

    async def shared(self, share_id: str) -> SessionRecord:
        """The session a live share shows; Refusal `harnez_share_not_found` once revoked.

        Any principal holding the share id may read it: publishing one's session to others is what
        a share is for (Sessions §5); making, showing and revoking it takes the session's owner."""
        num = await self.tables.shared_session(share_id)
        record = (await self.server.store.sessions.by_nums([num])).get(num) if num is not None else None
        if record is None:
            raise Refusal(
                "harnez_share_not_found", f"No shared session {share_id!r}; it may have been revoked."
            )
        return record


def inline_file(filename: str, media_type: str, content: bytes, owner: str = DEFAULT_PRINCIPAL) -> UploadRow:
    """The upload row of a file of `owner`'s, not stored yet (a request's inline file is stored when
    its task is accepted: `TaskRequest.inline`); Refusal `file_too_large` above MAX_UPLOAD_BYTES."""
    if len(content) > MAX_UPLOAD_BYTES:
        raise too_large()
    return UploadRow(
        "file_" + uuid.uuid4().hex,
        filename or "file",
        media_type or "application/octet-stream",
        len(content),
        time.time(),
        owner,
    )


def too_large() -> Refusal:
    return Refusal(
        "file_too_large",
        f"The file is larger than {MAX_UPLOAD_BYTES} bytes, the most this server accepts.",
        detail={"max_bytes": MAX_UPLOAD_BYTES},
    )
