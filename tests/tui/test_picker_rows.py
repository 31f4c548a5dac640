"""The picker's rows are built once and reused while they read the same (`RowCache`)."""

from __future__ import annotations

import dataclasses
import sys
import time

import pytest

from harnez.store.sessions import SessionRecord
from harnez.tui.screens.picker import RowCache, session_row

NOW = time.time()
"""Each test moves this to its own start (a test may run minutes after its module was collected)."""


def record(number: int, title: str = "Fix the parser", updated_ago: float = 30.0) -> SessionRecord:
    """A session last active `updated_ago` seconds before the test began."""
    return SessionRecord(
        num=number,
        id=f"{number:08d}-aaaa",
        workspace="/home/ana/parser",
        title=title,
        title_source="user",
        naming_used=False,
        model="scripted/demo",
        status="idle",
        created_at=NOW - 7200,
        updated_at=NOW - updated_ago,
    )


@pytest.fixture(autouse=True)
def _now_is_the_tests_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "NOW", time.time())


def test_a_row_shown_again_is_the_same_content_and_reads_as_built() -> None:
    rows = RowCache(10)
    first = rows.row(record(1), "the [parser] fails", None)
    assert rows.row(record(1), "the [parser] fails", None) is first
    assert first.plain == session_row(record(1), "the [parser] fails").plain
    assert "Fix the parser" in first.plain and "active just now" in first.plain


def test_a_row_is_built_anew_when_anything_it_shows_changes() -> None:
    rows = RowCache(10)
    first = rows.row(record(1), None, None)
    renamed = rows.row(dataclasses.replace(record(1), title="Parser rewrite"), None, None)
    assert renamed is not first and "Parser rewrite" in renamed.plain
    assert rows.row(record(1), "a [parser] match", None) is not first
    assert "api" in rows.row(record(1), None, "api").plain
    older = rows.row(record(1, updated_ago=600), None, None)  # its "active …" text moved on
    assert older is not first and "active 10 min ago" in older.plain


def test_the_rows_kept_are_bounded_and_the_least_recently_shown_goes_first() -> None:
    rows = RowCache(2)
    one, two = rows.row(record(1), None, None), rows.row(record(2), None, None)
    assert rows.row(record(1), None, None) is one  # now the most recently shown
    rows.row(record(3), None, None)  # evicts 2
    assert rows.row(record(1), None, None) is one
    assert rows.row(record(2), None, None) is not two


def test_rows_cleared_are_built_anew() -> None:
    rows = RowCache(10)
    first = rows.row(record(1), None, None)
    rows.clear()
    again = rows.row(record(1), None, None)
    assert again is not first and again.plain == first.plain
