"""What a newcomer types first: `harnez --version`, and `harnez run "prompt"` as every peer accepts it."""

from __future__ import annotations

import subprocess
from importlib import metadata

from tests.e2e.helpers import HARNEZ, HeadlessWorkspace, json_lines


def test_version_prints_the_installed_version(headless: HeadlessWorkspace) -> None:
    done = subprocess.run([str(HARNEZ), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == f"harnez {metadata.version('harnez')}\n"


def test_run_takes_the_prompt_as_an_argument(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "Positional works."}]})
    done = headless.harnez("run", "say it plainly")
    assert done.returncode == 0, done.stderr
    assert "Positional works." in done.stdout
    sent = headless.model.requests[-1].body["messages"]
    assert sent[-1] == {"role": "user", "content": "say it plainly"}
    listed = json_lines(headless.harnez("sessions", "--json").stdout)
    assert len(listed) == 1


def test_a_prompt_given_twice_is_a_usage_error_before_anything_runs(headless: HeadlessWorkspace) -> None:
    done = headless.harnez("run", "one prompt", "--input", "another prompt")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("harnez: Give the prompt once") and len(done.stderr.splitlines()) == 1
    assert headless.model.requests == [] and not headless.database.exists()


def test_continue_and_resume_together_are_a_usage_error(headless: HeadlessWorkspace) -> None:
    """Both choose the session to open: `--continue` opened the newest one and the id given to
    `--resume` was ignored without a word."""
    for args in (("--continue", "--resume", "0a1b2c3d"), ("--resume", "--continue")):
        done = headless.harnez(*args, timeout=30)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.splitlines()[-1] == (
            "harnez: error: --continue (the newest session of this workspace) and --resume (the "
            "picker, or the session named) each choose the session to open: pass one of them"
        ), args
    assert not headless.database.exists()


def test_an_empty_session_or_folder_option_is_a_usage_error_not_the_default(
    headless: HeadlessWorkspace,
) -> None:
    """`--resume "$ID"` or `--session-dir "$DIR"` with the variable unset: refused, not the newest
    session continued nor a database dropped in the current folder (nor, for `events --session` and
    `sessions show`, every project searched for the id '')."""
    headless.model.add({"reply": [{"text": "The first session."}]})
    assert headless.harnez("run", "start one").returncode == 0
    before = len(headless.model.requests)
    for args in (
        ("run", "--resume", "", "go on"),
        ("chat", "--resume", " "),
        ("run", "--session-dir", "", "go on"),
        ("--session-dir", "", "sessions"),
        ("run", "--workspace", "", "go on"),
        ("import", "--home", ""),
        ("events", "--session", ""),  # looked up in every project as the prefix ''
        ("sessions", "show", " "),
    ):
        done = headless.harnez(*args, input="go on\n")
        assert done.returncode == 2, (args, done.stderr)
        assert "got an empty value" in done.stderr.splitlines()[-1], args
    assert len(headless.model.requests) == before
    assert not (headless.path / "harnez.sqlite").exists()
    (listed,) = json_lines(headless.harnez("sessions", "--json").stdout)
    assert listed["status"] == "completed", "the first session was not continued"


def test_a_closed_stdin_or_stdout_is_read_as_empty_or_written_nowhere_not_a_traceback(
    headless: HeadlessWorkspace,
) -> None:
    def closed(redirection: str, *args: str) -> subprocess.CompletedProcess[str]:
        script = f'exec "$0" "$@" {redirection}'  # the shell closes the stream before harnez starts
        return subprocess.run(
            ["sh", "-c", script, str(HARNEZ), *args],
            cwd=headless.path,
            env=headless.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    no_prompt = closed("<&-", "run")
    assert no_prompt.returncode == 2 and no_prompt.stderr.startswith("harnez: Nothing to run"), (
        no_prompt.stderr
    )
    assert closed("<&-", "chat").returncode == 0
    headless.model.add({"reply": [{"text": "Nobody reads this."}]})
    unread = closed(">&-", "run", "answer anyway")
    assert unread.returncode == 0 and "Traceback" not in unread.stderr, unread.stderr
    (saved,) = json_lines(headless.harnez("sessions", "--json").stdout)
    assert saved["status"] == "completed"


def test_an_unknown_option_of_a_command_shows_that_commands_usage(headless: HeadlessWorkspace) -> None:
    """A mistyped `run` option named `harnez`'s usage before, which lists none of the options of `run`."""
    for args, command in (
        (("run", "--bogus", "go"), "harnez run"),
        (("sessions", "--bogus"), "harnez sessions"),
    ):
        done = headless.harnez(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"usage: {command} "), done.stderr
        assert done.stderr.splitlines()[-1] == f"{command}: error: unrecognized arguments: --bogus"
    assert headless.model.requests == [] and not headless.database.exists()
