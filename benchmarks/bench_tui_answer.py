"""Benchmark Enter → first answer text on screen in `harnez`, against a bare Textual app doing the same.

Each run launches a fresh process with a 120×40 pty as its terminal and reads what it paints (escape
sequences removed). The model is the scripted model in its own process (`python -m
harnez.testing.scripted_model`), answering at once with one short text turn per prompt, over real
loopback HTTP; harnez runs with its default settings otherwise (keyword titles on). Four kinds of
run alternate, so load changes on the shared machine hit them alike:

- `bare`: a bare Textual app with an Input; Enter mounts a Static with the answer's text. The
  reference: the same screen update with no server, no store and no model;
- `ready`: harnez, waiting until the session is attached ("idle · mode:"), then a prompt is typed
  and sent; then, once its task has finished, a second prompt (SPEC §10: ≤ 100 ms for a session's
  first prompt after start-up, ≤ 40 ms for later prompts);
- `early`: harnez, the prompt typed and sent as soon as the first frame shows (the server still
  opening): Enter → answer, and launch → answer (issue #17 point 2: no extra wait for a prompt
  sent at once);
- `typed`: harnez, the prompt typed key by key from the first frame at a fast typist's pace (one
  key every `--key-gap` ms, 80 by default: 150 words a minute) and sent as soon as its last key is
  typed, as a person starting to type at once would (issue #17 point 2's "the server side opens
  while the person types"): Enter → answer, to compare with the first prompt of `ready` runs;
- `atonce`: harnez, the prompt typed and sent right after launch, before any frame (while Python
  imports; its Enter reaches the terminal before Textual sets it raw): launch → answer. Only this
  tree's code: before d92c6a6 such keys were dropped and the run would wait for ever.

With `--before DIR` (e.g. `git archive <commit> | tar -x -C DIR`), `ready` and `early` runs of the
harnez code in DIR (put first on PYTHONPATH) alternate with the others, for a before/after figure in
one run. With `--trace`, harnez runs under `bench_tui_trace.py` and the stages of its start-up and
first prompt are reported (after launch, and after the first Enter).

Time is taken from the write of the Enter key to the first output holding the answer's first word.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui

FIRST = "mode:"
READY = "idle · mode:"
ANSWERS = ("Quokkas", "Pangolins")
"""The first word of the scripted answer to the first and to the second prompt of every run."""
PROMPTS = ("Say something about quokkas.", "And pangolins?")
TRACER = Path(__file__).with_name("bench_tui_trace.py")

BARE_INPUT_APP = """
from textual.app import App
from textual.widgets import Input, Static

class Bare(App):
    def compose(self):
        yield Static("bare textual app ready")
        yield Input()

    def on_input_submitted(self, message):
        answers = {answers!r}
        self.mount(Static(answers[len(self.query(".answer"))] + " answer text", classes="answer"))
        message.input.value = ""

Bare().run()
"""


def scripted_answers(wait: float = 0.0) -> dict:
    """The looping script: the two answers, in order, round and round (each run sends two prompts);
    the model waits `wait` seconds before each chunk of them."""
    turns = [
        {
            "reply": [{"text": f"{word} are the answer here, and a few more words follow them."}],
            "delay_per_chunk": wait,
        }
        for word in ANSWERS
    ]
    return {"loop": True, "turns": turns}


def start_model(folder: Path, answers: dict | None = None) -> tuple[subprocess.Popen, str]:
    """The scripted model in its own process, answering `answers` (default: the two answers of this
    benchmark); (process, its base URL)."""
    script = folder / "answers.json"
    script.write_text(json.dumps(answers or scripted_answers()), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "harnez.testing.scripted_model", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=lib.REPO,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"the scripted model did not start: {line!r}")
    return process, line.rsplit(" ", 1)[-1].strip()


def point_at(home: tui.Home, url: str) -> None:
    """Make the home's settings use the scripted model."""
    settings = {"providers": {"local": {"wire": "openai-chat", "base_url": f"{url}/v1"}}, "model": "local/x"}
    (home.home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def send(process: tui.PtyProcess, prompt: str, answer: str, echo: bool = True) -> tuple[float, float, int]:
    """Type `prompt` (waiting for its echo when `echo`), press Enter; (the moment Enter was written,
    seconds until `answer` shows, where in the output it showed: the task's end is looked for from
    there, since the status may go idle in the same read as the answer's first words)."""
    tui.write(process, prompt.encode())
    if echo:
        process.wait_for([prompt])
    mark = process.mark()
    sent = tui.write(process, b"\r")
    shown = process.wait_for_after(mark, answer) - sent
    return sent, shown, process.found_after(mark, answer)


def type_keys(process: tui.PtyProcess, text: str, gap: float) -> None:
    """Type `text` one key at a time, `gap` seconds apart (from the first key's write)."""
    start = time.perf_counter()
    for index, key in enumerate(text):
        pause = start + index * gap - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        tui.write(process, key.encode())


def one_run(
    kind: str,
    home: tui.Home,
    bare_script: str,
    trace: Path | None = None,
    before: Path | None = None,
    key_gap: float = 0.080,
) -> dict[str, float]:
    """The figures of one process: Enter → answer for each prompt sent (and launch → answer); with
    `trace`, harnez runs under `bench_tui_trace.py` and the stages it stamped are added, as seconds
    after the first Enter (`stage:NAME`) and after launch (`launch:NAME`). A kind ending in
    `@before` runs the code in `before`."""
    if kind == "bare":
        process = tui.launch([str(tui.PYTHON), bare_script], home.env(), home.workspace)
        process.wait_for(["bare textual app ready"])
        figures = {"first": send(process, PROMPTS[0], ANSWERS[0])[1]}
        figures["second"] = send(process, PROMPTS[1], ANSWERS[1])[1]
        process.stop()
        return figures
    argv = [str(tui.HARNEZ)] if trace is None else [str(tui.PYTHON), str(TRACER), str(trace)]
    env = home.env()
    if kind.endswith("@before") and before is not None:
        env["PYTHONPATH"] = str(before.resolve())
    kind = kind.removesuffix("@before")
    process = tui.launch(argv, env, home.workspace)
    try:
        enter, figures = two_prompts(process, kind, key_gap)
    finally:
        process.stop()  # also when a wait timed out: a harnez left without its terminal kept running
    if process.process.returncode != 0:
        raise RuntimeError(f"harnez exited with {process.process.returncode}: {process.output[-400:]!r}")
    if trace is not None:
        figures.update(traced(trace, process.started, enter))
    return figures


def two_prompts(process: tui.PtyProcess, kind: str, key_gap: float) -> tuple[float, dict[str, float]]:
    """Send the two prompts to a harnez of `kind` (`ready`, `early`, `typed` or `atonce`; `typed`
    types the first prompt's keys `key_gap` seconds apart); (the first Enter's moment, the figures)."""
    if kind != "atonce":
        process.wait_for([READY] if kind == "ready" else [FIRST])
    figures: dict[str, float] = {}
    if kind == "typed":
        typing = time.perf_counter()
        type_keys(process, PROMPTS[0], key_gap)
        time.sleep(key_gap)  # the gap before Enter, as between any two keys
        figures["typing"] = time.perf_counter() - typing
        enter, figures["first"], shown = send(process, "", ANSWERS[0], echo=False)
    else:
        enter, figures["first"], shown = send(process, PROMPTS[0], ANSWERS[0], echo=kind == "ready")
    figures["launch"] = time.perf_counter() - process.started
    process.wait_for_after(shown, READY)
    _, figures["second"], shown = send(process, PROMPTS[1], ANSWERS[1])
    process.wait_for_after(shown, READY)
    return enter, figures


def traced(stamps: Path, launched: float, enter: float) -> dict[str, float]:
    """The stamps `bench_tui_trace.py` wrote (then removed), after launch and after the first Enter."""
    figures: dict[str, float] = {}
    for line in stamps.read_text(encoding="utf-8").splitlines():
        name, moment = json.loads(line)
        figures[f"launch:{name}"] = moment - launched
        figures[f"stage:{name}"] = moment - enter
    stamps.unlink()
    return figures


def main() -> None:
    """Alternate bare / ready / early runs and report medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each kind (default 10)")
    parser.add_argument("--quick", action="store_true", help="4 runs of each kind")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="run harnez under bench_tui_trace.py and report its start-up and first prompt's stages",
    )
    parser.add_argument("--before", type=Path, metavar="DIR", help="also run the harnez code in DIR")
    parser.add_argument(
        "--model-wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the scripted model waits this long before each chunk (a real model's time to its first "
        "words; the bare app does not wait, so compare harnez with --before, not with bare)",
    )
    parser.add_argument(
        "--key-gap",
        type=float,
        default=80.0,
        metavar="MS",
        help="milliseconds between two keys of the typed runs' first prompt (default 80: 150 words a minute)",
    )
    args = parser.parse_args()
    key_gap = args.key_gap / lib.MS
    runs = 4 if args.quick else args.runs
    lib.header("Enter → first answer text on screen (SPEC §10: ≤ 100 ms first prompt, ≤ 40 ms later ones)")
    answering = f"waiting {args.model_wait:g} s before each chunk" if args.model_wait else "answering at once"
    print(
        f"  pty {tui.COLUMNS}×{tui.LINES}; {runs} runs of each kind, alternating; scripted model {answering}"
    )
    home = tui.make_home()
    model, url = start_model(home.root, scripted_answers(args.model_wait))
    point_at(home, url)
    bare_script = home.root / "bare_input_app.py"
    bare_script.write_text(BARE_INPUT_APP.replace("{answers!r}", repr(ANSWERS)), encoding="utf-8")
    kinds: tuple[str, ...] = ("bare", "ready", "early", "typed", "atonce")
    if args.before:
        kinds += ("ready@before", "early@before")
    figures: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    trace = home.root / "stamps.jsonl" if args.trace else None
    try:
        for kind in kinds:  # warm-up: page cache, bytecode, the database's creation
            one_run(kind, home, str(bare_script), trace, args.before, key_gap)
        for index in range(runs):
            shift = index % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                figures[kind].append(one_run(kind, home, str(bare_script), trace, args.before, key_gap))
    finally:
        model.kill()
        model.wait()
        tui.remove_home(home)
    report(figures)
    if args.before:
        report(figures, "@before")
    if trace is not None:
        report_stages(figures, "@before" if args.before else "")


def _median(runs: list[dict[str, float]], key: str) -> float:
    return lib.median([run[key] for run in runs])


def report(figures: dict[str, list[dict[str, float]]], code: str = "") -> None:
    """Medians of each figure and their ratios to the bare app's, for the code tested (`code`:
    "" this tree's, "@before" the --before tree's)."""
    bare_first, bare_second = _median(figures["bare"], "first"), _median(figures["bare"], "second")
    if code:
        print("  the --before code:")
    else:
        print(
            f"  reference: bare Textual app, Enter → text on screen median {bare_first * lib.MS:.0f} ms "
            f"(first), {bare_second * lib.MS:.0f} ms (second)"
        )
    for key, label, target, bare in (
        ("first", "first prompt after start-up (session attached)", 0.100, bare_first),
        ("second", "second prompt", 0.040, bare_second),
    ):
        values = [run[key] for run in figures["ready" + code]]
        median = lib.median(values)
        lib.report(
            f"harnez, {label}, Enter → answer",
            f"median {median * lib.MS:.0f} ms, p90 {lib.percentile(values, 90) * lib.MS:.0f} ms",
            f"≤ {target * lib.MS:.0f} ms",
            median <= target,
            f"{median / bare:.1f}× bare",
        )
    early = [run["first"] for run in figures["early" + code]]
    lib.report(
        "harnez, prompt sent at the first frame, Enter → answer",
        f"median {lib.median(early) * lib.MS:.0f} ms, p90 {lib.percentile(early, 90) * lib.MS:.0f} ms",
        "≤ 100 ms",
        lib.median(early) <= 0.100,
        f"{lib.median(early) / bare_first:.1f}× bare",
    )
    launch = [run["launch"] for run in figures["early" + code]]
    print(
        f"  harnez, prompt sent at the first frame, launch → answer: median "
        f"{lib.median(launch) * lib.MS:.0f} ms (ready runs: "
        f"{_median(figures['ready' + code], 'launch') * lib.MS:.0f} ms, typing waited for the session)"
    )
    if not code:
        typed = [run["first"] for run in figures["typed"]]
        typing = _median(figures["typed"], "typing")
        lib.report(
            f"harnez, prompt typed from the first frame ({len(PROMPTS[0])} keys in {typing * lib.MS:.0f} ms), "
            "Enter → answer",
            f"median {lib.median(typed) * lib.MS:.0f} ms, p90 {lib.percentile(typed, 90) * lib.MS:.0f} ms",
            "≤ 100 ms",
            lib.median(typed) <= 0.100,
            f"{lib.median(typed) / bare_first:.1f}× bare",
        )
        print(
            "  harnez, prompt typed and sent at launch (before the first frame), launch → answer: median "
            f"{_median(figures['atonce'], 'launch') * lib.MS:.0f} ms"
        )


def report_stages(figures: dict[str, list[dict[str, float]]], before: str = "") -> None:
    """Per harnez kind: each stamped stage's median moment after launch and after the first Enter."""
    for kind in ("ready", "early", "ready" + before, "early" + before) if before else ("ready", "early"):
        runs = figures[kind]
        names = {key.split(":", 1)[1] for run in runs for key in run if key.startswith("launch:")}
        rows = sorted((_median([r for r in runs if f"launch:{n}" in r], f"launch:{n}"), n) for n in names)
        print(f"  {kind} runs, stages (median ms after launch / after the first Enter):")
        for at, name in rows:
            after_enter = _median([r for r in runs if f"stage:{name}" in r], f"stage:{name}")
            print(f"    {name:<28} {at * lib.MS:7.1f}  {after_enter * lib.MS:+8.1f}")


if __name__ == "__main__":
    main()
