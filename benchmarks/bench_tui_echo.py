"""Benchmark keystroke → echo in the prompt while an answer streams, against a bare Textual app's TextArea.

Each run launches a fresh process with a 120×40 pty as its terminal and reads what it writes (escape
sequences removed). The model is the scripted model in its own process (`python -m
harnez.testing.scripted_model`) streaming a long answer one word every `--word-delay` seconds (100
words/s by default, a blank line every 40 words so the Markdown grows by paragraphs), over real
loopback HTTP. Two kinds of run alternate, so load changes on the shared machine hit them alike:

- `bare`: a bare Textual app with a focused TextArea (Enter clears it, as a sent prompt does). The
  reference: the same keys echoed with no stream, no server and no Markdown;
- `harnez`: once the session is attached, a prompt is sent; the moment its answer's first word is on
  screen, keys are typed into the prompt, one at a time; once the answer has ended, the prompt is
  cleared and, `--think` seconds later (a person reading the answer), a second prompt sent and typed
  into the same way (the first prompt of a process and a later one).

A key's echo is the time from writing its byte to the pty to the first output, written after it,
that holds the prompt's text so far (the keys are upper-case letters the screen did not show
before). The first key of each stream is reported apart from the later ones (issue #17 point 4:
within 5 ms of them; p95 ≤ 1.5× the bare app's echo). Keys echoed after the answer had ended are
counted and left out.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import bench_store_lib as lib
import bench_tui_answer as answer
import bench_tui_lib as tui

READY = "idle · mode:"
PROMPTS = ("stream a long answer, please", "and another one")
FIRST_WORDS = ("Streaming", "Flowing")
LAST_WORDS = ("Finished", "Concluded")
"""The first and last word of the answers to the first and the second prompt (each stays on screen, and
is painted again when the transcript scrolls, so the next answer's must differ)."""
KEY_POOL = "QZXJVKWYGBPDFHMNRT"
"""Keys typed: letters that neither the answer (lower case) nor the screens' chrome show."""
SETTLE = 0.3
"""Seconds the bare app is left before each series (its first frame, then the Enter's clearing)."""
VOCABULARY = ("stream", "render", "frame", "widget", "markdown", "token", "answer", "prompt", "layout")

BARE_TEXT_AREA_APP = """
from textual.app import App
from textual.binding import Binding
from textual.widgets import Static, TextArea

class Prompt(TextArea):
    BINDINGS = [Binding("enter", "send", priority=True)]

    def action_send(self):
        self.clear()

class Bare(App):
    def compose(self):
        yield Static("bare textual app ready")
        yield Prompt()

Bare().run()
"""


def long_answer(words: int, word_delay: float) -> dict:
    """The looping script: the two answers of `words` words, each streamed a word every `word_delay`
    seconds (every run sends two prompts)."""
    body = "".join(VOCABULARY[i % len(VOCABULARY)] + ("\n\n" if i % 40 == 39 else " ") for i in range(words))
    turns = [
        {"reply": [{"text": f"{first} {body}{last}"}], "delay_per_chunk": word_delay}
        for first, last in zip(FIRST_WORDS, LAST_WORDS, strict=True)
    ]
    return {"loop": True, "turns": turns}


@dataclass
class Series:
    """The echoes of the keys typed into one prompt: the first key, the later ones, and keys too late."""

    first: list[float] = field(default_factory=list)
    later: list[float] = field(default_factory=list)
    after_end: int = 0


def type_keys(
    process: tui.PtyProcess, keys: int, rng: random.Random, series: Series, start: int, last_word: str = ""
) -> None:
    """Type `keys` keys into the focused prompt, each after the previous one's echo and a random gap
    (`start`: the output's mark before the answer began, which ends with `last_word`)."""
    pool = [key for key in KEY_POOL if key not in process.output]
    typed = ""
    for index in range(keys):
        typed += rng.choice(pool)
        mark = process.mark()
        sent = tui.write(process, typed[-1].encode())
        echo = process.wait_for_after(mark, typed) - sent
        if last_word and process.wrote_after(start, last_word):
            series.after_end += 1
        else:
            (series.later if index else series.first).append(echo)
        time.sleep(rng.uniform(0.04, 0.09))


def bare_run(script: Path, home: tui.Home, keys: int, rng: random.Random) -> list[Series]:
    """Keys into a bare app's TextArea: two series, the second after an Enter."""
    process = tui.launch([str(tui.PYTHON), str(script)], home.env(), home.workspace)
    process.wait_for(["bare textual app ready"])
    result = [Series(), Series()]
    for series in result:
        time.sleep(SETTLE)
        type_keys(process, keys, rng, series, process.mark())
        tui.write(process, b"\r")
    process.stop()
    return result


def harnez_run(home: tui.Home, keys: int, rng: random.Random, think: float) -> list[Series]:
    """Keys into harnez's prompt while the first prompt's answer streams, then the second's (sent
    `think` seconds after the first answer ended)."""
    process = tui.launch([str(tui.HARNEZ)], home.env(), home.workspace)
    process.wait_for([READY])
    result = []
    for prompt, first_word, last_word in zip(PROMPTS, FIRST_WORDS, LAST_WORDS, strict=True):
        time.sleep(think if result else 0.0)
        tui.write(process, prompt.encode())
        process.wait_for([prompt])
        mark = process.mark()
        tui.write(process, b"\r")
        process.wait_for_after(mark, first_word)
        result.append(Series())
        type_keys(process, keys, rng, result[-1], mark, last_word)
        process.wait_for_after(mark, READY)
        tui.write(process, b"\x03")  # Ctrl+C clears the prompt
    process.stop()
    if process.process.returncode != 0:
        raise RuntimeError(f"harnez exited with {process.process.returncode}: {process.output[-400:]!r}")
    return result


def main() -> None:
    """Alternate bare and harnez runs; report the first key's and the later keys' echo, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="runs of each kind (default 6)")
    parser.add_argument("--keys", type=int, default=15, help="keys typed per prompt (default 15)")
    parser.add_argument("--word-delay", type=float, default=0.01, help="seconds between streamed words")
    parser.add_argument(
        "--think",
        type=float,
        default=2.0,
        help="seconds between the first answer's end and the second prompt (default 2; 0 sends it at "
        "once, while the first answer's title and prices are still being worked out in threads)",
    )
    parser.add_argument("--quick", action="store_true", help="3 runs of each kind")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    lib.header("Keystroke → echo while an answer streams (issue #17: first key within 5 ms of later ones)")
    words = max(300, int(args.keys * 0.2 / args.word_delay))
    print(
        f"  pty {tui.COLUMNS}×{tui.LINES}; {runs} runs of each kind, alternating; {args.keys} keys a prompt; "
        f"an answer of {words} words, one every {args.word_delay * lib.MS:.0f} ms; second prompt "
        f"{args.think:.1f} s after the first answer"
    )
    home = tui.make_home()
    model, url = answer.start_model(home.root, long_answer(words, args.word_delay))
    answer.point_at(home, url)
    script = home.root / "bare_text_area_app.py"
    script.write_text(BARE_TEXT_AREA_APP, encoding="utf-8")
    rng = random.Random(17)
    bare: list[list[Series]] = []
    harnez: list[list[Series]] = []
    try:
        bare_run(script, home, 3, rng), harnez_run(home, 3, rng, 0.0)  # warm-up: bytecode, the database
        for index in range(runs):
            for kind in ("bare", "harnez")[index % 2 :] + ("bare", "harnez")[: index % 2]:
                if kind == "bare":
                    bare.append(bare_run(script, home, args.keys, rng))
                else:
                    harnez.append(harnez_run(home, args.keys, rng, args.think))
    finally:
        model.kill()
        model.wait()
        tui.remove_home(home)
    report(bare, harnez)


def _pooled(runs: list[list[Series]], which: str, prompts: tuple[int, ...] = (0, 1)) -> list[float]:
    return [echo for run in runs for index in prompts for echo in getattr(run[index], which)]


def _ms(values: list[float]) -> str:
    return (
        f"median {lib.median(values) * lib.MS:.1f} ms, p95 {lib.percentile(values, 95) * lib.MS:.1f} ms "
        f"({len(values)} keys)"
    )


def report(bare: list[list[Series]], harnez: list[list[Series]]) -> None:
    """Medians and p95 of each kind of key, the first key against the later ones, and the ratios to bare."""
    bare_all = _pooled(bare, "first") + _pooled(bare, "later")
    bare_p95 = lib.percentile(bare_all, 95)
    print(f"  reference: bare Textual app's TextArea, every key: {_ms(bare_all)}")
    print(f"  reference: bare app, the first key of a series: {_ms(_pooled(bare, 'first'))}")
    for prompts, label in (((0,), "first prompt of a process"), ((1,), "second prompt"), ((0, 1), "both")):
        first, later = _pooled(harnez, "first", prompts), _pooled(harnez, "later", prompts)
        gap = lib.median(first) - lib.median(later)
        lib.report(
            f"harnez, {label}: first key after the stream starts",
            _ms(first),
            "≤ later keys + 5 ms",
            gap <= 0.005,
            f"{gap * lib.MS:+.1f} ms vs later keys' median",
        )
        lib.report(
            f"harnez, {label}: later keys while streaming",
            _ms(later),
            "p95 ≤ 1.5× bare",
            lib.percentile(first + later, 95) <= 1.5 * bare_p95,
            f"p95 of every key {lib.percentile(first + later, 95) / bare_p95:.2f}× bare's",
        )
    late = sum(series.after_end for run in harnez for series in run)
    if late:
        print(f"  {late} keys echoed after the answer had ended were left out (use a longer answer)")


if __name__ == "__main__":
    main()
