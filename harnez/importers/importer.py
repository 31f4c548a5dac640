"""Importing: every session found under a HOME written into a Harnez database, again without duplicates.

A source whose fingerprint (size and modification time, or the harness's own update time) has not
changed since the last import is skipped unread. A changed one is read whole and each of its
sessions replaces what the earlier import wrote — unless it was continued in Harnez since, then it is
kept as it is. One bad source is reported and skipped; the sources are only ever read.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harnez.errors import HarnezError
from harnez.importers.base import SourceRef
from harnez.importers.normalized import HARNESSES, Session, time_key
from harnez.importers.sources import Readers
from harnez.importers.to_context import context_records
from harnez.importers.to_events import replay
from harnez.store import Store
from harnez.store.imports import ImportRecord, KnownImports

Progress = Callable[[int, int, str], None]
"""Called as (sources done, sources found, the source just done)."""


@dataclass(slots=True)
class ImportReport:
    """What an import did."""

    sources: int = 0
    imported: int = 0
    updated: int = 0
    unchanged: int = 0
    """Sources skipped unread: nothing changed since the last import."""
    kept: int = 0
    """Sessions continued in Harnez since their import: the source's changes were not written over them."""
    duplicates: int = 0
    """Sessions whose id a newer file of the same harness also holds (a resumed copy): that file wins."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(source, why) of sources that could not be read."""
    session_ids: list[str] = field(default_factory=list)
    """The Harnez ids of the sessions imported or updated."""

    def to_json(self) -> dict:
        return {
            "sources": self.sources,
            "imported": self.imported,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "kept": self.kept,
            "duplicates": self.duplicates,
            "skipped": [{"source": source, "reason": why} for source, why in self.skipped],
        }


BATCH_SESSIONS = 200
BATCH_EVENTS = 20_000
"""Sessions are written in batches of about this many (one transaction each): a transaction per
session spent most of an import waiting on round trips to the database thread."""


async def import_sessions(
    store: Store,
    home: Path,
    *,
    workspace: Path,
    harnesses: Iterable[str] = HARNESSES,
    since: float | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import every session under `home`; `workspace` is used for sessions that record no folder."""
    report = ImportReport()
    with Readers() as readers:
        refs = await asyncio.to_thread(_found, readers, home, list(harnesses), since)
        report.sources = len(refs)
        batch = _Batch(store, report)
        known = await store.imports.known()
        for done, ref in enumerate(refs, 1):
            try:
                await _import_source(known, readers, ref, workspace, batch)
            except (
                OSError,
                HarnezError,
                sqlite3.Error,
                ValueError,
                TypeError,
                KeyError,
                AttributeError,
            ) as exc:
                report.skipped.append((ref.label, str(exc) or type(exc).__name__))
            if batch.full():
                await batch.flush()
            if progress is not None:
                progress(done, len(refs), ref.label)
        await batch.flush()
        await store.imports.link_reviews()
    return report


def _found(readers: Readers, home: Path, harnesses: list[str], since: float | None) -> list[SourceRef]:
    refs = list(readers.locate(Path(home).expanduser(), harnesses))
    return [ref for ref in refs if since is None or ref.modified >= since]


async def _import_source(
    known: KnownImports, readers: Readers, ref: SourceRef, workspace: Path, batch: _Batch
) -> None:
    if known.fingerprints.get((ref.harness, str(ref.path), ref.key or "")) == {ref.fingerprint}:
        batch.report.unchanged += 1
        return
    records = await asyncio.to_thread(_records, readers, ref, workspace, known)
    batch.report.duplicates += sum(1 for record in records if record is None)
    for record in records:
        if record is not None:
            batch.add(record, ref)


def _records(
    readers: Readers, ref: SourceRef, workspace: Path, known: KnownImports
) -> list[ImportRecord | None]:
    """Read a source and convert its sessions (in a worker thread); None for a session that a newer
    file of the same harness also holds. Sessions with no conversation are left out."""
    records: list[ImportRecord | None] = []
    for session in readers[ref.harness].read(ref):
        if not session.info.session_id:
            raise HarnezError("it records no session id")
        info = session.info
        other = known.sources.get((info.harness, str(info.session_id), info.agent_id or ""))
        if _newer(other, ref):
            records.append(None)
            continue
        record = import_record(session, ref, workspace)
        if record.events:  # a file with no conversation in it would be an empty entry in the picker
            records.append(record)
    return records


def _newer(other: str | None, ref: SourceRef) -> bool:
    """Whether another file the session was imported from still exists and changed after this one."""
    if other is None or other == str(ref.path) or ref.key is not None:
        return False
    try:
        return Path(other).stat().st_mtime > ref.modified
    except OSError:
        return False


class _Batch:
    """Records waiting to be written together; a batch that fails is retried source by source."""

    def __init__(self, store: Store, report: ImportReport) -> None:
        self.store, self.report = store, report
        self.pending: dict[tuple[str, str, str], tuple[ImportRecord, SourceRef]] = {}
        self.events = 0

    def add(self, record: ImportRecord, ref: SourceRef) -> None:
        key = (record.harness, record.original_id, record.agent_id)
        earlier = self.pending.get(key)
        if earlier is not None:  # the same session in two files of this import: the newer file wins
            self.report.duplicates += 1
            if earlier[1].modified > ref.modified:
                return
            self.events -= len(earlier[0].events)
        self.pending[key] = (record, ref)
        self.events += len(record.events)

    def full(self) -> bool:
        return len(self.pending) >= BATCH_SESSIONS or self.events >= BATCH_EVENTS

    async def flush(self) -> None:
        pending, self.pending, self.events = list(self.pending.values()), {}, 0
        if not pending:
            return
        try:
            outcomes = await self.store.imports.write_many([record for record, _ in pending])
        except sqlite3.Error:
            for record, ref in pending:
                try:
                    self._count([await self.store.imports.write(record)])
                except sqlite3.Error as exc:
                    self.report.skipped.append((ref.label, str(exc)))
            return
        self._count(outcomes)

    def _count(self, outcomes: list) -> None:
        for outcome in outcomes:
            if outcome.action == "kept":
                self.report.kept += 1
                continue
            self.report.session_ids.append(outcome.session_id)
            self.report.imported += outcome.action == "imported"
            self.report.updated += outcome.action == "updated"


def import_record(session: Session, ref: SourceRef, workspace: Path) -> ImportRecord:
    """What a normalized session becomes in the store."""
    info = session.info
    replayed = replay(session)
    start = time_key(info.span.first) or ref.modified
    end = time_key(info.span.last) or start
    status = replayed.tasks[-1].state if replayed.tasks else "completed"
    return ImportRecord(
        harness=info.harness,
        original_id=str(info.session_id),
        agent_id=info.agent_id or "",
        parent_original_id=info.parent_session_id,
        source=str(ref.path),
        source_key=ref.key or "",
        fingerprint=ref.fingerprint,
        workspace=info.cwd or str(workspace),
        title=_title(session),
        status=status,
        created_at=start,
        updated_at=end,
        tasks=replayed.tasks,
        events=replayed.events,
        context=context_records(session),
        model_calls=replayed.model_calls,
        tool_executions=replayed.tool_executions,
        review_starts=[moment for moment in map(time_key, info.review_starts) if moment is not None],
    )


def _title(session: Session) -> str | None:
    title = session.title
    if session.info.agent_id:
        kind = session.info.agent_type or "sub-agent"
        return f"[{kind} {session.info.agent_id}] {title or ''}".strip()
    return title
