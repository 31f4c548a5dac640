"""The `/model` picker: choose one of the configured models, or type `<provider>/<model>[:<thinking>]`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from harnez.server.models import thinking_levels
from harnez.tui.widgets.keys import CTRL_C_QUITS_OVER_INPUT

HINT = "Type to filter, or a whole <provider>/<model>[:<thinking>] · Enter select · Tab copy the row · Esc cancel"


def model_label(model: str, current: str | None) -> Content:
    """One row: the reference, its thinking levels when the catalogue knows them, `current` marked."""
    name = model.partition(":")[0]
    levels = thinking_levels(name.partition("/")[2])
    parts: list[tuple[str, str] | str] = [(model, "bold" if model == current else "")]
    if levels:
        shown = ", ".join(levels) if len(levels) <= 3 else f"{levels[0]} … {levels[-1]}"
        parts += ["  ", (f"thinking: {shown}", "dim")]
    if model == current:
        parts += ["  ", ("current", "italic")]
    return Content.assemble(*parts)


class ModelPickerScreen(ModalScreen[str | None]):
    """Dismisses with the chosen model reference, or None when cancelled."""

    CSS_PATH = "model_picker.tcss"
    AUTO_FOCUS = "#model-filter"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("tab", "copy", "Copy to the input", show=False, priority=True),
        CTRL_C_QUITS_OVER_INPUT,
    ]

    def __init__(self, choices: list[str], current: str | None) -> None:
        super().__init__()
        self.choices = list(choices)
        self.current = current
        if current and current not in self.choices:
            self.choices.insert(0, current)

    def compose(self) -> ComposeResult:
        with Vertical(id="model-box"):
            yield Label("Model for this session", id="model-heading")
            yield Input(placeholder="provider/model[:thinking]", id="model-filter")
            yield OptionList(id="model-options")
            yield Label(HINT, id="model-hint")

    def on_mount(self) -> None:
        self._fill("")

    @property
    def options(self) -> OptionList:
        return self.query_one(OptionList)

    def _fill(self, text: str) -> None:
        needle = text.strip().lower()
        shown = [c for c in self.choices if needle in c.lower()]
        options = self.options
        options.clear_options()
        options.add_options([Option(model_label(c, self.current), id=c) for c in shown])
        if shown:
            preferred = text.strip() if text.strip() in shown else self.current
            options.highlighted = shown.index(preferred) if preferred in shown else 0
        if not self.choices:
            options.add_option(
                Option(
                    Content.styled(
                        "No model is configured: type <provider>/<model> for a provider in settings.json.",
                        "dim",
                    ),
                    disabled=True,
                )
            )

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        chosen = self._highlighted() or event.value.strip()
        if chosen:
            self.dismiss(chosen)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(event.option.id)

    def _highlighted(self) -> str | None:
        index = self.options.highlighted
        if index is None or index >= self.options.option_count:
            return None
        option = self.options.get_option_at_index(index)
        return None if option.disabled else option.id

    def action_move(self, step: int) -> None:
        """Move the highlight while the input keeps the focus."""
        if self.options.option_count:
            self.options.action_cursor_down() if step > 0 else self.options.action_cursor_up()

    def action_copy(self) -> None:
        """Tab: put the highlighted model in the input, to add a thinking level (`:high`)."""
        chosen = self._highlighted()
        if chosen:
            field = self.query_one(Input)
            field.value = chosen
            field.cursor_position = len(chosen)

    def action_cancel(self) -> None:
        """Close without changing the model."""
        self.dismiss(None)
