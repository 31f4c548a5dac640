"""`harnez run`'s text mode on a terminal: the answer streams, and a retried or cut turn leaves no line
open for the next words (or the shell's prompt) to run on; to a pipe, a turn's text comes whole."""

from __future__ import annotations

import io

from harnez.events import Finished, StoredEvent, TextDelta, TurnCompleted, TurnRetried, TurnStarted
from harnez.headless import TaskPrinter


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def shown(out: io.StringIO, *bodies: object) -> str:
    printer = TaskPrinter(out, as_json=False)
    for seq, body in enumerate(bodies, 1):
        printer.show(StoredEvent("s", seq, 1, 0.0, body))  # type: ignore[arg-type]
        if isinstance(body, TextDelta):
            # streamed to a terminal as it comes; held back from a pipe until its turn ends
            assert out.getvalue().endswith(body.text) is isinstance(out, Terminal)
    return out.getvalue()


RETRIED = (
    TurnStarted(turn=1),
    TextDelta(text="one two"),
    TurnRetried(turn=1, attempt=2, delay=0.5, reason="the stream was cut"),
    TextDelta(text="one two three"),
    TurnCompleted(turn=1),
    Finished(stop="completed", turns=1),
)


def test_a_retried_turn_starts_on_a_line_of_its_own_on_a_terminal() -> None:
    assert shown(Terminal(), *RETRIED) == "one two\none two three\n"


def test_a_retried_turn_leaves_nothing_of_its_cut_attempt_in_a_pipe() -> None:
    assert shown(io.StringIO(), *RETRIED) == "one two three\n"


def test_a_turn_cut_by_the_tasks_end_keeps_its_words_and_ends_its_line() -> None:
    cut = (TurnStarted(turn=1), TextDelta(text="half an"), Finished(stop="cancelled", turns=1))
    assert shown(Terminal(), *cut) == "half an\n"
    assert shown(io.StringIO(), *cut) == "half an\n"
