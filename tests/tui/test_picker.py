"""The resume picker over a real store: listing, full-text search, scope, paging, rename, delete."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.store.titlefilter import TitleFilter
from harnez.tui.screens.dialogs import ConfirmDialog, RenameDialog
from harnez.tui.screens.picker import PAGE_SIZE, PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.transcript import OPEN_BLOCKS, Transcript
from tests.tui.helpers import seed_session, wait_for


async def seed(db_path: Path, workspace: Path, count: int = 3) -> list[str]:
    server = await Server.open(db_path)
    try:
        ids = [
            await seed_session(
                server, workspace, "the zebra migration plan" if i == 0 else f"routine chat {i}"
            )
            for i in range(count)
        ]
        await seed_session(server, workspace.parent / "elsewhere", "a chat in another project")
    finally:
        await server.close()
    return ids


def picker(app) -> PickerScreen:
    assert isinstance(app.screen, PickerScreen)
    return app.screen


async def test_search_finds_an_old_session_by_its_conversation_text(make_app, db_path, workspace) -> None:
    ids = await seed(db_path, workspace, count=PAGE_SIZE + 5)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and picker(app).records, "first page")
        assert ids[0] not in picker(app).records
        app.screen.query_one(Input).value = "zebra"
        await wait_for(pilot, lambda: list(picker(app).records) == [ids[0]], "search result")
        assert "[zebra]" in picker(app).snippets[ids[0]]
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == ids[0]
        )
        await wait_for(pilot, lambda: app.screen.query_one(Transcript).blocks, "replayed")


async def test_more_rows_load_near_the_end_and_scope_toggles(make_app, db_path, workspace) -> None:
    await seed(db_path, workspace, count=PAGE_SIZE + 5)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and picker(app).records)
        options = app.screen.query_one(OptionList)
        options.highlighted = options.option_count - 1  # the rows that fit listed; the rest then
        await wait_for(pilot, lambda: len(picker(app).records) == PAGE_SIZE, "the rest of the first page")
        options.highlighted = PAGE_SIZE - 1
        await wait_for(pilot, lambda: len(picker(app).records) == PAGE_SIZE + 5, "second page")
        await pilot.press("ctrl+t")
        await wait_for(
            pilot,
            lambda: any(r.workspace.endswith("elsewhere") for r in picker(app).records.values()),
            "first page of all workspaces",
        )


async def test_page_down_moves_by_the_rows_in_view_and_reaches_every_session(
    make_app, db_path, workspace
) -> None:
    ids = await seed(db_path, workspace, count=PAGE_SIZE + 5)
    app = make_app(open_picker=True)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready and picker(app).records)
        options = app.screen.query_one(OptionList)
        assert app.screen.focused is app.screen.query_one(Input)  # the keys go to the search box
        await pilot.press("pagedown")
        first = options.highlighted
        assert first is not None and first > 1, "a page, not a row"
        for _ in range(60):  # pages, until the oldest session is highlighted
            if picker(app).selected_id == ids[0]:
                break
            await pilot.press("pagedown")
            await pilot.pause(0.02)
        assert picker(app).selected_id == ids[0] and len(picker(app).records) == PAGE_SIZE + 5
        await pilot.press("pageup")
        assert options.highlighted is not None and options.highlighted < options.option_count - 1


async def test_rename_and_delete_from_the_picker(make_app, db_path, workspace) -> None:
    ids = await seed(db_path, workspace, count=2)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and len(picker(app).records) == 2)
        newest = picker(app).selected_id
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RenameDialog))
        app.screen.query_one(Input).value = "Zebra planning"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, PickerScreen) and picker(app).records[newest].title == "Zebra planning"
            ),
            "renamed row",
        )
        assert (await app.server.get_session(newest)).title_source == "user"
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        assert newest in picker(app).records
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: newest not in picker(app).records, "row removed")
        remaining = (await app.server.list_sessions(workspace=workspace)).sessions
        assert [r.id for r in remaining] == [i for i in ids if i != newest]


async def test_deleting_the_session_shown_then_closing_the_picker_opens_a_new_session(
    make_app, db_path, workspace
) -> None:
    ids = await seed(db_path, workspace, count=2)
    app = make_app(resume=ids[-1])
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        app.open_picker()
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen) and picker(app).records)
        assert picker(app).selected_id == ids[-1]  # the newest: the one shown
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: ids[-1] not in picker(app).records, "row removed")
        await pilot.press("escape")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id not in ids,
            "a new session instead of the deleted one",
        )
        assert app.server.draft(app.screen.session_id) is not None


async def test_a_long_session_mounts_its_newest_exchanges_and_loads_older_on_scroll(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        draft = server.create_session(workspace)
        record = await server.persist(draft.id)
        events = []
        for i in range(2500):
            events.append(Event(ev.UserMessage(text=f"question {i}", mode="prompt")))
            events.append(Event(ev.TextDelta(text=f"answer {i}")))
        await server.store.events.append_many(record.num, record.id, events)
    finally:
        await server.close()
    app = make_app(resume=draft.id)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and app.screen.query_one(Transcript).blocks, "window")
        transcript = app.screen.query_one(Transcript)
        await wait_for(
            pilot, lambda: not transcript.mounting_older, "the window's older blocks mounted above"
        )
        # The newest 200 events were read; their newest exchanges are mounted (OPEN_BLOCKS blocks).
        assert len(transcript.blocks) == OPEN_BLOCKS and transcript.has_older
        assert (transcript.blocks[0].text, transcript.blocks[-1].text) == ("question 2485", "answer 2499")
        oldest = transcript.oldest_seq
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: transcript.oldest_seq < oldest, "older page")
        assert len(transcript.blocks) == OPEN_BLOCKS + 200  # the 200 events before the first shown
        assert transcript.blocks[0].text == "question 2385"


async def test_rows_follow_changes_made_elsewhere(make_app, db_path, workspace) -> None:
    ids = await seed(db_path, workspace, count=3)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and len(picker(app).records) == 3, "first page")
        # Another process (a headless run, another terminal) renames one, deletes one, adds one.
        other = await Server.open(db_path)
        try:
            await other.rename(ids[1], "Renamed in another window")
            await other.delete_session(ids[2])
            newcomer = await seed_session(other, workspace, "a session started elsewhere")
        finally:
            await other.close()
        rows = picker(app).records
        await wait_for(
            pilot,
            lambda: (
                newcomer in rows and ids[2] not in rows and rows[ids[1]].title == "Renamed in another window"
            ),
            "live rows",
            tries=1500,
        )
        options = app.screen.query_one(OptionList)
        assert options.get_option_at_index(0).id == newcomer
        prompt = str(options.get_option(ids[1]).prompt)
        assert "Renamed in another window" in prompt


async def test_each_key_lists_title_matches_then_a_pause_searches_the_conversations(
    make_app, db_path, workspace
) -> None:
    ids = await seed(db_path, workspace, count=3)  # only the first mentions a zebra, in its conversation
    server = await Server.open(db_path)
    try:
        titled = await seed_session(server, workspace, "a chat about stripes", title="Zebra crossing")
    finally:
        await server.close()
    app = make_app(open_picker=True)
    shown: list[tuple[str, bool, list[str]]] = []
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and picker(app).records)
        screen = picker(app)
        original = screen._show_page

        async def recorded(reset: bool, keep: str | None = None, full_text: bool = True) -> None:
            await original(reset, keep, full_text)
            shown.append((screen.shown_query, screen.shown_full_text, list(screen.records)))

        screen._show_page = recorded  # type: ignore[method-assign]
        await pilot.press(*"zebra")
        await wait_for(pilot, lambda: screen.shown_full_text and screen.shown_query == "zebra", "search")
        assert shown[-2] == ("zebra", False, [titled])  # the title filter's rows came first
        assert set(shown[-1][2]) == {titled, ids[0]} and "[zebra]" in screen.snippets[ids[0]]


async def test_a_filter_overtaken_by_the_next_key_is_stopped_in_the_database_not_waited_for(
    make_app, db_path, workspace, monkeypatch
) -> None:
    ids = await seed(db_path, workspace, count=3)
    original = TitleFilter.condition
    endless = (
        "(SELECT count(*) FROM (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
        "LIMIT 2000000000) SELECT x FROM n)) > 0"
    )  # minutes of counting: the next key's rows show only if this query is stopped

    async def slow_for_slow(self, text: str, scope: str | None) -> tuple[str, list]:
        return (endless, []) if text == "slow" else await original(self, text, scope)

    monkeypatch.setattr(TitleFilter, "condition", slow_for_slow)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and picker(app).records)
        screen = picker(app)
        search = app.screen.query_one(Input)
        search.value = "slow"
        await wait_for(pilot, lambda: screen._loading, "the slow filter reading")
        await pilot.pause(0.2)
        search.value = ids[1][:8]
        await wait_for(pilot, lambda: list(screen.records) == [ids[1]], "the next key's rows")
        assert not [n for n in app._notifications if n.severity == "error"]


async def test_rows_shown_before_are_reused_and_a_page_that_reads_the_same_stays(
    make_app, db_path, workspace
) -> None:
    server = await Server.open(db_path)
    try:
        for title in ("Routine chat 1", "Routine chat 2", "Routine chat 3", "Zebra plan"):
            await seed_session(server, workspace, f"a {title.lower()}", title=title)
    finally:
        await server.close()
    app = make_app(open_picker=True)
    shown: list[tuple[str, bool, list[Option]]] = []
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and len(picker(app).records) == 4)
        screen, options = picker(app), app.screen.query_one(OptionList)
        original = screen._show_page

        async def recorded(reset: bool, keep: str | None = None, full_text: bool = True) -> None:
            await original(reset, keep, full_text)
            shown.append((screen.shown_query, screen.shown_full_text, list(options.options)))

        def rows(query: str, full_text: bool) -> list[Option] | None:
            """The rows last shown for `query` (by the search, or the title filter)."""
            return next((r for q, f, r in reversed(shown) if (q, f) == (query, full_text)), None)

        def answered(query: str) -> bool:
            return rows(query, False) is not None and rows(query, True) is not None

        screen._show_page = recorded  # type: ignore[method-assign]
        await pilot.press(*"rout")
        await wait_for(pilot, lambda: answered("rout"), "filter, then search")
        await pilot.press(*"ine chat 2")
        await wait_for(pilot, lambda: answered("routine chat 2"), "the narrowed filter, then search")
        [row] = rows("routine chat 2", False) or []
        assert any(row.prompt is old.prompt for old in rows("rout", False) or [])  # built for "rout"
        await pilot.press("backspace")
        await wait_for(pilot, lambda: screen.shown_query == "routine chat" and screen.shown_full_text)
        before = list(options.options)
        await pilot.press("down")
        assert len(before) == 3 and options.highlighted == 1
        count = len(shown)
        screen.attach(screen.server, screen.open_database)  # the same page read again
        await wait_for(pilot, lambda: len(shown) > count, "the page read again")
        assert all(new is old for new, old in zip(options.options, before, strict=True))  # not rebuilt
        assert options.highlighted == 1  # the highlighted session kept, as the page read anew does


def test_help_lists_every_key_the_picker_binds() -> None:
    """/help's picker section left out Page Up / Page Down, which the picker binds (and the README
    lists)."""
    from textual.binding import Binding

    from harnez.tui.commands import help_markdown

    section = help_markdown().split("# Resume picker")[1].split("# Approval prompt")[0]
    names = {"pageup": "Page Up", "pagedown": "Page Down", "escape": "Esc", "up": "Up", "down": "Down"}
    for binding in PickerScreen.BINDINGS:
        key = binding.key if isinstance(binding, Binding) else binding[0]
        if key == "ctrl+c":  # the prompt's key, listed with it
            continue
        assert names.get(key, key.replace("ctrl+", "Ctrl+")).lower() in section.lower(), key
