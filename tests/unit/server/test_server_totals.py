"""Session totals over the whole stored session, and pages of events before a cursor."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.server.totals import SessionTotals, tokens_text


@pytest.fixture
async def server(db_path: Path) -> Server:
    opened = await Server.open(db_path)
    yield opened
    await opened.close()


async def test_totals_sum_usage_and_cost_and_keep_the_last_context(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.Started(model="p/m", wire="openai-chat", context_window=200_000)))
    await server.append(draft.id, Event(ev.Usage(input=100, output=10, cache_read=50, cache_write=None)))
    await server.append(draft.id, Event(ev.Cost(usd=0.002)))
    middle = (await server.append(draft.id, Event(ev.TextDelta(text="x" * 2000)))).seq
    await server.append(draft.id, Event(ev.Usage(input=300, output=20, cache_read=0)))
    await server.append(draft.id, Event(ev.Cost(usd=0.003)))

    totals = await server.session_totals(draft.id)
    assert (totals.input, totals.output, totals.context_tokens, totals.context_window) == (
        400,
        30,
        320,
        200_000,
    )
    assert totals.cost_text == "$0.0050" and not totals.unpriced
    assert totals.context_text == "320/200k (0%)"

    upto = await server.session_totals(draft.id, up_to=middle)
    assert (upto.input, upto.output, upto.context_tokens, upto.cost_text) == (100, 10, 160, "$0.0020")


async def test_one_unpriced_call_blanks_the_cost(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.Cost(usd=1.5)))
    await server.append(draft.id, Event(ev.Cost(usd=None)))
    totals = await server.session_totals(draft.id)
    assert totals.unpriced and totals.cost_text == ""


async def test_a_draft_has_empty_totals_and_no_events(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    assert await server.session_totals(draft.id) == SessionTotals()
    assert await server.events_before(draft.id, 10, 5) == []


async def test_events_before_pages_back_oldest_first(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    for n in range(10):
        await server.append(draft.id, Event(ev.TextDelta(text=str(n))))
    page = await server.events_before(draft.id, 8, 3)
    assert [e.seq for e in page] == [5, 6, 7]
    assert [e.body.text for e in page] == ["4", "5", "6"]
    assert [e.seq for e in await server.events_before(draft.id, 3, 10)] == [1, 2]


def test_token_counts_read_well_in_a_narrow_line() -> None:
    assert [tokens_text(n) for n in (0, 950, 1_000, 12_345, 99_999, 200_000, 1_047_576)] == [
        "0",
        "950",
        "1k",
        "12.3k",
        "100k",
        "200k",
        "1M",
    ]


async def test_totals_include_events_stored_compressed(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    # A payload this large is stored zlib-compressed: SQLite's JSON functions cannot read it.
    await server.append(draft.id, Event(ev.Usage(input=7, output=3, model="m" * 4000)))
    await server.append(draft.id, Event(ev.Cost(usd=0.5)))
    await server.append(draft.id, Event(ev.Usage(input=1, output=1)))
    totals = await server.session_totals(draft.id)
    assert (totals.input, totals.output, totals.cost_text, totals.context_tokens) == (8, 4, "$0.50", 2)
    with sqlite3.connect(server.store.db.path) as db:
        kinds = {row[0] for row in db.execute("SELECT typeof(payload) FROM events")}
    assert kinds == {"text", "blob"}


async def test_calls_whose_provider_reported_no_usage_show_as_unknown_not_zero(
    server: Server, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    assert (await server.session_totals(draft.id)).tokens_text == ""  # no call yet
    await server.append(draft.id, Event(ev.Cost(usd=None)))  # a call, no usage reported
    unknown = await server.session_totals(draft.id)
    assert unknown.tokens_text == "tokens unknown" and (unknown.calls, unknown.reported) == (1, 0)
    await server.append(draft.id, Event(ev.Usage(input=1200, output=300)))
    await server.append(draft.id, Event(ev.Cost(usd=None)))
    assert (await server.session_totals(draft.id)).tokens_text == "↑1.2k ↓300 +?"
    await server.append(draft.id, Event(ev.Usage(input=None, output=None, model="m")))  # nulls: not reported
    await server.append(draft.id, Event(ev.Cost(usd=None)))
    live = SessionTotals()
    for event in await server.events_after(draft.id):
        live.add(event.body)
    assert live.tokens_text == (await server.session_totals(draft.id)).tokens_text == "↑1.2k ↓300 +?"
