"""The look: the theme comes from settings, a palette choice is saved, an unknown name is reported."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.server.server import Server
from harnez.settings import load_settings
from harnez.tui.app import HarnezApp
from harnez.tui.widgets.status import StatusLine
from tests.tui.helpers import wait_for


def app_with(db_path: Path, workspace: Path, settings_json: dict, home: Path) -> HarnezApp:
    (home / "settings.json").write_text(json.dumps(settings_json))
    settings = load_settings(workspace)

    async def open_server() -> Server:
        return await Server.open(db_path, settings)

    return HarnezApp(open_server, workspace, settings)


async def test_the_theme_named_in_settings_is_used(db_path, workspace, isolated_home) -> None:
    app = app_with(db_path, workspace, {"theme": "textual-light"}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "textual-light"
        assert not app.current_theme.dark


async def test_an_unknown_theme_keeps_the_default_and_says_which_exist(
    db_path, workspace, isolated_home
) -> None:
    app = app_with(db_path, workspace, {"theme": "no-such-theme"}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "textual-dark"
        messages = [n.text for n in app.notices]  # whole, though the toast shows it short
        assert any("Unknown theme 'no-such-theme'" in m and "textual-light" in m for m in messages), messages


async def test_a_theme_chosen_while_running_is_saved_for_the_next_start(
    db_path, workspace, isolated_home
) -> None:
    app = app_with(db_path, workspace, {"theme": "textual-dark", "session": {}}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.theme = "nord"
        await pilot.pause()
    saved = json.loads((isolated_home / "settings.json").read_text())
    assert saved["theme"] == "nord"
    assert load_settings(workspace).theme == "nord"


async def test_a_narrow_status_line_keeps_model_state_and_mode(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(56, 20)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        status = app.screen.query_one(StatusLine)
        status.title = "A rather long session title that would not fit"
        status.context, status.cost = "12.3k/200k (6%)", "$0.25"
        await pilot.pause()
        shown = str(status.render())
        assert "no model" in shown and "idle" in shown and "mode: ask" in shown, shown
        assert "A rather long" not in shown and "(shift+tab)" not in shown
        assert len(shown) <= 54
    wide = make_app()
    async with wide.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: wide.ready)
        status = wide.screen.query_one(StatusLine)
        status.title = "A rather long session title"
        await pilot.pause()
        assert "A rather long session title" in str(status.render()) and "(shift+tab)" in str(status.render())


async def test_the_theme_and_mode_follow_a_settings_file_edited_while_running(
    db_path, workspace, isolated_home
) -> None:
    settings_file = isolated_home / "settings.json"
    model = {
        "providers": {"local": {"wire": "openai-chat", "base_url": "http://127.0.0.1:9/v1"}},
        "model": "local/x",
    }
    app = app_with(db_path, workspace, {**model, "theme": "textual-dark"}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("shift+tab")  # the person picks a mode with the key
        picked = app.permission_mode
        settings_file.write_text(json.dumps({**model, "theme": "nord"}))
        await pilot.press(*"hi", "enter")
        await wait_for(pilot, lambda: app.theme == "nord")
        assert app.permission_mode == picked  # the edit did not touch the mode: the key's choice stays
        settings_file.write_text(json.dumps({**model, "theme": "nord", "permissions": {"mode": "read-only"}}))
        await pilot.press(*"again", "enter")
        await wait_for(pilot, lambda: app.permission_mode == "read-only")


async def test_a_settings_edit_applies_while_idle_and_a_broken_one_is_said_once(
    db_path, workspace, isolated_home, monkeypatch
) -> None:
    monkeypatch.setattr("harnez.tui.app.SETTINGS_CHECK_EVERY", 0.05)
    settings_file = isolated_home / "settings.json"
    local = {"wire": "openai-chat", "base_url": "http://127.0.0.1:9/v1"}
    model = {"providers": {"local": local}, "model": "local/first"}
    app = app_with(db_path, workspace, {**model, "theme": "textual-dark"}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        status = app.screen.query_one(StatusLine)
        assert "local/first" in str(status.render())
        settings_file.write_text(json.dumps({**model, "model": "local/second", "theme": "nord"}))
        await wait_for(pilot, lambda: app.theme == "nord", "the theme, with no prompt sent")
        await wait_for(pilot, lambda: "local/second" in str(status.render()), "the new session's model")
        settings_file.write_text('{"theme": "nord",}')
        await wait_for(pilot, lambda: any("not valid JSON" in n.text for n in app.notices), "the problem")
        await pilot.pause(0.3)  # several more looks at the same broken file
        assert sum("not valid JSON" in n.text for n in app.notices) == 1
        assert app.theme == "nord" and "local/second" in str(status.render())  # the last good ones stay


async def test_a_settings_file_caught_half_written_is_not_reported(
    db_path, workspace, isolated_home, monkeypatch
) -> None:
    monkeypatch.setattr("harnez.tui.app.SETTINGS_CHECK_EVERY", 3600)  # looks made by the test only
    settings_file = isolated_home / "settings.json"
    app = app_with(db_path, workspace, {"theme": "textual-dark"}, isolated_home)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)

        def reported() -> int:
            return sum("not valid JSON" in n.text for n in app.notices)

        settings_file.write_text('{"theme": "no')  # an editor between emptying and writing
        app._check_settings()
        settings_file.write_text('{"theme": "nord"}')
        app._check_settings()
        await pilot.pause()
        assert reported() == 0 and app.theme == "nord"
        settings_file.write_text('{"theme": "nord",}')  # broken for good
        app._check_settings()
        app._check_settings()
        app._check_settings()
        await pilot.pause()
        assert reported() == 1
