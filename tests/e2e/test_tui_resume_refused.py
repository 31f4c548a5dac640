"""`harnez --resume ID` with an id that is not hexadecimal or that no session starts with is refused
before the full-screen app starts (it opened, then closed with the error), in `run --resume`'s words."""

from __future__ import annotations

import os
from dataclasses import replace

from tests.e2e.helpers import HeadlessWorkspace, harnez_in_pty, json_lines, pty_output

ENTER_ALTERNATE_SCREEN = b"\x1b[?1049h"


def _shown_until_exit(headless: HeadlessWorkspace, *argv: str, seconds: float = 30) -> tuple[int, bytes]:
    """The exit code of `harnez ARGV` in a pty and all it showed, or (-1, …) while the app still runs
    (it is then quit with Ctrl+Q)."""
    process, master = harnez_in_pty(headless, *argv)
    try:
        seen = pty_output(master, b"mode:", seconds)
        if b"mode:" in seen:
            os.write(master, b"\x11")  # Ctrl+Q
            process.wait(timeout=20)
            return -1, seen
        return process.wait(timeout=20), seen
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)


def test_a_malformed_or_unknown_resume_id_is_refused_before_the_app_opens(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add({"reply": [{"text": "Stored."}]})
    done = headless.harnez("run", "--json", "go")
    assert done.returncode == 0, done.stderr
    session = json_lines(done.stdout)[0]["session"]
    other = "0" if session[0] != "0" else "1"
    unknown = other + session[1:8]
    for argv, said in (
        (
            ("--resume", "my-session"),
            "argument --resume: expected a session id, 32 hexadecimal digits such as 3f2a9c0b… (a "
            "unique prefix is enough; `harnez sessions` lists them), or `latest`; got 'my-session'",
        ),
        (
            ("--resume", unknown),
            f"harnez: No session id starts with '{unknown}'. List them with `harnez sessions --all`.",
        ),
    ):
        code, shown = _shown_until_exit(headless, *argv)
        assert code == 2, (argv, shown[-400:])
        assert ENTER_ALTERNATE_SCREEN not in shown, argv
        assert said in shown.decode().replace("\r\n", " ").replace("\n", " "), (argv, shown[-400:])
    code, shown = _shown_until_exit(headless, "--resume", session[:8])
    assert code == -1 and ENTER_ALTERNATE_SCREEN in shown, "a stored session still opens"
    elsewhere = headless.path.parent / "elsewhere"
    (elsewhere / ".harnez").mkdir(parents=True)  # another project, whose database does not hold it
    code, shown = _shown_until_exit(replace(headless, path=elsewhere), "--resume", session[:8])
    assert code == -1 and ENTER_ALTERNATE_SCREEN in shown, "another project's session still opens"
