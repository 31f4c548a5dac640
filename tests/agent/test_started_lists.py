"""`started` always lists the tools published, their neutral operations, the tools withheld, the skills and
the agents offered (each possibly empty), and the endpoint the task talks to."""

from __future__ import annotations

from pathlib import Path

from harnez.redaction import public_url, url_credentials
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import project_agents, reviewer
from tests.agent.helpers import answer, events, make_settings, run_task


def _skill(root: Path, name: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: does {name}\n---\nSteps.\n")


async def test_started_lists_what_the_task_offers_with_skills_from_project_and_home(
    scripted_model: ScriptedModel, open_server, workspace: Path, isolated_home: Path
) -> None:
    _skill(workspace / ".harnez" / "skills", "release-notes")
    _skill(isolated_home / "skills", "triage")
    scripted_model.add(answer("hi"))
    server = await open_server(make_settings(scripted_model))
    session_id, _ = await run_task(server, workspace, "hello")
    (started,) = await events(server, session_id, "started")
    body = started.body
    assert body.tools == ["read", "write", "edit", "list", "glob", "grep", "shell"]
    assert body.operations == ["read", "edit", "search", "execute"]
    assert (body.withheld, body.agents) == ([], [])
    assert sorted(body.skills) == ["release-notes", "triage"]
    assert body.base_url == scripted_model.base_url("openai-chat")
    system = scripted_model.requests[-1].body["messages"][0]["content"]
    assert "release-notes: does release-notes" in system and "triage: does triage" in system


async def test_withheld_tools_leave_their_operation_out_and_empty_lists_are_still_printed(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("hi"))
    settings = make_settings(scripted_model, permissions={"tools": {"shell": "deny", "write": "deny"}})
    server = await open_server(settings)
    session_id, _ = await run_task(server, workspace, "hello")
    (started,) = await events(server, session_id, "started")
    assert started.body.withheld == ["shell", "write"]
    assert started.body.operations == ["read", "edit", "search"]
    printed = started.to_json()
    assert printed["skills"] == [] and printed["agents"] == [] and "operations" in printed


async def test_a_compaction_task_offers_nothing(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("first answer"), answer("A summary of it."))
    server = await open_server(make_settings(scripted_model))
    session_id, _ = await run_task(server, workspace, "hello")
    await server.compact(session_id)
    await server.wait(session_id)
    started = [e.body for e in await events(server, session_id, "started")]
    assert len(started) == 2
    last = started[-1]
    assert (last.tools, last.operations, last.withheld, last.skills, last.agents) == ([], [], [], [], [])


def test_the_recorded_endpoint_never_carries_credentials() -> None:
    assert public_url("https://me:hunter2@api.example.com:8443/v1?key=AIzaSy-secret#x") == (
        "https://api.example.com:8443/v1"
    )
    assert public_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"


def test_the_credentials_a_url_carries_are_found_as_written_and_decoded() -> None:
    url = "https://me:pw%2Dsecret1@h/v1?api-version=2024-10-21&key=AIza%3Dsecret&access_token=tok-123456"
    found = url_credentials(url)
    assert {"pw%2Dsecret1", "pw-secret1", "AIza%3Dsecret", "AIza=secret", "tok-123456"} <= set(found)
    assert "2024-10-21" not in found and "me" not in found, "a version or a user name is no credential"
    assert url_credentials("https://only-a-token-here@h/v1") == ["only-a-token-here"]
    assert url_credentials("http://127.0.0.1:8080/v1?api-version=1") == []


async def test_an_agent_file_written_or_removed_between_two_prompts_counts_from_the_next_one(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("one"), answer("two"), answer("three"))
    server = await open_server(make_settings(scripted_model))
    session_id = server.create_session(workspace).id
    offered = []
    for step in ("before", "written", "removed"):
        if step == "written":
            reviewer(workspace)
        elif step == "removed":
            (project_agents(workspace) / "reviewer.md").unlink()
        await run_task(server, workspace, f"prompt {step} the file", session_id)
        offered.append((await events(server, session_id, "started"))[-1].body.agents)
    assert offered == [[], ["reviewer"], []]
