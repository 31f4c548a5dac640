"""A code fence streamed into an answer is highlighted and drawn chunk by chunk as its lines come,
not all again at every append, and looks the same as a fence shown whole once it is complete."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Label
from textual.widgets.markdown import MarkdownFence

from harnez.tui.widgets import markdown as md
from harnez.tui.widgets.markdown import CHUNK_LINES, AnswerMarkdown, StreamedFence

LINES = 120
CODE = "\n".join(f'value_{n} = compute("text {n}", {n})  # line {n}' for n in range(LINES))


class Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield AnswerMarkdown()


def fence_of(app: App[Any]) -> StreamedFence:
    fences = list(app.query(StreamedFence))
    assert len(fences) == 1
    return fences[0]


def styles(content: Content) -> list[tuple[str, tuple[str, ...]]]:
    """Each character but the newlines, with the styles of the spans over it, in order."""
    over: list[list[str]] = [[] for _ in content.plain]
    for span in content.spans:
        for at in range(span.start, span.end):
            over[at].append(str(span.style))
    return [(char, tuple(names)) for char, names in zip(content.plain, over, strict=True) if char != "\n"]


def shown(fence: StreamedFence) -> Content:
    return Content("\n").join([chunk.visual for chunk in fence.query(Label)])  # type: ignore[misc]


async def stream(app: App[Any], pilot: Any, fragments: list[str]) -> AnswerMarkdown:
    markdown = app.query_one(AnswerMarkdown)
    for fragment in fragments:
        await markdown.append(fragment)
        await markdown.settle_fences()
    await pilot.pause()
    return markdown


def highlighted_lines(monkeypatch) -> list[int]:
    """Count the lines every fence highlight is given."""
    counts: list[int] = []
    original = MarkdownFence.highlight.__func__  # type: ignore[attr-defined]

    def counting(
        cls: type[MarkdownFence], code: str, language: str, ansi: bool = False, dark: bool = False
    ) -> Content:
        counts.append(code.count("\n") + 1)
        return original(cls, code, language, ansi, dark)  # type: ignore[no-any-return]

    monkeypatch.setattr(md.StreamedFence, "highlight", classmethod(counting))
    return counts


async def test_a_streamed_fence_highlights_each_line_a_bounded_number_of_times(monkeypatch) -> None:
    counts = highlighted_lines(monkeypatch)
    fragments = ["Here it is:\n\n```python\n"] + [line + "\n" for line in CODE.split("\n")]
    app = Answers()
    async with app.run_test(size=(100, 30)) as pilot:
        markdown = await stream(app, pilot, fragments)
        fence = fence_of(app)
        assert not fence.whole, "still open: drawn by chunks"
        # Textual's fence highlights the whole code at every append: LINES²/2 = 7,200 lines here.
        assert sum(counts) <= LINES * (CHUNK_LINES + 2)
        assert len(fence.query(Label)) == -(-LINES // CHUNK_LINES)
        assert shown(fence).plain == CODE
        assert fence.size.height == LINES + 2, "one blank line above and below, as Textual's fence"
        pads = [tuple(chunk.styles.padding) for chunk in fence.query(Label)]
        assert pads[0] == (1, 2, 0, 2) and pads[-1] == (0, 2, 1, 2), "indented by 2, as Textual's fence"
        assert set(pads[1:-1]) == {(0, 2, 0, 2)}

        counts.clear()
        await markdown.append("```\n\nAnd a paragraph after it.\n")
        await markdown.settle_fences()
        await pilot.pause()
        assert fence.whole and counts[-1] == LINES, "complete: highlighted whole, once"
        assert sum(counts) <= LINES + CHUNK_LINES, "and its last chunk once more before"
        whole = MarkdownFence.highlight(
            CODE, "python", ansi=app.native_ansi_color, dark=app.current_theme.dark
        )
        assert shown(fence).plain == whole.plain
        assert styles(shown(fence)) == styles(whole)
        assert fence.size.height == LINES + 2


async def test_a_fence_ended_by_the_answer_is_highlighted_whole_and_one_shown_whole_is_the_same() -> None:
    app = Answers()
    async with app.run_test(size=(100, 30)) as pilot:
        markdown = await stream(app, pilot, ["```python\n", CODE[:400], CODE[400:]])
        fence = fence_of(app)
        assert not fence.whole
        await markdown.settle_fences(every=True)
        await pilot.pause()
        assert fence.whole and not markdown.open_fences
        streamed = shown(fence)

    stored = Answers()
    async with stored.run_test(size=(100, 30)) as pilot:
        await stream(stored, pilot, [f"```python\n{CODE}\n```\n"])
        fence = fence_of(stored)
        assert fence.whole
        assert shown(fence).plain == streamed.plain and styles(shown(fence)) == styles(streamed)
        assert fence.size.height == LINES + 2


async def test_a_code_line_wider_than_the_answer_wraps_instead_of_being_cut_off() -> None:
    """Textual's fence scrolls sideways with its scrollbar hidden: the end of a long line was cut off
    at the edge, with no sign of it and no key to reach it."""
    line = 'message = "' + "A" * 150 + '"  # END_OF_LINE'
    for fragments in (
        [f"```python\n{line}\nprint(message)\n"],
        [f"```python\n{line}\nprint(message)\n```\n"],
    ):
        app = Answers()
        async with app.run_test(size=(80, 30)) as pilot:
            await stream(app, pilot, fragments)
            fence = fence_of(app)
            (label,) = fence.query(Label)
            assert label.region.right <= fence.region.right, "no wider than the fence"
            assert fence.size.height >= 2 + 3 + 2, "the long line wrapped: three rows, not one"
            assert "END_OF_LINE" in app.export_screenshot()
