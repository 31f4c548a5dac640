"""A hook's decision is read from its exit code and stdout as docs/hooks.md says, and a hook that fails says why."""

from __future__ import annotations

import pytest

from harnez.errors import HookError
from harnez.hooks import Decision, read_decision
from harnez.hooks.command import CommandResult


def ended(
    exit_code: int | None, stdout: str = "", stderr: str = "", timed_out: bool = False
) -> CommandResult:
    return CommandResult(exit_code, stdout, stderr, 0.01, timed_out)


@pytest.mark.parametrize(
    ("result", "decision"),
    [
        (ended(0), Decision()),
        (ended(0, "ran 12 checks, all fine\n"), Decision()),  # plain text is not a decision
        (ended(0, "{}"), Decision()),
        (
            ended(0, '{"decision": "allow", "context": "frozen branch"}'),
            Decision("allow", None, "frozen branch"),
        ),
        (ended(0, ' {"decision": "block", "reason": "tests fail"}\n'), Decision("block", "tests fail")),
        (ended(2, "ignored", "  tests fail\n"), Decision("block", "tests fail")),
        (ended(2), Decision("block", None)),
    ],
)
def test_exit_codes_and_json_decide(result: CommandResult, decision: Decision) -> None:
    assert read_decision("stop", "make test", 60, result) == decision


@pytest.mark.parametrize(
    ("result", "says"),
    [
        (
            ended(1, stderr="Traceback …\nKeyError: 'x'\n"),
            "failed with exit code 1: Traceback … KeyError: 'x'.",
        ),
        (ended(127), "failed with exit code 127; it printed nothing on stderr. Run it by hand"),
        (ended(None, timed_out=True), "did not finish within 60 s and was killed"),
        (ended(0, '{"decision": "block",'), "printed JSON that cannot be read (Expecting"),
        (ended(0, '{"decision": "deny"}'), 'printed the decision \'deny\'; use "allow" or "block".'),
        (ended(0, '{"reason": 3}'), "printed a `reason` that is not text"),
    ],
)
def test_a_hook_that_fails_raises_a_message_naming_it(result: CommandResult, says: str) -> None:
    with pytest.raises(HookError) as raised:
        read_decision("pre_tool", "./guard.sh", 60, result)
    assert raised.value.message.startswith("The pre_tool hook `./guard.sh` ")
    assert says in raised.value.message


def test_a_failed_hook_quotes_only_the_end_of_a_long_stderr_and_no_control_characters() -> None:
    noisy = "x" * 5000 + "\x1b[2J the real error"
    with pytest.raises(HookError) as raised:
        read_decision("stop", "make", 60, ended(1, stderr=noisy))
    assert raised.value.message.endswith("the real error.") and len(raised.value.message) < 500
    assert "\x1b" not in raised.value.message
