"""Ctrl+C on the help and confirmation dialogs: as in the prompt, a first press says a second one
quits, and the second quits (it did nothing at all there: Textual's Screen binds it to copy)."""

from __future__ import annotations

import pytest
from textual.screen import ModalScreen

from harnez.tui.screens.dialogs import ConfirmDialog, HelpScreen
from harnez.tui.screens.session import SessionScreen
from tests.tui.helpers import ctrl_c_twice_quits, wait_for


@pytest.mark.parametrize(
    "dialog", [HelpScreen, lambda: ConfirmDialog("Delete the session “x”?")], ids=["help", "confirm"]
)
async def test_ctrl_c_on_a_dialog_says_a_second_one_quits_and_the_second_quits(make_app, dialog) -> None:
    app = make_app()
    async with app.run_test(size=(100, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "session")
        shown = dialog()
        app.push_screen(shown)
        await wait_for(pilot, lambda: app.screen is shown and shown.is_attached, "the dialog")
        await pilot.pause()
        assert isinstance(shown, ModalScreen)
        await ctrl_c_twice_quits(pilot, type(shown))
