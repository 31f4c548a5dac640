"""More edges of `harnez run`, `chat`, `sessions` and `events` that a script or a person at a shell meets."""

from __future__ import annotations

import json
import signal
import sqlite3
import time

import pytest

from tests.e2e.helpers import HeadlessWorkspace, json_lines


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


def _reads(headless: HeadlessWorkspace, count: int) -> None:
    """`count` model turns that each call a tool, so the task goes on until a step budget stops it."""
    (headless.path / "a.txt").write_text("a\n")
    headless.model.add(
        *(
            {"reply": [{"tool_call": {"id": f"c{i}", "name": "read", "arguments": {"path": "a.txt"}}}]}
            for i in range(count)
        )
    )


def test_an_incomplete_run_names_the_flag_of_its_budget_and_what_continues_it(
    headless: HeadlessWorkspace,
) -> None:
    """The reason said on stderr named the settings `max_steps` and `timeout` (the app's words) where a
    run sets its budget with --max-steps and --timeout, and said to continue the session even under
    --no-session, which keeps none."""
    _reads(headless, 2)
    kept = headless.harnez("run", "--json", "--max-steps", "1", "loop")
    assert kept.returncode == 3, kept.stderr
    session = json_lines(kept.stdout)[0]["session"]
    assert kept.stderr.splitlines()[-1] == (
        "harnez: task incomplete: Stopped after 1 model turns (--max-steps); continue with "
        f'`harnez run --resume {session[:12]} "…"`, or raise --max-steps'
    )
    _reads(headless, 2)
    thrown = headless.harnez("run", "--no-session", "--max-steps", "1", "loop")
    assert thrown.returncode == 3, thrown.stderr
    assert thrown.stderr == (
        "harnez: task incomplete: Stopped after 1 model turns (--max-steps); raise --max-steps and run it "
        "again (--no-session kept nothing to continue)\n"
    )
    headless.model.add({"reply": [{"text": "Too late."}], "hold": "slow"})
    try:
        timed = headless.harnez("run", "--no-session", "--timeout", "0.5", "wait")
    finally:
        headless.model.release("slow")
    assert timed.returncode == 3, timed.stderr
    assert timed.stderr == (
        "harnez: task incomplete: Stopped at the time budget of 0.5 s; raise --timeout and run it again "
        "(--no-session kept nothing to continue)\n"
    )


def test_sessions_show_and_events_take_latest_as_run_resume_does(headless: HeadlessWorkspace) -> None:
    """`run --resume latest` continues the newest session, but `sessions show latest` and `events
    --session latest` looked `latest` up as an id: "'latest' is not a session id"."""
    none = headless.harnez("sessions", "show", "latest")
    assert none.returncode == 2 and none.stderr.startswith("harnez: No saved session in "), none.stderr
    ids = []
    for n in range(2):
        headless.model.add({"reply": [{"text": f"Answer {n}."}]})
        done = headless.harnez("run", "--json", f"question {n}")
        assert done.returncode == 0, done.stderr
        ids.append(json_lines(done.stdout)[0]["session"])
    shown = headless.harnez("sessions", "show", "latest")
    assert shown.returncode == 0, shown.stderr
    assert (
        f" · {ids[1]} · " in shown.stdout and "Answer 1." in shown.stdout and "Answer 0." not in shown.stdout
    )
    events = headless.harnez("events", "--session", "latest")
    assert events.returncode == 0, events.stderr
    assert {event["session"] for event in json_lines(events.stdout)} == {ids[1]}


def test_a_session_id_that_is_not_hexadecimal_is_said_to_be_none(headless: HeadlessWorkspace) -> None:
    """`events --session my-session` was looked up in every project and answered "No session id starts
    with 'my-session'", as if one might; an id is hexadecimal, and the usage error says so."""
    headless.model.add({"reply": [{"text": "Made a database."}]})
    assert headless.harnez("run", "go").returncode == 0
    for args in (("events", "--session", "my-session"), ("sessions", "show", "my-session")):
        done = headless.harnez(*args)
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr.splitlines()[-1].endswith(
            "expected a session id, 32 hexadecimal digits such as 3f2a9c0b… (a unique prefix is enough; "
            "`harnez sessions` lists them), or `latest`; got 'my-session'"
        ), (args, done.stderr)


def test_the_sessions_limit_is_explained_in_its_help(headless: HeadlessWorkspace) -> None:
    """`harnez sessions --help` listed `--limit N` with no word on what it does or its default."""
    shown = headless.harnez("sessions", "--help")
    assert shown.returncode == 0
    assert "--limit N" in shown.stdout
    assert "list at most N sessions (default 50); stderr says when more are left" in " ".join(
        shown.stdout.split()
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_during_the_start_up_of_a_run_ends_it_cleanly(
    headless: HeadlessWorkspace, sig: signal.Signals
) -> None:
    """A signal before the task began (the database busy with another process's write, MCP servers
    starting, a slow disk) killed the run outright (SIGTERM: no word, -15) or with a traceback
    (Ctrl-C); it ends the run as a signal mid-task does: exit 130, one line, no session half-made."""
    headless.model.add({"reply": [{"text": "Made the database."}]})
    assert headless.harnez("run", "go").returncode == 0
    holder = sqlite3.connect(headless.database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process's write: the run waits for it at start-up
    try:
        process = headless.popen("run", "--json", "never sent")
        assert process.stdin is not None
        process.stdin.close()
        time.sleep(1.5)
        process.send_signal(sig)
        try:
            code = process.wait(timeout=10)
        finally:
            process.kill()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    assert code == 130 and out == "", err
    assert err.splitlines()[-1] == "harnez: interrupted before the task began: nothing was sent", err
    assert len(json_lines(headless.harnez("sessions", "--json").stdout)) == 1


def test_a_chat_whose_earlier_task_did_not_complete_exits_with_its_code(headless: HeadlessWorkspace) -> None:
    """`harnez chat` exited with the last task's code: a task that ran out of steps, followed by one
    that completed, made the whole chat exit 0, and a script piping its questions never knew."""
    _reads(headless, 1)  # the first task's only turn: a call, and the budget of one turn runs out
    headless.model.add({"reply": [{"text": "The second answer."}]})
    done = headless.harnez("chat", "--max-steps", "1", input="loop\nthen answer\n")
    assert done.stdout.endswith("The second answer.\n"), done.stdout
    assert done.returncode == 3, done.stderr
    headless.model.add({"reply": [{"text": "All fine."}]})
    assert headless.harnez("chat", "--resume", "latest", input="fine\n").returncode == 0


def test_a_second_ctrl_c_while_the_cancel_hangs_quits_at_once(headless: HeadlessWorkspace) -> None:
    """Ctrl-C cancels the task, which then saves its end; when that cannot finish (here another process
    holds the database's write lock), a second Ctrl-C only asked for the cancel again, and the run went on
    waiting. It quits at once, exit 130, saying the task is left interrupted (the next open says so)."""
    headless.model.add({"reply": [{"text": "Never finished."}], "hold": "stuck"})
    process = headless.popen("run", "--json", "take a while")
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.close()
    holder = None
    try:
        for line in iter(process.stdout.readline, ""):
            if json.loads(line)["kind"] == "turn-started":  # the task runs: its request is held
                break
        holder = sqlite3.connect(headless.database, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # the cancelled task cannot save its end
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert process.poll() is None, "the cancel waits for the database"
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=2)
    finally:
        headless.model.release("stuck")
        process.kill()
        process.wait()
        if holder is not None:
            holder.close()
    err = process.stderr.read()
    assert code == 130 and "Traceback" not in err, err
    assert err.splitlines()[-1].startswith(
        "harnez: interrupted again while the task was being cancelled: quit at once; the task is left interrupted"
    ), err
    (saved,) = json_lines(headless.harnez("sessions", "--json").stdout)
    assert saved["status"] == "interrupted"


def test_run_and_chat_refuse_a_resume_id_that_is_not_hexadecimal(headless: HeadlessWorkspace) -> None:
    """`run --resume my-session` was refused only once the database was open, in the store's words
    ("'my-session' is not a session id"), where `events` and `sessions show` refuse it at the command
    line: the same usage error now, exit 2, before anything opens."""
    headless.model.add({"reply": [{"text": "Made a database."}]})
    assert headless.harnez("run", "go").returncode == 0
    for args in (("run", "--resume", "my-session", "go on"), ("chat", "--resume", "my-session")):
        done = headless.harnez(*args, input="")
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr.splitlines()[-1] == (
            "harnez "
            + args[0]
            + ": error: argument --resume: expected a session id, 32 hexadecimal digits such as "
            "3f2a9c0b… (a unique prefix is enough; `harnez sessions` lists them), or `latest`; got 'my-session'"
        ), (args, done.stderr)


def test_sessions_show_latest_without_a_session_says_it_in_its_own_words(headless: HeadlessWorkspace) -> None:
    """With a database but no session of this workspace, `sessions show latest` answered with the
    server's "start one with `harnez`" (the full-screen app), which says nothing of where to look."""
    empty_home = headless.path / "home"
    empty_home.mkdir()
    assert headless.harnez("import", "--home", str(empty_home)).returncode == 0  # a database, no session
    assert headless.database.exists()
    for args in (("sessions", "show", "latest"), ("events", "--session", "latest")):
        done = headless.harnez(*args)
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr.splitlines()[-1] == (
            f"harnez: No saved session in {headless.path}: `harnez sessions --all` lists those of every "
            "workspace."
        ), (args, done.stderr)
