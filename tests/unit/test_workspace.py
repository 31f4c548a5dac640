"""The workspace listing behind glob, grep and `@` completion: git's view in a work tree, else a walk
that skips heavy folders and honours the workspace's `.gitignore`; bounded either way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harnez.workspace import WorkspaceEntry, list_workspace

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def make_files(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_outside_git_heavy_folders_are_skipped_and_the_gitignore_is_honoured(workspace: Path) -> None:
    make_files(
        workspace,
        "src/app.py",
        "src/top.txt",
        "top.txt",
        "run.log",
        "keep.log",
        "build/out.js",
        "node_modules/lib/index.js",
        ".venv/lib/site.py",
        "__pycache__/app.pyc",
        ".harnez/notes.md",
        "docs/guide.md",
    )
    (workspace / ".gitignore").write_text("build/\n*.log\n!keep.log\n/top.txt\n!\n")
    listing = list_workspace(workspace)
    assert listing.source == "walk" and not listing.truncated
    assert listing.files == [".gitignore", "docs/guide.md", "keep.log", "src/app.py", "src/top.txt"]
    assert (
        WorkspaceEntry("src", True) in listing.entries
        and WorkspaceEntry("build", True) not in listing.entries
    )


def test_the_workspace_gitignore_applies_to_a_listing_of_a_subfolder(workspace: Path) -> None:
    make_files(workspace, "src/gen/out.py", "src/main.py", "gen/other.py")
    (workspace / ".gitignore").write_text("src/gen/\n")
    assert list_workspace(workspace / "src", workspace).files == ["main.py"]


def test_a_listing_is_in_path_order_folder_by_folder(workspace: Path) -> None:
    make_files(workspace, "b.txt", "a/z.txt", "a.txt", "a-b/c.txt")
    assert [entry.path for entry in list_workspace(workspace).entries] == [
        "a",
        "a/z.txt",
        "a-b",
        "a-b/c.txt",
        "a.txt",
        "b.txt",
    ]


@needs_git
def test_in_a_git_work_tree_git_decides_what_is_listed(workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("*.log\n")
    make_files(
        workspace,
        "kept.log",
        "debug.log",
        "src/new.py",
        "gone.py",
        "tracked.py",
        "node_modules/pkg/index.js",
        "sub/.gitignore",
    )
    (workspace / "sub" / ".gitignore").write_text("secret.txt\n")
    make_files(workspace, "sub/secret.txt", "sub/open.txt")
    git(workspace, "add", "tracked.py", "gone.py")
    git(workspace, "add", "-f", "kept.log")  # tracked although ignored: git lists it
    (workspace / "gone.py").unlink()  # tracked, deleted from the disk: not listed
    listing = list_workspace(workspace)
    assert listing.source == "git" and not listing.truncated
    assert listing.files == [
        ".gitignore",
        "kept.log",
        "src/new.py",
        "sub/.gitignore",
        "sub/open.txt",
        "tracked.py",
    ]
    assert WorkspaceEntry("src", True) in listing.entries


@needs_git
def test_a_subfolder_of_a_work_tree_lists_its_own_part(workspace: Path) -> None:
    git(workspace, "init", "-q")
    make_files(workspace, "src/a.py", "src/deep/b.py", "other.py")
    listing = list_workspace(workspace / "src", workspace)
    assert listing.source == "git" and listing.files == ["a.py", "deep/b.py"]


@pytest.mark.parametrize("in_git", [False, True])
def test_a_listing_stops_at_its_limit_and_says_so(workspace: Path, in_git: bool) -> None:
    if in_git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        git(workspace, "init", "-q")
    make_files(workspace, *(f"f{n:02}.txt" for n in range(30)))
    listing = list_workspace(workspace, limit=10, directories=False)
    assert listing.truncated and len(listing.files) == 10
    assert list_workspace(workspace, limit=30, directories=False).truncated is False


def test_a_stopped_listing_ends_early(workspace: Path) -> None:
    make_files(workspace, *(f"d{n}/f.txt" for n in range(20)))
    stop = threading.Event()
    stop.set()
    listing = list_workspace(workspace, stop=stop)
    assert listing.truncated and listing.entries == []


def test_a_git_that_does_not_answer_in_time_gives_way_to_the_walk(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").write_text("#!/bin/sh\nsleep 60\n")
    (tools / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    make_files(workspace, "a.py", "node_modules/x.js")
    listing = list_workspace(workspace, git_timeout=0.2)
    assert listing.source == "walk" and listing.files == ["a.py"]


def test_without_git_the_walk_is_used(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    make_files(workspace, "a.py")
    assert list_workspace(workspace).source == "walk"


def test_the_server_side_imports_the_listing_but_not_pathspec_until_a_walk_reads_a_gitignore(
    workspace: Path,
) -> None:
    make_files(workspace, "a.py", "skipped.log")
    (workspace / ".gitignore").write_text("*.log\n")
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "import harnez.server.factory, harnez.tools.search\n"
        "print('pathspec' in sys.modules)\n"
        "from harnez.workspace import list_workspace\n"
        f"print(list_workspace(Path({str(workspace)!r})).files, 'pathspec' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PATH": str(workspace / "no-git-here")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["False", "['.gitignore', 'a.py'] True"]
