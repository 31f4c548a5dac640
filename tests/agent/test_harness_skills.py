"""A UHP harness's skills are offered to the tasks run with that harness only: a task without one, in
the same server and the same folder, sees the workspace's and the global skills, whatever ran before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harnez.server import Server
from harnez.server.uhp import HarnessHost, TaskRequest
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import system_text
from tests.agent.helpers import answer, events, make_settings, run_task


def _skill(name: str) -> dict:
    manifest = f"---\nname: {name}\ndescription: does {name}\n---\nSteps.\n"
    return {"name": name, "files": [{"path": "SKILL.md", "content": manifest}]}


def _own_skill(root: Path, name: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: does {name}\n---\nSteps.\n")


async def _harness_task(server: Server, host: HarnessHost, harness_id: str) -> str:
    """Run one task of the harness over the server layer, as `harnez serve` does; its session id."""
    row, _ = await host.start(TaskRequest(text="hi", input_items=[], harness_id=harness_id))
    await server.wait(row.session_id)
    return row.session_id


async def _skills_seen(server: Server, session_id: str) -> list[str]:
    return sorted((await events(server, session_id, "started"))[-1].body.skills)


async def test_a_task_without_a_harness_sees_only_the_project_and_global_skills(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, isolated_home: Path
) -> None:
    _own_skill(isolated_home / "skills", "triage")
    server = await open_server(make_settings(scripted_model))
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create({"base": "harnez", "skills": [_skill("vault-manual")]})
    scripted_model.add(answer("done"), answer("plain"))
    session = await _harness_task(server, host, harness.id)
    assert await _skills_seen(server, session) == ["triage", "vault-manual"]
    folder = Path((await server.get_session(session)).workspace)
    _own_skill(folder / ".harnez" / "skills", "release-notes")

    plain, _ = await run_task(server, folder, "hello")  # the TUI or `harnez run` in the same folder

    assert await _skills_seen(server, plain) == ["release-notes", "triage"]
    assert "vault-manual" not in system_text(scripted_model.requests[-1])


async def test_a_session_continued_elsewhere_gets_its_harness_skills_as_they_are_now(
    scripted_model: ScriptedModel, open_server, tmp_path: Path
) -> None:
    server = await open_server(make_settings(scripted_model))
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create({"base": "harnez", "skills": [_skill("vault-manual")]})
    scripted_model.add(answer("done"), answer("again"), answer("once more"))
    session = await _harness_task(server, host, harness.id)
    await host.harnesses.update(harness.id, {"skills": [_skill("door-manual")]})

    await run_task(server, Path("."), "again", session_id=session)  # the TUI continues it

    assert await _skills_seen(server, session) == ["door-manual"]
    await host.harnesses.delete(harness.id)
    await run_task(server, Path("."), "once more", session_id=session)
    assert await _skills_seen(server, session) == []


def _as_an_older_version_left_it(folder: Path, *names: str) -> None:
    """The session folder as versions before `.uhp-skills` left it: the harness's skills written into
    the workspace's own `.harnez/skills`, and no `.uhp-skills`."""
    shutil.rmtree(folder / ".uhp-skills")
    for name in names:
        _own_skill(folder / ".harnez" / "skills", name)


@pytest.mark.parametrize("front_end", ["http", "tui"])
async def test_an_older_versions_skill_copies_in_a_session_folder_are_dropped_at_its_next_task(
    scripted_model: ScriptedModel, open_server, tmp_path: Path, front_end: str
) -> None:
    server = await open_server(make_settings(scripted_model))
    host = await HarnessHost(server, tmp_path / "workspaces").open()
    harness = await host.harnesses.create(
        {"base": "harnez", "skills": [_skill("vault-manual"), {**_skill("door-manual"), "enabled": False}]}
    )
    scripted_model.add(answer("done"), answer("next"), answer("plain"), answer("later"))
    row, _ = await host.start(TaskRequest(text="hi", input_items=[], harness_id=harness.id))
    await server.wait(row.session_id)
    folder = Path((await server.get_session(row.session_id)).workspace)
    _as_an_older_version_left_it(folder, "vault-manual", "door-manual")
    _own_skill(folder / ".harnez" / "skills", "release-notes")  # not the harness's: someone's own

    if front_end == "http":
        nxt, _ = await host.start(TaskRequest(text="next", input_items=[], previous_response_id=row.id))
        await server.wait(nxt.session_id)
    else:
        await run_task(server, Path("."), "next", session_id=row.session_id)

    assert sorted(p.name for p in (folder / ".harnez" / "skills").iterdir()) == ["release-notes"]
    assert await _skills_seen(server, row.session_id) == ["release-notes", "vault-manual"]
    plain, _ = await run_task(server, folder, "plain")  # another task of the folder, without the harness
    assert await _skills_seen(server, plain) == ["release-notes"]
    # once: a skill of that name written there since is someone's own, and stays
    _own_skill(folder / ".harnez" / "skills", "vault-manual")
    await run_task(server, Path("."), "later", session_id=row.session_id)
    assert (folder / ".harnez" / "skills" / "vault-manual" / "SKILL.md").is_file()
