"""Session folders of `harnez serve`: inputs and skills are written inside the workspace only, and
artifacts are the workspace's own regular files — links the agent made never lead out of it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harnez.server.folders import SessionFolders, safe_name, write_harness_skills
from harnez.server.harnesses import Harness, Refusal, Skill, SkillFile


@pytest.fixture
def folders(tmp_path: Path) -> SessionFolders:
    return SessionFolders(tmp_path / "workspaces")


def test_inputs_are_placed_under_a_safe_name_inside_the_workspace(folders: SessionFolders) -> None:
    workspace = folders.new()
    relative = folders.place_input(workspace, "file_1", "../../etc/my report.md", b"hello")
    assert relative == ".uhp-inputs/file_1/my_report.md" and (workspace / relative).read_bytes() == b"hello"
    assert safe_name("..") == "file" and safe_name("a b\\c.txt") == "c.txt"


def test_an_inputs_folder_linked_out_of_the_workspace_is_refused(
    folders: SessionFolders, tmp_path: Path
) -> None:
    workspace, outside = folders.new(), tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / ".uhp-inputs")
    with pytest.raises(Refusal):
        folders.place_input(workspace, "file_1", "a.txt", b"x")
    assert list(outside.iterdir()) == []


def test_skills_are_written_whole_per_harness_and_never_through_a_link(
    folders: SessionFolders, tmp_path: Path
) -> None:
    workspace, outside = folders.new(), tmp_path / "outside"
    outside.mkdir()
    skill = Skill(
        "vault", True, (SkillFile("SKILL.md", b"---\nname: vault\n---\n"), SkillFile("refs/a.md", b"a"))
    )
    harness = Harness("chrn_1", "h", "harnez", 0, skills=(skill,))
    folder = write_harness_skills(workspace, harness)
    assert folder == workspace / ".uhp-skills/chrn_1" and (folder / "vault/refs/a.md").read_bytes() == b"a"
    assert not (workspace / ".harnez").exists(), "the workspace's own skills are left alone"
    write_harness_skills(
        workspace, Harness("chrn_1", "h", "harnez", 0, skills=(Skill("vault", False, skill.files),))
    )
    assert not (folder / "vault").exists()
    shutil.rmtree(workspace / ".uhp-skills")
    os.symlink(outside, workspace / ".uhp-skills")
    with pytest.raises(Refusal):
        write_harness_skills(workspace, harness)
    assert list(outside.iterdir()) == []


def test_artifacts_are_the_workspaces_own_files_only(folders: SessionFolders, tmp_path: Path) -> None:
    workspace, secret = folders.new(), tmp_path / "secret.txt"
    secret.write_text("root:x:0:0")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "report.md").write_text("report")
    (workspace / ".harnez").mkdir()
    (workspace / ".harnez" / "settings.json").write_text("{}")
    os.symlink(secret, workspace / "leak.txt")
    os.symlink(tmp_path, workspace / "up")
    assert [f.path for f in folders.scan(workspace)] == ["docs/report.md"]
    assert folders.open(workspace, "docs/report.md") is not None
    for probe in ("leak.txt", "up/secret.txt", "../secret.txt", "/etc/passwd", "docs"):
        assert folders.open(workspace, probe) is None, probe
    assert [f.path for f in folders.existing(workspace, ["docs/report.md", "leak.txt", str(secret)])] == [
        "docs/report.md"
    ]


def test_only_session_folders_are_removed(folders: SessionFolders, tmp_path: Path) -> None:
    workspace, fixed = folders.new(), tmp_path / "repo"
    fixed.mkdir()
    folders.remove(fixed)
    folders.remove(workspace)
    assert fixed.exists() and not workspace.exists()


VAULT = Harness("chrn_1", "h", "harnez", 0, skills=(Skill("vault", True, (SkillFile("SKILL.md", b"v"),)),))
"""A harness with one skill, `vault`."""


def _old_copy(workspace: Path, name: str) -> None:
    (workspace / ".harnez/skills" / name).mkdir(parents=True)
    (workspace / ".harnez/skills" / name / "SKILL.md").write_bytes(
        b"---\nname: " + name.encode() + b"\n---\n"
    )


def test_an_older_versions_skill_copies_go_from_a_session_folder_only_and_only_once(
    folders: SessionFolders, tmp_path: Path
) -> None:
    session, project = folders.new(), tmp_path / "project"
    for workspace in (session, project):
        _old_copy(workspace, "vault")
        _old_copy(workspace, "notes")  # not the harness's: someone's own
    write_harness_skills(project, VAULT)  # a person's project: its skills are its own
    write_harness_skills(session, VAULT, session_folder=True)
    assert sorted(p.name for p in (project / ".harnez/skills").iterdir()) == ["notes", "vault"]
    assert sorted(p.name for p in (session / ".harnez/skills").iterdir()) == ["notes"]
    _old_copy(session, "vault")  # written since: someone's own now (the folder has .uhp-skills)
    write_harness_skills(session, VAULT, session_folder=True)
    assert (session / ".harnez/skills/vault/SKILL.md").is_file()


def test_an_old_skills_folder_that_links_out_of_the_workspace_is_left_alone(
    folders: SessionFolders, tmp_path: Path
) -> None:
    session, outside = folders.new(), tmp_path / "outside"
    _old_copy(outside, "vault")
    (session / ".harnez").mkdir()
    os.symlink(outside / ".harnez/skills", session / ".harnez/skills")
    write_harness_skills(session, VAULT, session_folder=True)
    assert (outside / ".harnez/skills/vault/SKILL.md").is_file()


async def test_only_folders_made_for_http_sessions_are_session_folders(tmp_path: Path) -> None:
    from harnez.server import Server
    from harnez.server.uhp import HarnessHost

    project = tmp_path / "project"
    server = await Server.open(tmp_path / "db" / "harnez.sqlite")
    try:
        HarnessHost(server, tmp_path / "served", fixed_workspace=project)
        assert server.is_session_folder(tmp_path / "db" / "uhp-workspaces" / "0a1b")
        assert server.is_session_folder(tmp_path / "served" / "0a1b")
        for other in (project, tmp_path / "served", tmp_path / "served" / "0a1b" / "src", tmp_path / "db"):
            assert not server.is_session_folder(other), other
    finally:
        await server.close()
