"""The reading of a command line for declared programs, checked against bash itself: run with a PATH of
logging stand-ins, bash never starts a program the reading missed (lines it cannot read are refused)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnez.errors import SettingsError
from harnez.settings import load_settings
from harnez.tools.programs import Unreadable, check_programs, programs_in

STAND_INS = ("git", "pytest", "evil", "head", "cat", "tee", "ls", "id")
REAL_WRAPPERS = ("env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "find")

READ = [
    ("git status; evil", ["git", "evil"]),
    ("git $(evil -x)", ["evil", "git"]),
    ("git `evil`", ["evil", "git"]),
    ('echo "$(evil)" \'$(not) a;b\' "x`id`"', ["evil", "id"]),
    ('"e""vil" -f', ["evil"]),
    (r"g\it log", ["git"]),
    ("git status\nevil", ["git", "evil"]),
    ("git status & evil", ["git", "evil"]),
    ("git log |& head -1 || evil", ["git", "head", "evil"]),
    ("if evil; then :; else git x; fi", ["evil", "git"]),
    ("{ git status; } > out 2>&1", ["git"]),
    ("(cd x && git status) && ! evil", ["git", "evil"]),
    ("for f in $(ls); do git add $f; done", ["ls", "git"]),
    ("X=$(evil) git", ["evil", "git"]),
    ("git log > $(evil)", ["evil", "git"]),
    ("cat <(evil) >(tee x)", ["evil", "tee", "cat"]),
    ("git status #; evil", ["git"]),
    ("echo a#; evil", ["evil"]),
    ("exec 3>&1 evil", ["evil"]),
    ("env -i X=1 evil", ["evil"]),
    ("env -- evil", ["evil"]),
    ("/usr/bin/env evil", ["/usr/bin/env", "evil"]),
    ("nice -n git evil", ["evil"]),
    ("timeout -k 1 5 evil", ["evil"]),
    ("time -p pytest -q", ["pytest"]),
    ("command -v evil", []),
    ("xargs -I{} evil {}", ["xargs", "evil"]),
    ("xargs -n1", ["xargs"]),
    ("sudo -u root -- git push", ["sudo", "git"]),
    ("find . -name '*.py' -exec evil {} +", ["find", "evil"]),
    ("cd /tmp && ./git", ["./git"]),
    ("a=1 b=2", []),
    ("echo $(< file)", []),
]

UNREADABLE = [
    ("$cmd", "the program name `$cmd` is computed"),
    ("$'\\x65vil'", "is computed"),
    ("{evil,-x}", "is computed"),
    ("/bin/ev?l", "is computed"),
    ("~/evil", "is computed"),
    ("env -S 'evil -x'", "`env -S` is an option this reading does not know"),
    ("nice --weird git", "`nice --weird`"),
    ("sudo -s", "`sudo -s`"),
    ("sudo", "`sudo` without a program starts a shell"),
    ("git() { evil; }; git", "a function definition"),
    ("function git { evil; }", "`function` is not read"),
    ("((x=1))", "`((…))` arithmetic"),
    ("echo $((1+2))", "arithmetic expansion"),
    ("echo $[1]", "arithmetic expansion"),
    ("echo ${x:-$(evil)}", "only `${NAME}`"),
    ("cat <<EOF\n$(evil)\nEOF", "here-documents are not read"),
    ("case x in a) evil;; esac", "closes nothing"),
    ("[[ -v 'a[$(evil)]' ]]", "`[[` is not read"),
    ("PATH=. git", "setting PATH"),
    ("env LD_PRELOAD=x.so git", "setting LD_PRELOAD"),
    ("GIT_SSH_COMMAND=evil git fetch", "setting GIT_SSH_COMMAND"),
    ("a[$(evil)]=1", "array assignment"),
    ("for ((i=0;;)); do evil; done", "`((…))` arithmetic"),
    ('echo "open', '`"` quote is never closed'),
    ("echo $(evil", "never closed"),
    ("git log >", "has no target"),
    ("find . -exec", "`find -exec` names no program"),
]


@pytest.mark.parametrize(("line", "programs"), READ)
def test_the_programs_of_a_line_are_found_in_order(line: str, programs: list[str]) -> None:
    assert programs_in(line) == programs


@pytest.mark.parametrize(("line", "says"), UNREADABLE)
def test_what_cannot_be_read_with_confidence_is_unreadable(line: str, says: str) -> None:
    with pytest.raises(Unreadable, match=None) as raised:
        programs_in(line)
    assert says in str(raised.value)


def test_check_names_the_undeclared_program_or_says_why_the_line_cannot_be_checked() -> None:
    assert check_programs("git status && pytest -q | head -3", ["git", "pytest", "head"]) is None
    refusal = check_programs("git status && evil", ["git", "pytest"])
    assert refusal is not None and refusal.program == "evil"
    assert refusal.reason.startswith("`evil` is not one of the declared programs (git, pytest); nothing ran.")
    computed = check_programs("$x", ["git"])
    assert computed is not None and computed.program is None and "could not be checked" in computed.reason
    deep = check_programs("$(" * 5000, ["git"])
    assert deep is not None and deep.program is None and "nests too deeply" in deep.reason
    assert check_programs("/usr/bin/git log", ["git"]) is not None, "a path must be declared as that path"


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH folder: a logging stand-in for each program, and the real wrappers (which then start them)."""
    folder = tmp_path_factory.mktemp("bin")
    for name in STAND_INS:
        script = folder / name
        script.write_text('#!/bin/sh\necho "${0##*/}" >> "$PROGRAM_LOG"\n')
        script.chmod(0o755)
    for name in REAL_WRAPPERS:
        real = shutil.which(name)
        if real:
            (folder / name).symlink_to(real)
    return folder


def started_by_bash(line: str, stand_ins: Path, cwd: Path) -> set[str]:
    """The stand-ins bash really started for `line` (bash's own errors are fine)."""
    log = cwd / "started.log"
    log.unlink(missing_ok=True)
    env = {"PATH": str(stand_ins), "PROGRAM_LOG": str(log), "HOME": str(cwd)}
    try:
        subprocess.run(
            ["/bin/bash", "-c", line],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
        )
    except subprocess.TimeoutExpired:
        pass
    return set(log.read_text().split()) if log.exists() else set()


def _names(programs: list[str]) -> set[str]:
    return {program.rsplit("/", 1)[-1] for program in programs}


@pytest.mark.parametrize(("line", "programs"), [case for case in READ if "sudo" not in case[0]])
def test_bash_starts_nothing_the_reading_missed(
    line: str, programs: list[str], stand_ins: Path, tmp_path: Path
) -> None:
    assert started_by_bash(line, stand_ins, tmp_path) <= _names(programs)


PIECES = [
    "git", "evil", "'ev'il", '"ev"il', "e\\vil", "$(evil)", "`evil`", '"$(evil)"', "env", "nice -n 5",
    "timeout 5", "xargs", "command", "exec", "X=1", "x=evil", "$x", ";", "&&", "||", "|", "&", "(", ")",
    "{", "}", "\n", "#", "'", '"', "\\", "<", ">", "2>&1", "if", "then", "fi", "for", "in", "do", "done",
    "!", "<(", "$'ev'", "{a,b}", "*", "=", "$", "find . -maxdepth 0 -exec", "\\;", "cd", ".", "/",
]  # fmt: skip


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    pieces=st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(["", " "])), min_size=1, max_size=10)
)
def test_no_line_built_from_tricky_pieces_starts_a_program_the_reading_missed(
    pieces: list[tuple[str, str]], stand_ins: Path, tmp_path: Path
) -> None:
    line = "".join(piece + space for piece, space in pieces)
    try:
        found = programs_in(line)
    except Unreadable:
        return
    if "." in found:
        return  # `. FILE` reads a stand-in into bash itself: it starts nothing, and `.` is never declared
    assert started_by_bash(line, stand_ins, tmp_path) <= _names(found), line


def test_a_settings_file_declaring_a_command_line_instead_of_a_program_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".harnez").mkdir()
    (tmp_path / ".harnez" / "settings.json").write_text(
        '{"permissions": {"shell": {"programs": ["git", "rm -rf"]}}}'
    )
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path, {"HARNEZ_HOME": str(tmp_path / "home")})
    assert "permissions.shell.programs" in caught.value.message
    assert "'rm -rf' is not a program name" in caught.value.message
    (tmp_path / "plain").mkdir()
    plain = load_settings(tmp_path / "plain", {"HARNEZ_HOME": str(tmp_path / "home")})
    assert plain.permissions.shell.programs is None
