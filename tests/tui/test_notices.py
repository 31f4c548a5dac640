"""Notifications stay clear of what is typed; a long one is short on screen and whole behind Ctrl+N."""

from __future__ import annotations

import pytest
from textual.errors import NoWidget
from textual.geometry import Region
from textual.widgets import Input, Static
from textual.widgets._toast import Toast

from harnez.settings.model import title_source_problem
from harnez.tui.notices import MORE_HINT, NoticesScreen, short_text
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import wait_for

LONG_WARNING = title_source_problem("model/nowhere", "/home/dev/.config/harnez/settings.json")
assert LONG_WARNING is not None


def test_a_short_notification_is_shown_whole_and_a_long_one_cut_at_a_word() -> None:
    assert short_text("Model openai/gpt-5 saved as the default.") is None
    assert short_text("one\ntwo\nthree\nfour") is not None  # four lines are too tall, however short
    assert short_text(LONG_WARNING) == (
        "Ignored setting in /home/dev/.config/harnez/settings.json, key `session.title.source`: the title source…"
    )
    assert short_text("A first sentence. " + "Then much more detail " * 10) == "A first sentence."


def _in_view(app, toast: Toast) -> Region:
    """The part of a toast on screen (a stack taller than its room is cut at its foot)."""
    try:
        geometry = app.screen.find_widget(toast)
    except NoWidget:  # hidden, or not laid out yet
        return Region()
    return geometry.region.intersection(geometry.clip)


def _toast_regions(app) -> list[Region]:
    return [region for toast in app.screen.query(Toast) if (region := _in_view(app, toast)).area]


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 20), (50, 15)])
async def test_toasts_never_cover_the_prompt_or_the_pickers_search(make_app, size) -> None:
    """At 60x20 a third toast went down over the prompt, at 50x15 a second one did."""
    app = make_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.notify("Press Ctrl+C again to quit.")
        app.notify(LONG_WARNING, severity="warning", timeout=30)
        await wait_for(pilot, lambda: len(app.screen.query(Toast)) == 2, "toasts shown")
        app.notify("Renamed to the parser crash.")
        await wait_for(
            pilot, lambda: _in_view(app, app.screen.query(Toast)[-1]).area, "the newest toast in view"
        )
        prompt = app.screen.query_one(PromptInput).region
        assert all(not region.overlaps(prompt) for region in _toast_regions(app))
        await pilot.press(*"one", "ctrl+j", *"two", "ctrl+j", *"three", "ctrl+j", "four")
        await pilot.pause()
        prompt = app.screen.query_one(PromptInput).region
        assert prompt.height > 3  # the prompt grew with its lines: the toasts keep above it
        assert all(not region.overlaps(prompt) for region in _toast_regions(app))
        app.open_picker()
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.is_active)
        app.notify("Renamed.")
        await wait_for(pilot, lambda: _toast_regions(app), "a toast on the picker")
        search = app.screen.query_one("#picker-search", Input).region
        assert all(not region.overlaps(search) for region in _toast_regions(app))


async def test_a_long_warning_is_short_on_screen_and_whole_behind_ctrl_n(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.notify(LONG_WARNING, severity="warning", timeout=30)
        app.notify("Model openai/gpt-5 saved.")
        await wait_for(pilot, lambda: len(app.screen.query(Toast)) == 2, "toasts")
        shown = [str(toast.render()) for toast in app.screen.query(Toast)]
        assert any(MORE_HINT in text and "Sessions keep" not in text for text in shown)
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, NoticesScreen))
        listed = [str(s.content) for s in app.screen.query(Static).filter(".notice")]
        assert "Model openai/gpt-5 saved." in listed[0]  # newest first
        assert LONG_WARNING.split(". ")[-1] in listed[1]  # the whole text, to its last sentence
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, NoticesScreen))
        assert app.screen.query_one(PromptInput).has_focus
