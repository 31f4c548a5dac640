"""The database is found the way git finds its folder: nearest `.harnez/`, else the git root, else here."""

from __future__ import annotations

from pathlib import Path

from harnez.paths import database_index_path, database_path, project_root, state_dir


def _folders(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True, exist_ok=True)


def test_a_subfolder_of_a_git_work_tree_uses_the_root_database(tmp_path: Path) -> None:
    _folders(tmp_path, "repo/.git", "repo/src/deep")
    assert project_root(tmp_path / "repo" / "src" / "deep") == tmp_path / "repo"
    assert database_path(tmp_path / "repo" / "src", {}) == tmp_path / "repo" / ".harnez" / "harnez.sqlite"


def test_the_nearest_harnez_folder_wins_over_the_git_root(tmp_path: Path) -> None:
    _folders(tmp_path, "repo/.git", "repo/tools/.harnez", "repo/tools/sub")
    assert project_root(tmp_path / "repo" / "tools" / "sub") == tmp_path / "repo" / "tools"
    assert project_root(tmp_path / "repo" / "docs") == tmp_path / "repo"


def test_a_harnez_folder_above_the_git_root_still_names_the_project(tmp_path: Path) -> None:
    # `.harnez/` anywhere up the chain marks a project, as a home folder holding `.harnez/` does.
    _folders(tmp_path, "home/.harnez", "home/code/repo/.git", "home/code/repo/src")
    assert project_root(tmp_path / "home" / "code" / "repo" / "src") == tmp_path / "home"


def test_a_linked_work_tree_or_submodule_has_a_git_file(tmp_path: Path) -> None:
    _folders(tmp_path, "linked/src")
    (tmp_path / "linked" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/linked\n")
    assert project_root(tmp_path / "linked" / "src") == tmp_path / "linked"


def test_without_either_the_folder_itself_is_the_project(tmp_path: Path) -> None:
    _folders(tmp_path, "loose/inner")
    (tmp_path / "loose" / ".harnez").write_text("a file, not Harnez's folder")
    assert project_root(tmp_path / "loose" / "inner") == tmp_path / "loose" / "inner"
    assert (
        database_path(tmp_path / "loose" / "inner", {})
        == tmp_path / "loose" / "inner" / ".harnez" / "harnez.sqlite"
    )


def test_harnez_database_path_still_wins(tmp_path: Path) -> None:
    _folders(tmp_path, "repo/.git", "repo/src")
    chosen = tmp_path / "elsewhere" / "x.sqlite"
    assert database_path(tmp_path / "repo" / "src", {"HARNEZ_DATABASE_PATH": str(chosen)}) == chosen


def test_the_state_folder_follows_harnez_state_home_then_harnez_home_then_xdg(tmp_path: Path) -> None:
    assert (
        state_dir({"HARNEZ_STATE_HOME": str(tmp_path / "s"), "HARNEZ_HOME": str(tmp_path / "h")})
        == tmp_path / "s"
    )
    assert (
        state_dir({"HARNEZ_HOME": str(tmp_path / "h"), "XDG_STATE_HOME": str(tmp_path / "x")})
        == tmp_path / "h" / "state"
    )
    assert state_dir({"XDG_STATE_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "harnez"
    assert state_dir({}) == Path.home() / ".local" / "state" / "harnez"
    assert database_index_path({"HARNEZ_STATE_HOME": str(tmp_path)}) == tmp_path / "databases.json"
