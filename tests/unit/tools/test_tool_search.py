"""The glob and grep tools: sorted capped results over the workspace listing (ignored and heavy
folders skipped), file:line:text hits."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harnez.tools import search
from harnez.tools.search import GLOB_CAP, compile_glob


def make_tree(root: Path) -> None:
    for relative, text in {
        "src/app.py": "import os\nTODO = 1\n",
        "src/util/helpers.py": "def helper():\n    return 'todo later'\n",
        "src/readme.md": "TODO: docs\n",
        "setup.py": "print('hi')\n",
        ".git/config.py": "TODO = 'hidden'\n",
        ".harnez/notes.py": "TODO = 'hidden too'\n",
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "setup.py", True),
        ("*.py", "src/app.py", False),
        ("**/*.py", "src/util/helpers.py", True),
        ("**/*.py", "setup.py", True),
        ("src/**", "src/util/helpers.py", True),
        ("src/?pp.py", "src/app.py", True),
        ("[!s]*.py", "setup.py", False),
    ],
)
def test_glob_patterns(pattern: str, path: str, matches: bool) -> None:
    assert (compile_glob(pattern).match(path) is not None) is matches


async def test_glob_lists_sorted_matches_and_skips_git_and_harnez(workspace: Path, call) -> None:
    make_tree(workspace)
    result = await call("glob", pattern="**/*.py")
    assert result.content.splitlines() == ["setup.py", "src/app.py", "src/util/helpers.py"]
    assert result.details["matches"] == 3


async def test_glob_from_a_sub_directory_shows_workspace_paths(workspace: Path, call) -> None:
    make_tree(workspace)
    result = await call("glob", pattern="*.py", path="src")
    assert result.content == "src/app.py"


async def test_glob_is_capped_with_a_note(workspace: Path, call) -> None:
    (workspace / "many").mkdir()
    for n in range(GLOB_CAP + 5):
        (workspace / "many" / f"f{n:05}.txt").touch()
    result = await call("glob", pattern="many/*.txt")
    lines = result.content.splitlines()
    assert lines[0] == "many/f00000.txt" and len(lines) == GLOB_CAP + 1
    assert lines[-1].startswith("[5 more matches not shown")
    assert result.details["truncated"] is True


async def test_glob_refuses_escaping_patterns(call) -> None:
    result = await call("glob", pattern="../*")
    assert result.is_error and "set `path`" in result.content


async def test_glob_without_matches_says_so(workspace: Path, call) -> None:
    result = await call("glob", pattern="*.rs")
    assert not result.is_error and result.content == "No paths under . match *.rs."


async def test_grep_prints_file_line_text_in_path_order(workspace: Path, call) -> None:
    make_tree(workspace)
    result = await call("grep", pattern="TODO")
    assert result.content.splitlines() == ["src/app.py:2:TODO = 1", "src/readme.md:1:TODO: docs"]


async def test_grep_with_a_glob_filter_and_ignore_case(workspace: Path, call) -> None:
    make_tree(workspace)
    result = await call("grep", pattern="todo", glob="*.py", ignore_case=True)
    assert result.content.splitlines() == [
        "src/app.py:2:TODO = 1",
        "src/util/helpers.py:2:    return 'todo later'",
    ]


async def test_grep_caps_matches_with_a_note(workspace: Path, call) -> None:
    (workspace / "big.txt").write_text("hit\n" * 50)
    result = await call("grep", pattern="hit", limit=10)
    lines = result.content.splitlines()
    assert lines[:10] == [f"big.txt:{n}:hit" for n in range(1, 11)]
    assert lines[10].startswith("[Stopped at 10 matches")
    assert result.details["truncated"] is True


async def test_grep_skips_binary_files(workspace: Path, call) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01")
    (workspace / "text.txt").write_text("needle\n")
    result = await call("grep", pattern="needle")
    assert result.content == "text.txt:1:needle"


async def test_grep_skips_links_leading_out_of_the_tree(workspace: Path, tmp_path: Path, call) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password = hunter2\n")
    (workspace / "leak.txt").symlink_to(secret)
    result = await call("grep", pattern="password")
    assert "hunter2" not in result.content


async def test_grep_reports_an_invalid_regex(call) -> None:
    result = await call("grep", pattern="(unclosed")
    assert result.is_error and "not a valid regular expression" in result.content


async def test_grep_in_a_single_file(workspace: Path, call) -> None:
    make_tree(workspace)
    result = await call("grep", pattern="import", path="src/app.py")
    assert result.content == "src/app.py:1:import os"


def make_project(root: Path) -> None:
    for relative in (
        "src/app.py",
        "src/gen/table.py",
        "notes.log",
        "node_modules/pkg/index.py",
        ".venv/lib/site.py",
        "__pycache__/app.py",
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("TODO = 1\n")
    (root / ".gitignore").write_text("*.log\nsrc/gen/\n")


async def test_glob_and_grep_skip_dependency_folders_and_what_the_gitignore_names(
    workspace: Path, call
) -> None:
    make_project(workspace)
    globbed = await call("glob", pattern="**")
    assert globbed.content.splitlines() == [".gitignore", "src/", "src/app.py"]
    grepped = await call("grep", pattern="TODO")
    assert grepped.content == "src/app.py:1:TODO = 1"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_in_a_git_repository_glob_and_grep_follow_git(workspace: Path, call) -> None:
    make_project(workspace)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "src" / ".gitignore").write_text("secret.py\n")  # nested rules count too
    (workspace / "src" / "secret.py").write_text("TODO = 'hidden'\n")
    grepped = await call("grep", pattern="TODO", path="src")
    assert grepped.content == "src/app.py:1:TODO = 1"
    globbed = await call("glob", pattern="src/*")
    assert globbed.content.splitlines() == ["src/.gitignore", "src/app.py"]


async def test_a_listing_cut_at_its_limit_is_said_to_be_incomplete(
    workspace: Path, call, monkeypatch
) -> None:
    monkeypatch.setattr(search, "LIST_LIMIT", 5)
    for n in range(8):
        (workspace / f"f{n}.txt").write_text("hit\n")
    globbed = await call("glob", pattern="*.txt")
    assert globbed.content.splitlines()[-1].startswith("[The listing of . stopped at 5 paths")
    assert globbed.details["incomplete"] is True and globbed.details["matches"] == 5
    grepped = await call("grep", pattern="hit")
    assert grepped.details["incomplete"] is True and grepped.details["files_searched"] == 5
