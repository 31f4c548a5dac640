"""Agent files: what a good one gives, which folder wins, and the problem each malformed one is skipped with."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.agents.definitions import AgentFileError, find_agents, read_agent
from tests.agent.agents_support import project_agents, write_agent


def test_a_good_file_gives_its_name_description_tools_model_and_instructions(workspace: Path) -> None:
    front = (
        "name: reviewer\ndescription: 'Reviews: diffs and files.'\n"
        "tools:\n  - Read\n  - bash\n  - read\nmodel: openai/gpt-5:high"
    )
    path = write_agent(project_agents(workspace), "reviewer", front, "Line one.\n\nLine two.")
    agent = read_agent(path, providers={"openai"})
    assert (agent.name, agent.description) == ("reviewer", "Reviews: diffs and files.")
    assert agent.tools == ("read", "shell") and agent.model == "openai/gpt-5:high"
    assert agent.instructions == "Line one.\n\nLine two." and agent.path == path


def test_tools_may_be_a_bracket_list_and_leaving_them_out_means_the_parents(workspace: Path) -> None:
    folder = project_agents(workspace)
    listed = read_agent(write_agent(folder, "a", 'name: a\ndescription: d\ntools: [grep, "ls"]'))
    assert listed.tools == ("grep", "list")
    assert read_agent(write_agent(folder, "b", "name: b\ndescription: d")).tools is None


def test_a_project_agent_shadows_its_global_namesake_and_both_folders_are_read(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    write_agent(home / "agents", "reviewer", "name: reviewer\ndescription: global")
    write_agent(home / "agents", "planner", "name: planner\ndescription: plans")
    write_agent(project_agents(workspace), "reviewer", "name: reviewer\ndescription: project")
    catalogue = find_agents(workspace, env={"HARNEZ_HOME": str(home)})
    assert catalogue.names == ["reviewer", "planner"] and catalogue.problems == ()
    assert catalogue.get("reviewer").description == "project"  # type: ignore[union-attr]
    assert catalogue.get("nobody") is None


MALFORMED = {
    "no-front": ("", "make its first line `---`"),
    "unknown-key": ("name: x\ndescription: d\ncolour: red", "unknown key `colour`"),
    "no-description": ("name: x", "needs `description:`"),
    "bad-name": ("name: two words\ndescription: d", "not a valid agent name"),
    "no-tool": ("name: x\ndescription: d\ntools: read, fly", "`fly`, which is not a tool"),
    "delegating": ("name: x\ndescription: d\ntools: read, delegate", "cannot delegate further"),
    "empty-tools": ("name: x\ndescription: d\ntools: []", "names no tool"),
    "twice": ("name: x\nname: y\ndescription: d", "`name` is given twice"),
    "not-a-field": ("name: x\njust words", "expected `key: value`"),
    "other-provider": (
        "name: x\ndescription: d\nmodel: nowhere/m",
        "provider `nowhere`, which is not configured",
    ),
    "model-list": ("name: x\ndescription: d\nmodel: [a/b]", "one model reference"),
}


@pytest.mark.parametrize("stem", sorted(MALFORMED))
def test_a_malformed_file_is_skipped_with_a_problem_naming_it_and_what_to_fix(
    workspace: Path, stem: str
) -> None:
    front, fix = MALFORMED[stem]
    folder = project_agents(workspace)
    path = folder / f"{stem}.md"
    if stem == "no-front":
        folder.mkdir(parents=True)
        path.write_text("name: x\n")
    else:
        write_agent(folder, stem, front)
    write_agent(folder, "fine", "name: fine\ndescription: works")
    with pytest.raises(AgentFileError) as refused:
        read_agent(path, providers={"openai"})
    assert fix in str(refused.value)
    catalogue = find_agents(workspace, providers={"openai"})
    (problem,) = catalogue.problems
    assert problem.startswith(f"{path}: ") and fix in problem and "not offered" in problem
    assert catalogue.names == ["fine"]


def test_an_unended_front_matter_and_a_name_taken_twice_in_one_folder_are_problems(workspace: Path) -> None:
    folder = project_agents(workspace)
    folder.mkdir(parents=True)
    (folder / "open.md").write_text("---\nname: open\ndescription: d\n")
    write_agent(folder, "a", "name: same\ndescription: first")
    write_agent(folder, "b", "name: same\ndescription: second")
    catalogue = find_agents(workspace)
    assert catalogue.names == ["same"] and catalogue.get("same").description == "first"  # type: ignore[union-attr]
    taken, unended = catalogue.problems
    assert taken.startswith(f"{folder / 'b.md'}: ") and "already defined by a.md" in taken
    assert unended.startswith(f"{folder / 'open.md'}: ") and "add a `---` line" in unended
