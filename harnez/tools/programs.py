"""Declared programs: which programs a shell command line would start, read as bash reads it, and the
refusal when one of them is not declared (`--programs`, `permissions.shell.programs`; docs/tools.md).

The reading is deliberately narrow. Every command of a list, pipeline, subshell, group, `$(…)`,
backtick or `<(…)` is found; transparent wrappers (`env`, `command`, `exec`, `nice`, `nohup`, `time`,
`timeout`, `stdbuf`, `setsid`) are looked through, and `sudo`, `doas`, `xargs` and `find -exec` must be
declared along with the program they start. What bash could turn into code this reading cannot see —
a computed program name, `eval`-like keywords, arithmetic, `${…}` beyond `${NAME}`, here-documents,
function definitions, assignments to PATH, loader or shell-startup variables — is `Unreadable`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

FREE_BUILTINS = frozenset({"cd", "echo", "pwd", "true", "false", ":"})
"""Builtins that start nothing and never evaluate their arguments: allowed without declaring."""

_METACHARS = frozenset(" \t\n;&|()<>")
_OPERATORS = (
    ";;&", "<<<", "&>>", "<<-", "&&", "||", ";;", ";&", "|&", "<<", ">>", ">&", "<&", "&>", ">|", "<>",
    "<(", ">(", ";", "&", "|", "<", ">", "(", ")", "\n",
)  # fmt: skip
_CONTROL = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})
_REDIRECTIONS = frozenset({"<", ">", ">>", ">&", "<&", "&>", "&>>", ">|", "<>", "<<<"})
_LEADING_KEYWORDS = frozenset(
    {"!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until"}
)
_UNREADABLE_KEYWORDS = frozenset({"case", "select", "function", "coproc", "[[", "]]", "esac"})
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[|\+?=)")
_PARAMETER = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-])$")
_RISKY_EXACT = frozenset({"PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND"})
_RISKY_PREFIXES = ("LD_", "DYLD_", "BASH_", "GIT_")
_RISKY_SUFFIXES = ("_COMMAND", "PAGER", "EDITOR", "ASKPASS", "_SSH")


class Unreadable(Exception):
    """A command line this reading cannot check with confidence; the message says what to avoid."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a command line starts nothing: an undeclared `program`, or (None) a line that cannot be checked."""

    program: str | None
    reason: str


def check_programs(command: str, declared: Sequence[str]) -> Refusal | None:
    """None when every program `command` would start is declared; else the first refusal."""
    listed = ", ".join(declared)
    try:
        started = programs_in(command)
    except RecursionError:
        return Refusal(None, f"The command line nests too deeply to be checked ({listed}); nothing ran.")
    except Unreadable as exc:
        return Refusal(
            None,
            f"The command line could not be checked against the declared programs ({listed}): {exc} "
            "Nothing ran. Write plain commands that each start a declared program.",
        )
    for program in started:
        if program not in declared:
            return Refusal(
                program,
                f"`{program}` is not one of the declared programs ({listed}); nothing ran. Use only "
                f"those (the builtins {', '.join(sorted(FREE_BUILTINS))} need no declaring), or ask the "
                f"user to run Harnez with {program} declared.",
            )
    return None


def programs_in(command: str) -> list[str]:
    """Every program `command` would start, in order of appearance; `Unreadable` when unsure."""
    found: list[str] = []
    _Reader(command, found).commands(closer=None)
    return found


@dataclass(slots=True)
class _Word:
    """One shell word: as written, its value after quote removal, and whether that value is literal."""

    raw: str
    value: str
    plain: bool


class _Reader:
    """A recursive reading of a bash command line; the programs of each simple command go to `found`."""

    def __init__(self, text: str, found: list[str]) -> None:
        self.text, self.pos, self.found = text, 0, found

    def commands(self, closer: str | None) -> None:
        """Read a command list up to its end, or up to the `)` that closes it when `closer` is given."""
        words: list[_Word] = []
        while True:
            self._blanks()
            if self.pos >= len(self.text):
                if closer is not None:
                    raise Unreadable("a `(`, `$(` or `<(` is never closed.")
                self._simple_command(words)
                return
            operator = self._operator()
            if operator == ")":
                if closer is None:
                    raise Unreadable("a `)` closes nothing.")
                self._simple_command(words)
                return
            if operator is None:
                word = self._word()
                if not (word.raw.isdigit() and self._peek() in ("<", ">")):  # `2>&1`: a descriptor
                    words.append(word)
            else:
                words = self._after_operator(operator, words)

    def _after_operator(self, operator: str, words: list[_Word]) -> list[_Word]:
        """Act on an operator; the words of the simple command that goes on after it."""
        if operator in _CONTROL:
            self._simple_command(words)
            return []
        if operator in _REDIRECTIONS:
            self._blanks()
            if self.pos >= len(self.text) or self._operator(peek=True) is not None:
                raise Unreadable(f"the redirection `{operator}` has no target.")
            self._word()
            return words
        if operator in ("<(", ">("):
            self.commands(closer=")")
            return [*words, _Word(operator + "…)", "", plain=False)]
        if operator == "(" and not words and not self.text.startswith("(", self.pos):
            self.commands(closer=")")
            return words
        raise Unreadable(_OPERATOR_PROBLEMS.get(operator, f"`{operator}` is not understood here."))

    def _operator(self, *, peek: bool = False) -> str | None:
        found = next((op for op in _OPERATORS if self.text.startswith(op, self.pos)), None)
        if found is not None and not peek:
            self.pos += len(found)
        return found

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _blanks(self) -> None:
        """Skip spaces, tabs, line continuations and a comment (a `#` starting a word)."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t":
                self.pos += 1
            elif self.text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def _word(self) -> _Word:
        """Read one word, checking every substitution inside it (their programs are found too)."""
        start, value, plain, bare = self.pos, [], True, []
        while self.pos < len(self.text) and self.text[self.pos] not in _METACHARS:
            char = self.text[self.pos]
            if char in "$`'\\\"":
                piece, literal = self._piece()
            else:  # unquoted: globs and `~` expand; `{}` alone does not, `{a,b}` and `{1..3}` do
                self.pos += 1
                piece, literal = char, char not in "*?[]~"
                bare.append(char)
            value.append(piece)
            plain = plain and literal
        unquoted = "".join(bare)
        if "{" in unquoted and ("," in unquoted or ".." in unquoted):
            plain = False
        return _Word(self.text[start : self.pos], "".join(value), plain)

    def _piece(self) -> tuple[str, bool]:
        """The next quoted, escaped or expanded piece of a word: its value, and whether it is literal."""
        text, char = self.text, self.text[self.pos]
        if text.startswith("\\\n", self.pos):
            self.pos += 2
            return "", True
        if char == "\\":
            self.pos += 2
            return text[self.pos - 1 : self.pos], True
        if char == "'":
            return self._single_quoted(), True
        if text.startswith("$'", self.pos):
            self.pos += 1
            return self._ansi_quoted(), False
        if char == '"' or text.startswith('$"', self.pos):
            return self._double_quoted()
        return ("$", True) if self._expansion() else ("", False)

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise Unreadable("a `'` quote is never closed.")
        piece = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return piece

    def _ansi_quoted(self) -> str:
        """A `$'…'` string (the `$` already read): its backslashes may escape a `'`."""
        end = self._closing("'", "a `$'` quote")
        piece = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return piece

    def _closing(self, closer: str, what: str) -> int:
        """Where the `closer` that ends what opens at `pos` stands, past backslash escapes."""
        index = self.pos + 1
        while index < len(self.text) and self.text[index] != closer:
            index += 2 if self.text[index] == "\\" else 1
        if index >= len(self.text):
            raise Unreadable(f"{what} is never closed.")
        return index

    def _double_quoted(self) -> tuple[str, bool]:
        """A `"…"` (or `$"…"`) string: literal unless it expands something, which is checked."""
        self.pos += 2 if self.text[self.pos] == "$" else 1
        value, plain = [], True
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                escaped = self.text[self.pos + 1]
                value.append(escaped if escaped in '$`"\\' else "\\" + escaped)
                self.pos += 2
            elif char in "$`":
                literal = self._expansion()
                value.append("$" if literal else "")
                plain = plain and literal
            else:
                value.append(char)
                self.pos += 1
        if self.pos >= len(self.text):
            raise Unreadable('a `"` quote is never closed.')
        self.pos += 1
        return "".join(value), plain

    def _expansion(self) -> bool:
        """Read a `$…` or backtick expansion, checking what it runs; True when it was a lone `$`."""
        text = self.text
        if text.startswith(("$((", "$["), self.pos):
            raise Unreadable("arithmetic expansion (`$((…))`, `$[…]`) can evaluate code.")
        if text.startswith("$(", self.pos):
            self.pos += 2
            self.commands(closer=")")
        elif text[self.pos] == "`":
            self._backticks()
        elif text.startswith("${", self.pos):
            self._braced_parameter()
        elif self.pos + 1 < len(text) and _PARAMETER.match(text[self.pos + 1]):
            match = re.match(r"[A-Za-z_][A-Za-z0-9_]*|.", text[self.pos + 1 :])
            self.pos += 1 + (match.end() if match else 1)
        else:
            self.pos += 1
            return True
        return False

    def _backticks(self) -> None:
        """A backtick substitution: its text, unescaped as bash does, is read as a command line."""
        end = self._closing("`", "a backtick substitution")
        inner = re.sub(r"\\([\\`$])", r"\1", self.text[self.pos + 1 : end])
        self.pos = end + 1
        _Reader(inner, self.found).commands(closer=None)

    def _braced_parameter(self) -> None:
        end = self.text.find("}", self.pos)
        if end < 0 or not _PARAMETER.match(self.text[self.pos + 2 : end]):
            raise Unreadable("only `${NAME}` is read inside braces (other forms can evaluate code).")
        self.pos = end + 1

    def _simple_command(self, words: list[_Word]) -> None:
        """The programs of one simple command: past keywords and assignments, through wrappers."""
        while words and words[0].raw in _LEADING_KEYWORDS:
            words = words[1:]
        if words and words[0].raw in _UNREADABLE_KEYWORDS:
            raise Unreadable(f"`{words[0].raw}` is not read (write plain commands instead).")
        if words and words[0].raw == "for":
            _check_for(words)
            return
        words = _past_assignments(words)
        if words:
            self.found.extend(_started(words))


_OPERATOR_PROBLEMS = {
    "(": "a `(` that does not start a subshell (a function definition, or `((…))` arithmetic).",
    "<<": "here-documents are not read (write the file with the write tool instead).",
    "<<-": "here-documents are not read (write the file with the write tool instead).",
    ";;": "`case` is not read (write plain commands instead).",
    ";&": "`case` is not read (write plain commands instead).",
    ";;&": "`case` is not read (write plain commands instead).",
}


def _check_for(words: list[_Word]) -> None:
    """`for NAME in WORDS`: its words are data, but only a plain loop variable is read."""
    if len(words) < 2 or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", words[1].raw):
        raise Unreadable("only `for NAME in WORDS; do …; done` loops are read.")


def _past_assignments(words: list[_Word]) -> list[_Word]:
    """The words after the leading `NAME=value` assignments, each checked."""
    index = 0
    while index < len(words):
        match = _ASSIGNMENT.match(words[index].raw)
        if match is None:
            break
        _check_assignment(match)
        index += 1
    return words[index:]


def _check_assignment(match: re.Match[str]) -> None:
    name, operator = match.group(1), match.group(2)
    if operator == "[":
        raise Unreadable(f"the array assignment `{name}[…]=` evaluates its index as code.")
    if name in _RISKY_EXACT or name.startswith(_RISKY_PREFIXES) or name.endswith(_RISKY_SUFFIXES):
        raise Unreadable(f"setting {name} could make a declared program start another one.")


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """A program that starts the program named after its options."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    """Options that take the next word (or, for a short option, the rest of its own word)."""
    positional: int = 0
    """Arguments before the program (`timeout DURATION prog`)."""
    lookup_only: frozenset[str] = frozenset()
    """Options after which nothing is started (`command -v`)."""
    assignments: bool = False
    """Whether NAME=value words may come before the program (`env X=1 prog`)."""
    transparent: bool = True
    """Whether it needs no declaring itself (it only changes how the program runs)."""
    default: str | None = ""
    """What runs when no program is named ("": nothing; None: refused)."""


def _wrapper(flags: str = "", valued: str = "", **rest: object) -> _Wrapper:
    return _Wrapper(frozenset(flags.split()), frozenset(valued.split()), **rest)  # type: ignore[arg-type]


_WRAPPERS: dict[str, _Wrapper] = {
    "env": _wrapper("-i --ignore-environment -0 --null -v --debug -", "-u --unset -C --chdir", assignments=True),
    "command": _wrapper("-p", lookup_only=frozenset({"-v", "-V"})),
    "exec": _wrapper("-c -l", "-a"),
    "nice": _wrapper("", "-n --adjustment"),
    "nohup": _wrapper(),
    "time": _wrapper("-p -a -v -q --verbose --quiet --append --portability", "-o --output -f --format"),
    "timeout": _wrapper("--preserve-status --foreground -v --verbose", "-s --signal -k --kill-after", positional=1),
    "stdbuf": _wrapper("", "-i -o -e --input --output --error"),
    "setsid": _wrapper("-f --fork -w --wait -c --ctty"),
    "xargs": _wrapper(
        "-0 --null -r --no-run-if-empty -t --verbose -p --interactive -x --exit -o --open-tty -i -l -e",
        "-I -L -n --max-args -P --max-procs -s --max-chars -d --delimiter -E -a --arg-file --process-slot-var",
        transparent=False,
    ),
    "sudo": _wrapper(
        "-E -H -n -b -P -S -A -k --preserve-env --non-interactive --background --set-home --stdin --askpass",
        "-u --user -g --group -C --close-from -h --host -p --prompt -r --role -t --type -U --other-user "
        "-D --chdir -R --chroot -T --command-timeout",
        transparent=False,
        default=None,
    ),
    "doas": _wrapper("-n", "-u -C", transparent=False, default=None),
}  # fmt: skip
_FIND_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _started(words: list[_Word]) -> list[str]:
    """The programs a simple command starts: its own, then those its wrappers start."""
    started: list[str] = []
    while words:
        name = _program_name(words[0])
        base = name.rsplit("/", 1)[-1]
        wrapper = _WRAPPERS.get(base)
        bare = "/" not in name
        if not (bare and (base in FREE_BUILTINS or (wrapper is not None and wrapper.transparent))):
            started.append(name)
        if base == "find":
            started.extend(_program_name(words[i + 1]) for i in _find_exec_positions(words))
        if wrapper is None:
            break
        words = _wrapped(base, wrapper, words[1:])
    return started


def _program_name(word: _Word) -> str:
    if not word.plain or not word.value:
        raise Unreadable(f"the program name `{word.raw}` is computed when the command runs.")
    return word.value


def _find_exec_positions(words: list[_Word]) -> list[int]:
    positions = [i for i, word in enumerate(words) if word.value in _FIND_EXECS]
    if positions and positions[-1] + 1 >= len(words):
        raise Unreadable("`find -exec` names no program.")
    return positions


def _wrapped(name: str, wrapper: _Wrapper, args: list[_Word]) -> list[_Word]:
    """The words from the program `name` starts on ([] when it starts none)."""
    index, positional = 0, wrapper.positional
    while index < len(args):
        word = args[index]
        if not word.plain:
            raise Unreadable(f"`{name}` has an argument computed when the command runs: `{word.raw}`.")
        value = word.value
        if value == "--":
            index += 1
            break
        if value in wrapper.lookup_only:
            return []
        assignment = _ASSIGNMENT.match(value) if wrapper.assignments else None
        if assignment is not None:
            _check_assignment(assignment)
        elif (value.startswith("-") and value != "-") or value in wrapper.flags:
            index += _option_width(name, wrapper, value) - 1
        elif positional:
            positional -= 1
        else:
            break
        index += 1
    if index >= len(args) and wrapper.default is None:
        raise Unreadable(f"`{name}` without a program starts a shell.")
    return args[index:]


def _option_width(name: str, wrapper: _Wrapper, option: str) -> int:
    """How many words an option of a wrapper takes (1 or 2); an unknown option is `Unreadable`."""
    if option in wrapper.flags or (name == "nice" and option[1:].isdigit()):
        return 1
    if option in wrapper.valued:
        return 2
    key = option.split("=", 1)[0] if option.startswith("--") else option[:2]
    if key in wrapper.valued and key != option:
        return 1  # `--signal=KILL`, `-oL`: the value is in the same word
    raise Unreadable(f"`{name} {option}` is an option this reading does not know.")
