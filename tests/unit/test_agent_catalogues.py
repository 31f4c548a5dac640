"""Agent catalogues kept between tasks: the same files give the kept catalogue, any change is read again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harnez.agents.catalogues import AgentCatalogues, agent_files_state
from tests.agent.agents_support import project_agents, write_agent


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A global config folder of the test's own (its agents folder starts missing)."""
    return {"HARNEZ_HOME": str(tmp_path / "home")}


async def test_unchanged_files_give_the_kept_catalogue(workspace: Path, env: dict[str, str]) -> None:
    write_agent(project_agents(workspace), "reviewer", "name: reviewer\ndescription: reviews")
    catalogues = AgentCatalogues(env)
    first = await catalogues.find(workspace, ["openai"])
    assert first.names == ["reviewer"]
    assert await catalogues.find(workspace, ["openai"]) is first
    assert await catalogues.find(workspace, ["anthropic"]) is not first  # an agent's model is checked per set


async def test_an_edited_file_is_read_again_even_with_its_size_and_time_unchanged(
    workspace: Path, env: dict[str, str]
) -> None:
    path = write_agent(project_agents(workspace), "reviewer", "name: reviewer\ndescription: aaaa")
    catalogues = AgentCatalogues(env)
    assert (await catalogues.find(workspace)).get("reviewer").description == "aaaa"  # type: ignore[union-attr]
    before = path.stat()
    replacement = path.with_name("new.tmp")
    replacement.write_text(path.read_text().replace("aaaa", "bbbb"))
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    replacement.replace(path)  # an editor's atomic save: a new file (inode) of the same size and time
    assert (await catalogues.find(workspace)).get("reviewer").description == "bbbb"  # type: ignore[union-attr]
    path.write_text(path.read_text().replace("bbbb", "a longer one"))
    assert (await catalogues.find(workspace)).get("reviewer").description == "a longer one"  # type: ignore[union-attr]


async def test_a_new_removed_or_global_agent_file_is_seen_at_the_next_find(
    workspace: Path, env: dict[str, str]
) -> None:
    catalogues = AgentCatalogues(env)
    assert (await catalogues.find(workspace)).names == []
    planner = write_agent(project_agents(workspace), "planner", "name: planner\ndescription: plans")
    assert (await catalogues.find(workspace)).names == ["planner"]
    write_agent(Path(env["HARNEZ_HOME"]) / "agents", "tester", "name: tester\ndescription: tests")
    assert (await catalogues.find(workspace)).names == ["planner", "tester"]
    planner.unlink()
    assert (await catalogues.find(workspace)).names == ["tester"]


async def test_a_file_that_cannot_be_looked_at_is_read_every_time_and_named_as_a_problem(
    workspace: Path, env: dict[str, str]
) -> None:
    folder = project_agents(workspace)
    write_agent(folder, "reviewer", "name: reviewer\ndescription: reviews")
    (folder / "notes.txt").write_text("not an agent")
    state = agent_files_state(workspace, env)
    assert state is not None and [name for name, *_ in state[0]] == ["reviewer.md"] and state[1] == ()
    (folder / "gone.md").symlink_to(folder / "missing.md")
    assert agent_files_state(workspace, env) is None
    catalogues = AgentCatalogues(env)
    first = await catalogues.find(workspace)
    assert first.names == ["reviewer"] and "gone.md" in first.problems[0]
    assert await catalogues.find(workspace) is not first
