"""The system prompt: instructions, environment with git, tools, project files, skills."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harnez import paths
from harnez.agent.prompt import (
    HARNESS_INSTRUCTION,
    Environments,
    branch_of,
    build_system_prompt,
    environment_section,
    find_skills,
)
from harnez.testing.scripted_model import ScriptedModel
from harnez.tools import ToolRegistry
from tests.agent.helpers import answer, make_settings, run_task, tool_call

TODAY = datetime.date(2025, 3, 4)


def _skill(root: Path, folder: str, text: str) -> None:
    (root / folder).mkdir(parents=True)
    (root / folder / "SKILL.md").write_text(text)


async def test_the_prompt_names_the_environment_tools_and_project_instructions(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(workspace)], check=True)
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    (workspace / "CLAUDE.md").write_text("Ignored when AGENTS.md exists.\n")
    (workspace / "new.py").write_text("x = 1\n")
    prompt = await build_system_prompt(workspace, ToolRegistry().publish(), today=TODAY)
    assert prompt.startswith(HARNESS_INSTRUCTION)
    assert f"Workspace: {workspace}" in prompt and "Date: 2025-03-04" in prompt
    assert "Git branch: trunk" in prompt and "?? AGENTS.md" in prompt
    assert "- shell: Run a bash command line" in prompt
    assert "## AGENTS.md\nUse tabs." in prompt and "Ignored when" not in prompt


async def test_claude_md_is_a_fallback_and_a_plain_folder_is_no_git_repository(tmp_path: Path) -> None:
    workspace = tmp_path / "plain"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("Fallback rules.\n")
    prompt = await build_system_prompt(workspace, [], today=TODAY)
    assert "## CLAUDE.md\nFallback rules." in prompt and "Git: not a git repository" in prompt


async def test_skills_are_offered_by_name_and_description(workspace: Path) -> None:
    _skill(
        paths.project_skills_dir(workspace),
        "deploy",
        "---\nname: deploy\ndescription: Ship it safely\n---\nsteps",
    )
    _skill(paths.global_skills_dir(), "deploy", "---\nname: deploy\ndescription: global one\n---\n")
    _skill(paths.global_skills_dir(), "review", "# no frontmatter\n")
    skills = find_skills(workspace)
    assert [(s.name, s.description) for s in skills] == [
        ("deploy", "Ship it safely"),
        ("review", "(no description given)"),
    ]
    prompt = await build_system_prompt(workspace, [], today=TODAY)
    assert (
        f"- deploy: Ship it safely ({paths.project_skills_dir(workspace) / 'deploy' / 'SKILL.md'})" in prompt
    )
    assert "global one" not in prompt


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True)


async def test_a_clean_branch_and_a_detached_head_are_named(workspace: Path) -> None:
    _git(workspace, "init", "-q", "-b", "work")
    (workspace / "a.txt").write_text("a\n")
    _git(workspace, "add", "a.txt")
    _git(workspace, "commit", "-q", "-m", "first")
    prompt = await build_system_prompt(workspace, [], today=TODAY)
    assert "Git branch: work\nGit status: clean (as of this session" in prompt
    _git(workspace, "checkout", "-q", "--detach")
    (workspace / "a.txt").write_text("b\n")
    prompt = await build_system_prompt(workspace, [], today=TODAY)
    assert (
        "Git branch: (detached HEAD)\nGit status (short) (as of this session's start or resume; run `git status` for now):\n M a.txt"
        in prompt
    )


@pytest.mark.parametrize(
    ("header", "branch"),
    [
        ("## main", "main"),
        ("## main...origin/main [ahead 1, behind 2]", "main"),
        ("## feature/x...origin/feature/x", "feature/x"),
        ("## No commits yet on trunk", "trunk"),
        ("## Initial commit on trunk", "trunk"),
        ("## HEAD (no branch)", ""),
    ],
)
def test_the_branch_is_read_from_the_status_header(header: str, branch: str) -> None:
    assert branch_of(header) == branch


async def test_an_environment_probed_when_the_task_began_is_the_one_the_prompt_shows(workspace: Path) -> None:
    _git(workspace, "init", "-q", "-b", "work")
    early = asyncio.ensure_future(environment_section(workspace, TODAY))
    await asyncio.wait([early])
    (workspace / "late.txt").write_text("written after the probe\n")
    prompt = await build_system_prompt(workspace, [], today=TODAY, environment=early)
    assert "Git branch: work\nGit status: clean" in prompt
    assert "?? late.txt" in await build_system_prompt(workspace, [], today=TODAY)


async def test_a_sessions_environment_is_probed_once_a_day_and_a_failed_probe_again(tmp_path: Path) -> None:
    probes: list[tuple[Path, datetime.date]] = []
    day = [TODAY]

    async def probe(workspace: Path, today: datetime.date) -> str:
        probes.append((workspace, today))
        if workspace.name == "broken":
            raise OSError("no such folder")
        return f"{workspace.name} on {today}"

    environments = Environments(probe, today=lambda: day[0])
    first = await environments.section("s1", tmp_path / "one")
    assert first == await environments.section("s1", tmp_path / "one") == "one on 2025-03-04"
    assert await environments.section("s2", tmp_path / "two") == "two on 2025-03-04"
    assert len(probes) == 2
    day[0] = TODAY + datetime.timedelta(days=1)
    assert await environments.section("s1", tmp_path / "one") == "one on 2025-03-05"
    for _ in range(2):
        with pytest.raises(OSError):
            await environments.section("s3", tmp_path / "broken")
    assert [workspace.name for workspace, _ in probes] == ["one", "two", "one", "broken", "broken"]


async def test_a_cancelled_probe_is_not_kept_and_the_least_recent_session_goes_first(tmp_path: Path) -> None:
    probed: list[str] = []
    slow = asyncio.Event()

    async def probe(workspace: Path, today: datetime.date) -> str:
        probed.append(workspace.name)
        if workspace.name == "slow" and not slow.is_set():
            slow.set()
            await asyncio.sleep(30)
        return workspace.name

    environments = Environments(probe, today=lambda: TODAY)
    environments.KEPT = 2
    cancelled = environments.section("slow", tmp_path / "slow")
    await slow.wait()
    cancelled.cancel()
    await asyncio.wait([cancelled])
    assert await environments.section("slow", tmp_path / "slow") == "slow"
    for name in ("a", "b", "a", "c"):  # "a" is used again after "b": "b" is the least recent
        await environments.section(name, tmp_path / name)
    await environments.section("a", tmp_path / "a")
    await environments.section("b", tmp_path / "b")
    assert probed == ["slow", "slow", "a", "b", "c", "b"]


async def test_a_sessions_later_tasks_send_the_system_prompt_of_its_first(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    _git(workspace, "init", "-q", "-b", "work")
    scripted_model.add(answer("one"), answer("two"), answer("three"))
    server = await open_server(make_settings(scripted_model))
    session_id, _ = await run_task(server, workspace, "first")
    (workspace / "edited.txt").write_text("changed between the prompts\n")
    await run_task(server, workspace, "second", session_id)
    await run_task(server, workspace, "in a new session")
    first, second, other = (request.body["messages"][0]["content"] for request in scripted_model.requests)
    assert first == second and "Git status: clean" in first
    assert "?? edited.txt" in other


def _without_breakpoints(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_breakpoints(v) for v in value]
    return value


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic-messages"])
async def test_each_request_of_a_session_extends_the_one_before_it(
    scripted_model: ScriptedModel, open_server, workspace: Path, wire: str
) -> None:
    """A provider's prompt cache serves a prefix byte for byte: the system text, the tools and every
    message a request sent come again, unchanged and first, in the next one (of the loop, and of the
    session's next task)."""
    _git(workspace, "init", "-q", "-b", "work")
    (workspace / "a.txt").write_text("alpha\n")
    scripted_model.add(tool_call("read", "c1", path="a.txt"), answer("read it"), answer("second"))
    server = await open_server(make_settings(scripted_model, wire))
    session_id, _ = await run_task(server, workspace, "read a.txt")
    (workspace / "b.txt").write_text("the status changes between the prompts\n")
    await run_task(server, workspace, "and now?", session_id)
    bodies = [_without_breakpoints(request.body) for request in scripted_model.requests]
    listed = {"openai-chat": "messages", "openai-responses": "input", "anthropic-messages": "messages"}[wire]
    for before, after in itertools.pairwise(bodies):
        assert {k: v for k, v in before.items() if k != listed} == {
            k: v for k, v in after.items() if k != listed
        }
        assert after[listed][: len(before[listed])] == before[listed]
        assert len(after[listed]) > len(before[listed])


async def test_a_provider_can_turn_the_cache_breakpoints_off(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    settings = make_settings(scripted_model, "anthropic-messages")
    providers = {
        **settings.providers,
        "anth": settings.providers["anth"].model_copy(update={"prompt_cache": False}),
    }
    scripted_model.add(answer("cached"), answer("not cached"))
    for chosen in (settings, settings.model_copy(update={"providers": providers})):
        server = await open_server(chosen)
        await run_task(server, workspace, "hello")
    marked, unmarked = (json.dumps(request.body) for request in scripted_model.requests)
    assert '"cache_control"' in marked and '"cache_control"' not in unmarked
