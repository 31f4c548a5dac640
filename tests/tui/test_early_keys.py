"""Keys typed before the first screen's prompt has focus (right after start) reach the prompt, in order."""

from __future__ import annotations

from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import wait_for


async def test_keys_pressed_before_anything_has_focus_reach_the_first_focused_widget(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        prompt = app.screen.query_one(PromptInput)
        # As in the first half second of a real start: nothing focused yet, keys already coming.
        app.screen.set_focus(None)
        app._early_keys = []
        await pilot.press(*"hel", "ctrl+j", *"lo")
        await pilot.pause()
        assert prompt.text == "" and [key.key for key in app._early_keys] == [
            "h",
            "e",
            "l",
            "ctrl+j",
            "l",
            "o",
        ]
        prompt.focus()
        await wait_for(pilot, lambda: app._early_keys is None, "the kept keys given to the prompt")
        # The kept Ctrl+J was an Enter the terminal turned into a line feed before Textual set it raw:
        # "hel" is sent as a prompt, "lo" typed after it.
        await wait_for(pilot, lambda: prompt.text == "lo", "the later keys in the prompt")
        await wait_for(
            pilot,
            lambda: any(message.text == "hel" for message in app.screen.query("UserBlock")),
            "the first line sent",
        )
        await pilot.press("x")  # from now on keys go where Textual sends them
        assert prompt.text == "lox" and app._early_keys is None


async def test_a_priority_key_acts_at_once_and_is_not_kept(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        app.screen.set_focus(None)
        app._early_keys = []
        modes = [app.permission_mode]
        await pilot.press("shift+tab")  # bound with priority by the app: cycles the permission mode
        await pilot.pause()
        assert app._early_keys == [] and app.permission_mode != modes[0]
