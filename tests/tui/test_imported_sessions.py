"""An imported session in the app: found by its words in the picker, tagged with its harness, opened whole."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from harnez.server.server import Server
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, ReasoningBlock, ToolBlock, UserBlock
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import wait_for

FIXTURE_HOME = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "fixtures"
    / "importers"
    / "claude-code"
    / "agtrace-2.0.28"
    / "home"
)


async def test_the_picker_finds_an_imported_session_by_a_word_said_in_it_and_opens_its_transcript(
    make_app, db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    if not FIXTURE_HOME.is_dir():
        pytest.skip(f"the importer fixtures are not at {FIXTURE_HOME}")
    home = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, home)
    server = await Server.open(db_path)
    try:
        report = await server.import_sessions(home, workspace=workspace)
    finally:
        await server.close()
    main = report.session_ids[0]

    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, PickerScreen), "picker")
        picker = app.screen
        await pilot.press("ctrl+t")  # the imported session's folder is not this workspace
        picker.query_one(Input).value = "hoge"
        await wait_for(pilot, lambda: main in picker.records, "search result")
        assert "imported from Claude Code" in str(
            picker.query_one("#picker-sessions").get_option(main).prompt
        )
        picker.query_one("#picker-sessions").highlighted = picker.query_one(
            "#picker-sessions"
        ).get_option_index(main)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.session_id == main)
        transcript = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: any(isinstance(b, ToolBlock) for b in transcript.blocks), "replayed")
        kinds = {type(block) for block in transcript.blocks}
        assert {UserBlock, AssistantBlock, ReasoningBlock, ToolBlock} <= kinds
