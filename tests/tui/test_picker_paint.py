"""The picker lists the rows that fit the screen, and the rest of the page when the selection or the scroll
comes near their end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList

from harnez.server.server import Server
from harnez.store.sessions import decode_cursor, encode_cursor
from harnez.tui.screens.picker import PAGE_SIZE, PickerScreen
from tests.tui.helpers import seed_database, wait_for


async def seed_many(db_path: Path, workspace: Path, count: int) -> list[str]:
    """`count` sessions of the workspace, newest first (as the picker lists them)."""
    ids = await seed_database(db_path, workspace, [(f"routine chat {i}", None) for i in range(count)])
    server = await Server.open(db_path)
    try:
        page = await server.list_sessions(None, workspace, None, count)
    finally:
        await server.close()
    assert sorted(r.id for r in page.sessions) == sorted(ids)
    return [r.id for r in page.sessions]


async def app_over_a_page_and_more(make_app: Any, db_path: Path, workspace: Path) -> tuple[Any, list[str]]:
    """An app opening on the picker over a page of sessions and five more; their ids, newest first."""
    newest_first = await seed_many(db_path, workspace, PAGE_SIZE + 5)
    return make_app(open_picker=True), newest_first


def rows_at_each_frame(app: Any) -> list[int]:
    """The picker's row count at every frame the app paints from now on (Textual's own display hook)."""
    counts: list[int] = []
    display = app._display

    def counted(screen: Any, update: Any) -> None:
        display(screen, update)
        if update is not None and isinstance(screen, PickerScreen) and screen.query(OptionList):
            counts.append(screen.query_one(OptionList).option_count)

    app._display = counted
    return counts


def listed(app: Any) -> list[str | None]:
    return [option.id for option in app.screen.query_one(OptionList).options]


@asynccontextmanager
async def picker_over_a_page_and_more(
    app: Any, size: tuple[int, int]
) -> AsyncIterator[tuple[Pilot, PickerScreen, OptionList]]:
    """`app` run at `size` with its picker showing its first rows."""
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.ready and listed(app), "the first rows")
        assert isinstance(app.screen, PickerScreen)
        yield pilot, app.screen, app.screen.query_one(OptionList)


async def test_the_rows_that_fit_are_listed_and_the_rest_of_the_page_when_the_selection_nears_them(
    make_app, db_path, workspace
) -> None:
    app, newest_first = await app_over_a_page_and_more(make_app, db_path, workspace)
    counts = rows_at_each_frame(app)
    async with picker_over_a_page_and_more(app, (80, 24)) as (pilot, screen, options):
        await pilot.pause(0.2)
        fit = len(listed(app))
        assert fit < PAGE_SIZE and set(counts) - {0} == {fit}  # painted with the rows that fit, no more
        assert 3 * fit >= options.size.height  # ... and they fill the list (three lines a row)
        assert listed(app) == newest_first[:fit] and screen._cursor is not None  # the next page not read
        for _ in range(fit):
            await pilot.press("down")
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE, "the rest of the page")
        assert listed(app) == newest_first[:PAGE_SIZE] and options.highlighted == fit
        assert screen._cursor is not None and not screen._loading  # the next page not read yet


async def test_paging_to_the_end_on_a_short_screen_lists_every_session_once_in_order(
    make_app, db_path, workspace
) -> None:
    app, newest_first = await app_over_a_page_and_more(make_app, db_path, workspace)
    async with picker_over_a_page_and_more(app, (80, 10)) as (pilot, _, options):
        while len(listed(app)) < len(newest_first):
            count = options.option_count
            options.highlighted = count - 1  # the rest of the page, or the next page
            await wait_for(pilot, lambda: options.option_count > count, "more rows")  # noqa: B023
        await pilot.pause(0.1)
        assert listed(app) == newest_first


async def test_a_list_replaced_before_its_rest_was_listed_never_gets_that_rest(
    make_app, db_path, workspace
) -> None:
    app, _ = await app_over_a_page_and_more(make_app, db_path, workspace)
    async with picker_over_a_page_and_more(app, (80, 24)) as (pilot, screen, options):
        options.highlighted = options.option_count - 1  # the rest listed: the whole page
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE, "the whole first page")
        page = list(screen.records.values())
        screen._replace_rows(options, page[::-1], None)  # the next key's rows, their rest not listed,
        screen._replace_rows(options, page[1:], None)  # then the last key's
        options.highlighted = options.option_count - 1
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE - 1, "the rest of the last list")
        await pilot.pause(0.1)
        assert listed(app) == [r.id for r in page[1:]]


async def test_a_page_read_anew_that_reads_the_same_keeps_the_rows_listed_and_the_rest_unlisted(
    make_app, db_path, workspace
) -> None:
    app, newest_first = await app_over_a_page_and_more(make_app, db_path, workspace)
    async with picker_over_a_page_and_more(app, (80, 24)) as (pilot, screen, options):
        before, fit = list(options.options), len(listed(app))
        read = screen._show_page
        reads: list[bool] = []

        async def counted(reset: bool, keep: str | None = None, full_text: bool = True) -> None:
            await read(reset, keep, full_text)
            reads.append(reset)

        screen._show_page = counted  # type: ignore[method-assign]
        screen.attach(screen.server, screen.open_database)  # the same page read again
        await wait_for(pilot, lambda: reads, "the page read again")
        assert all(new is old for new, old in zip(options.options, before, strict=True))  # not rebuilt
        options.highlighted = fit - 1
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE, "the rest of the page")
        assert listed(app) == newest_first[:PAGE_SIZE]


async def test_rows_not_listed_yet_follow_changes_made_elsewhere_before_they_are_listed(
    make_app, db_path, workspace
) -> None:
    app, newest_first = await app_over_a_page_and_more(make_app, db_path, workspace)
    async with picker_over_a_page_and_more(app, (80, 24)) as (pilot, screen, options):
        fit = len(listed(app))
        renamed, deleted = newest_first[fit + 2], newest_first[fit + 3]
        other = await Server.open(db_path)  # another window renames one and deletes one, both unlisted
        try:
            await other.rename(renamed, "Renamed in another window")
            await other.delete_session(deleted)
        finally:
            await other.close()
        await wait_for(
            pilot,
            lambda: any(r.title == "Renamed in another window" for r in screen._rest),
            "the rows not listed re-read",
            tries=1500,
        )
        options.highlighted = fit - 1
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE - 1, "the rest of the page")
        assert deleted not in listed(app)
        assert "Renamed in another window" in str(options.get_option(renamed).prompt)


async def test_a_page_that_lists_nothing_new_is_read_past_without_a_key(make_app, db_path, workspace) -> None:
    app, newest_first = await app_over_a_page_and_more(make_app, db_path, workspace)
    async with picker_over_a_page_and_more(app, (80, 24)) as (pilot, screen, options):
        read = screen._listing
        empty_pages = 0

        async def with_an_empty_page(query: Any, cursor: Any, limit: int, full_text: bool = True) -> Any:
            nonlocal empty_pages
            page = await read(query, cursor, limit, full_text)
            if cursor is not None and empty_pages == 0:  # e.g. its sessions deleted since the search
                empty_pages += 1
                moment, num = decode_cursor(cursor)  # a cursor that moved on, as far as the last page
                return replace(page, sessions=[], next_cursor=encode_cursor(moment, num + 1))
            return page

        screen._listing = with_an_empty_page  # type: ignore[method-assign]
        options.highlighted = options.option_count - 1  # the rest of the page
        await wait_for(pilot, lambda: len(listed(app)) == PAGE_SIZE, "the whole first page")
        options.highlighted = PAGE_SIZE - 1  # the next page: empty, then the real one, with no key between
        await wait_for(pilot, lambda: len(listed(app)) == len(newest_first), "the page after the empty one")
        assert empty_pages == 1 and listed(app) == newest_first
