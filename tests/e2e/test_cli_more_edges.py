"""More edges of `harnez run`, `chat`, `sessions` and `events` that a script or a person at a shell meets."""

from __future__ import annotations

from tests.e2e.helpers import HeadlessWorkspace


def test_resume_latest_without_a_session_says_to_drop_resume(headless: HeadlessWorkspace) -> None:
    """With a database but no session in it, `run --resume latest` said "start one with
    `harnez`" (the full-screen app) where the run itself starts one without --resume."""
    empty_home = headless.path / "home"
    empty_home.mkdir()
    assert headless.harnez("import", "--home", str(empty_home)).returncode == 0  # a database, no session
    assert headless.database.exists()
    for args in (("run", "--resume", "latest", "go on"), ("chat", "--resume", "latest")):
        done = headless.harnez(*args, input="")
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr == (
            f"harnez: No saved session in {headless.path} to resume: drop --resume to start one.\n"
        ), (args, done.stderr)
