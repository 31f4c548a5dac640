"""Ctrl+C on the help and confirmation dialogs, the rename dialog and the model picker: as in the
prompt, a first press says a second one quits, and the second quits (it did nothing at all there:
Textual's Screen, and its Input, bind it to copy)."""

from __future__ import annotations

import pytest
from textual.screen import ModalScreen
from textual.widgets import Input

from harnez.tui.screens.dialogs import ConfirmDialog, HelpScreen, RenameDialog
from harnez.tui.screens.model_picker import ModelPickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import AgentApp, ctrl_c_twice_quits, wait_for


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


@pytest.mark.parametrize(
    ("command", "dialog"),
    [("/session-name", RenameDialog), ("/model", ModelPickerScreen)],
    ids=["rename", "model-picker"],
)
async def test_ctrl_c_in_a_dialogs_input_says_a_second_one_quits_and_the_second_quits(
    agent_app: AgentApp, command: str, dialog: type
) -> None:
    """The rename dialog and the model picker are opened by their commands, their input focused: that
    input's own Ctrl+C (copy) took the key, so nothing was said and nothing quit."""
    app = agent_app()
    async with app.run_test(size=(100, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "session")
        app.screen.query_one(PromptInput).load_text(command)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, dialog) and app.screen.is_attached, "the dialog")
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await ctrl_c_twice_quits(pilot, dialog)
