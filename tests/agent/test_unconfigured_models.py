"""A model or provider a session's workspace does not configure: the message names the files read."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.errors import ModelConfigError
from harnez.paths import global_settings_path, project_settings_path
from harnez.settings import Settings
from tests.agent.helpers import run_task


async def test_a_task_without_a_model_names_the_settings_its_session_reads(
    open_server, workspace: Path
) -> None:
    server = await open_server(Settings())
    _, outcome = await run_task(server, workspace, "hello")
    assert outcome.stop == "failed" and "No model is configured" in outcome.error
    assert str(project_settings_path(workspace)) in outcome.error
    assert str(global_settings_path()) in outcome.error


async def test_an_unknown_provider_names_the_settings_its_session_reads(open_server, workspace: Path) -> None:
    server = await open_server(Settings())
    draft = server.create_session(workspace)
    with pytest.raises(ModelConfigError) as raised:
        await server.select_model(draft.id, "elsewhere/some-model")
    assert "Unknown provider 'elsewhere'" in raised.value.message
    assert str(project_settings_path(workspace)) in raised.value.message
