"""The prompt's keys, slash commands and the permission mode, in a running app."""

from __future__ import annotations

from textual.widgets import Input

from harnez.tui.commands import help_markdown
from harnez.tui.screens.dialogs import HelpScreen
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets import prompt as prompt_module
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from tests.tui.helpers import wait_for


async def ready_prompt(pilot, app) -> PromptInput:
    """The session screen's prompt, once the app is ready."""
    await wait_for(pilot, lambda: app.ready)
    return app.screen.query_one(PromptInput)


async def test_ctrl_j_inserts_a_newline_and_enter_sends_both_lines(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("a", "ctrl+j", "b")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "a\nb"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock))
        assert prompt.text == ""
        events = await app.server.events_after(app.screen.session_id)
        assert events[0].kind == "user-message" and events[0].body.text == "a\nb"


async def test_up_and_down_walk_the_prompt_history(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        for ended, text in enumerate(("first", "second"), start=1):
            app.screen.query_one(PromptInput).load_text(text)
            await pilot.press("enter")
            await wait_for(pilot, lambda n=ended: len(app.screen.query(TaskEndBlock)) == n)
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"


async def test_ctrl_c_clears_the_prompt_then_quits(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("h", "i", "ctrl+c")
        assert app.screen.query_one(PromptInput).text == ""
        assert app.return_code is None
        await pilot.press("ctrl+c")
    assert app.return_code == 0


async def test_a_prompt_cleared_by_ctrl_c_comes_back_with_up(make_app) -> None:
    """Ctrl+C pressed by mistake (to copy, or to stop a task that already ended) does not lose a
    prompt written with care: it is the newest history entry."""
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        prompt = await ready_prompt(pilot, app)
        prompt.load_text("a long prompt\nwritten with care")
        await pilot.press("ctrl+c")
        assert prompt.text == ""
        assert any("Up brings it back" in str(n.message) for n in app._notifications)
        await pilot.press("up")
        assert prompt.text == "a long prompt\nwritten with care"
        assert app.return_code is None


async def test_a_ctrl_c_long_after_the_first_arms_quitting_again_instead_of_quitting(
    make_app, monkeypatch
) -> None:
    monkeypatch.setattr(prompt_module, "QUIT_WINDOW", 0.2, raising=False)
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("h", "i", "ctrl+c")  # clears, and says what the next one does
        assert any("again to quit" in str(n.message) for n in app._notifications)
        await pilot.pause(0.3)
        await pilot.press("ctrl+c")
        assert app.return_code is None
        await pilot.press("ctrl+c")
    assert app.return_code == 0


async def test_shift_tab_cycles_the_permission_mode_shown_in_the_status_line(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        status = app.screen.query_one(StatusLine)
        assert (app.permission_mode, status.mode) == ("ask", "ask")
        await pilot.press("shift+tab")
        assert (app.permission_mode, status.mode) == ("accept-edits", "accept-edits")
        await pilot.press("shift+tab", "shift+tab")
        assert app.permission_mode == "ask"


async def test_help_lists_the_commands_and_unknown_commands_are_refused(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.screen.query_one(PromptInput).load_text("/nonsense")
        await pilot.press("enter")
        assert any("Unknown command /nonsense" in str(n.message) for n in app._notifications)
        app.screen.query_one(PromptInput).load_text("/help")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        events = await app.server.events_after(app.screen.session_id)
        assert events == []


async def test_a_prompt_that_starts_with_a_path_is_sent_and_an_unknown_command_stays_to_mend(
    make_app,
) -> None:
    """A prompt starting with an absolute path was refused as an unknown command and cleared."""
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        prompt = await ready_prompt(pilot, app)
        prompt.load_text("/srv/app/main.py fails on start")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "the task of the prompt")
        events = await app.server.events_after(app.screen.session_id)
        assert events[0].kind == "user-message"
        assert events[0].body.text == "/srv/app/main.py fails on start"
        assert not any("Unknown command" in str(n.message) for n in app._notifications)

        prompt.load_text("/sesion-name the plan")
        await pilot.press("enter")
        assert any("Unknown command /sesion-name" in str(n.message) for n in app._notifications)
        assert prompt.text == "/sesion-name the plan"


async def test_a_command_that_takes_no_argument_refuses_one_instead_of_dropping_it(make_app) -> None:
    """`/compact keep the API notes` compacted and dropped the words without a word."""
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        prompt = await ready_prompt(pilot, app)
        prompt.load_text("/new keep the API notes")
        first = app.screen
        await pilot.press("enter")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any("/new takes no argument: send /new alone." in text for text in said), said
        assert app.screen is first and prompt.text == "/new keep the API notes"


async def _new_session_after_one_answer(app, pilot, command: str) -> str:
    """Answer a prompt in the first session, then run `command` (a new session's); the first's id."""
    await wait_for(pilot, lambda: app.ready)
    app.screen.query_one(PromptInput).load_text("hello")
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen.query(TaskEndBlock))
    first = app.screen.session_id
    app.screen.query_one(PromptInput).load_text(command)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id != first)
    return first


async def test_new_starts_a_fresh_session_and_resume_opens_the_picker(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        first = await _new_session_after_one_answer(app, pilot, "/new")
        app.screen.query_one(PromptInput).load_text("/resume")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.records, "picker rows"
        )
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == first
        )
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "replayed transcript")


async def test_the_peers_names_of_commands_run_them(make_app) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await _new_session_after_one_answer(app, pilot, "/clear")  # Claude Code's name for /new
        app.screen.query_one(PromptInput).load_text("/sessions")  # OpenCode's name for /resume
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        app.screen.query_one(PromptInput).load_text("/exit")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.return_code is not None, "the app quits")
    assert "Also `/clear`." in help_markdown() and "Also `/exit`." in help_markdown()


async def test_ctrl_c_in_the_picker_clears_its_search_then_quits_like_the_prompt(make_app) -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.open_picker()
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.is_active)
        await pilot.press(*"zebra")
        search = app.screen.query_one("#picker-search", Input)
        assert search.value == "zebra"
        await pilot.press("ctrl+c")  # clears the search, and says what the next one does
        assert search.value == "" and isinstance(app.screen, PickerScreen) and app.return_code is None
        assert any("again to quit" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")
    assert app.return_code == 0
