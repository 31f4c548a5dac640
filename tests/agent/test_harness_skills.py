"""A UHP harness's skills are offered to the tasks run with that harness only: a task without one, in
the same server and the same folder, sees the workspace's and the global skills, whatever ran before."""

from __future__ import annotations

from pathlib import Path

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
