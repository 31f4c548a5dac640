"""The SSE parser: events, multi-line data, comments, and lines that break the format."""

from __future__ import annotations

from collections.abc import AsyncIterator

from harnez.wires.sse import SseEvent, SseMalformed, iter_sse


async def lines(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


async def parse(*items: str) -> list[object]:
    return [event async for event in iter_sse(lines(*items))]


async def test_named_and_unnamed_events_are_dispatched_at_blank_lines() -> None:
    got = await parse("event: ping", 'data: {"a": 1}', "", 'data: {"b": 2}', "")
    assert got == [SseEvent("ping", '{"a": 1}'), SseEvent("message", '{"b": 2}')]


async def test_data_lines_join_with_newlines_and_one_leading_space_is_dropped() -> None:
    assert await parse("data:  two spaces", "data:none", "") == [SseEvent("message", " two spaces\nnone")]


async def test_comments_ids_and_retry_fields_are_not_events() -> None:
    assert await parse(": keep-alive", "id: 7", "retry: 100", "", "data: x", "") == [SseEvent("message", "x")]


async def test_a_line_that_is_no_field_is_reported_and_the_stream_goes_on() -> None:
    got = await parse("data: a", "", "this is garbage", "bogus: value", "data: b", "")
    assert got == [
        SseEvent("message", "a"),
        SseMalformed("this is garbage"),
        SseMalformed("bogus: value"),
        SseEvent("message", "b"),
    ]


async def test_pending_data_at_the_end_of_the_stream_is_still_dispatched() -> None:
    assert await parse("event: last", "data: tail") == [SseEvent("last", "tail")]


async def test_an_event_with_no_data_is_not_dispatched() -> None:
    assert await parse("event: empty", "", "data: x", "") == [SseEvent("message", "x")]


async def test_lines_split_anywhere_across_chunks_come_out_whole() -> None:
    from harnez.wires.http import _lines_before

    body = "data: a\r\n\r\ndata: b\rdata: c\n\ndata: \u2028kept\r\n"
    expected = ["data: a", "", "data: b", "data: c", "", "data: \u2028kept"]

    async def chunks(parts: list[str]):  # type: ignore[no-untyped-def]
        for part in parts:
            yield part

    for cut in range(len(body) + 1):
        for second in range(cut, len(body) + 1):
            parts = [body[:cut], body[cut:second], body[second:]]
            lines = [line async for line in _lines_before(chunks(parts), float("inf"), 300.0)]
            assert lines == expected, (cut, second)
