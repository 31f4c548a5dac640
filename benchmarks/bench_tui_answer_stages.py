"""Where Enter → first answer text goes: the stages of the path, timed in the real app, cold and warm.

Each run is a fresh interpreter (so the first prompt pays what a person's first prompt pays: first
imports, first connections) running `HarnezApp` under Textual's `run_test()` (120×40) over the server
the CLI builds (`open_agent_server`: the agent, keyword titles on) on a new database, against the
scripted model in its own process answering at once. Every frame is rendered to terminal sequences
(`bench_tui_lib.hook_frames`). The prompt is sent once the session is attached, then a second one
once the first task has finished.

Each stage is stamped the first time it is reached after Enter, by wrapping the function that marks
it (what is wrapped is listed in STAGES); the report gives, per stage, the median time from Enter
over the runs and the median step from the stage before. A stage a version of the code does not go
through is left out of the report.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_store_lib as lib
import bench_tui_answer as answer
import bench_tui_lib as tui

STAMPS: dict[str, float] = {}
ENTER = [0.0]


def stamp(name: str) -> None:
    """Record the first time `name` is reached after the current Enter."""
    if ENTER[0] and name not in STAMPS:
        STAMPS[name] = time.perf_counter() - ENTER[0]


def wrap(owner: Any, attribute: str, before: str | None, after: str | None) -> None:
    """Stamp `before` when owner.attribute is called and `after` when it returns (awaited if async)."""
    original = getattr(owner, attribute)
    if asyncio.iscoroutinefunction(original):

        @functools.wraps(original)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            if before:
                stamp(before)
            result = await original(*args, **kwargs)
            if after:
                stamp(after)
            return result

    else:

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            if before:
                stamp(before)
            result = original(*args, **kwargs)
            if after:
                stamp(after)
            return result

    setattr(owner, attribute, wrapper)


def optional(module: str, owner: str, attribute: str, before: str | None, after: str | None) -> None:
    """`wrap`, when this version of the code has that function."""
    try:
        found = importlib.import_module(module)
        target = getattr(found, owner) if owner else found
    except (ImportError, AttributeError):
        return
    if hasattr(target, attribute):
        wrap(target, attribute, before, after)


STAGES: list[tuple[str, str, str, str | None, str | None]] = [
    ("harnez.tui.screens.session", "SessionScreen", "on_prompt_input_submitted", "submitted", None),
    ("harnez.server.server", "Server", "submit", "submit", "submit returned"),
    ("harnez.store.sessions", "SessionTable", "insert", None, "session row"),
    ("harnez.store.tasks", "TaskTable", "create", None, "task row"),
    ("harnez.agent.work", "AgentWork", "__call__", "work", None),
    ("harnez.agent.work", "AgentWork", "resolve", None, "model resolved"),
    ("harnez.agents.offer", "TaskAgents", "load", "agents start", "agents loaded"),
    ("harnez.store.delegations", "DelegationTable", "of_child", None, "session's link read"),
    ("harnez.agent.work", "AgentWork", "registry", None, "tools built"),
    ("harnez.agent.offer", "Offer", "of", None, "skills found"),
    ("harnez.agent.work", "", "_system_prompt", "system prompt start", "system prompt"),
    ("harnez.agent.context", "History", "load", None, "history loaded"),
    ("harnez.agent.work", "AgentWork", "_take_prompt", None, "prompt in history"),
    ("harnez.agent.work", "", "open_wire", None, "wire open"),
    ("harnez.wires.http", "HttpWire", "_exchange", "request", None),
    ("harnez.wires.http", "HttpWire", "_events", "response", None),
    ("harnez.titles.policy", "", "keyword_title_async", "title start", "title done"),
    ("harnez.titles.worker", "KeywordWorker", "title", "title start", "title done"),
    (
        "harnez.tui.widgets.blocks",
        "AssistantBlock",
        "start_stream",
        "answer block mounted",
        "answer appended",
    ),
    ("harnez.agent.work", "", "attach_files", None, "files attached"),
    ("harnez.agent.work", "", "restore_grants", None, "grants restored"),
]
"""(module, class or '' for a module function, function, stamp on call, stamp on return)."""


def instrument() -> None:
    """Wrap the functions of STAGES, the bus and the transcript."""
    for module, owner, attribute, before, after in STAGES:
        optional(module, owner, attribute, before, after)
    from harnez import events as ev
    from harnez.agent.turns import ModelTurn
    from harnez.server.bus import EventBus
    from harnez.tui.widgets.transcript import Transcript

    kinds = {ev.UserMessage: "user-message", ev.Started: "started", ev.TextDelta: "text-delta"}
    on_event, publish, apply = ModelTurn._on_event, EventBus.publish, Transcript.apply

    def on_wire_event(self: ModelTurn, event: Any, *args: Any) -> None:
        if type(event).__name__ == "TextDelta":
            stamp("first delta from wire")
        on_event(self, event, *args)

    def published(self: EventBus, events: list[Any]) -> None:
        for event in events:
            name = kinds.get(type(event.body))
            if name:
                stamp(f"{name} on bus")
        publish(self, events)

    async def applied(self: Transcript, event: Any) -> None:
        name = kinds.get(type(event.body))
        if name:
            stamp(f"{name} to transcript")
        await apply(self, event)
        if name:
            stamp(f"{name} mounted")

    ModelTurn._on_event = on_wire_event  # type: ignore[method-assign]
    EventBus.publish = published  # type: ignore[method-assign]
    Transcript.apply = applied  # type: ignore[method-assign]


async def child(url: str, folder: Path) -> dict[str, dict[str, float]]:
    """One app's two prompts, stamped; returns {prompt: {stage: seconds after Enter}}."""
    from harnez.server.factory import open_agent_server
    from harnez.settings import load_settings
    from harnez.tui.app import HarnezApp

    instrument()
    settings = load_settings(folder / "workspace")
    app = HarnezApp(
        lambda: open_agent_server(folder / "harnez.sqlite", settings), folder / "workspace", settings
    )
    painted: dict[str, float] = {}

    def on_frame(moment: float, text: str | None) -> None:
        for word in answer.ANSWERS:
            if ENTER[0] and word in (text or "") and word not in painted:
                painted[word] = moment - ENTER[0]
                stamp("answer painted")

    tui.hook_frames(app, on_frame, with_text=True)
    results: dict[str, dict[str, float]] = {}
    async with app.run_test(size=(tui.COLUMNS, tui.LINES)) as pilot:
        await tui.wait_until(lambda: app.ready)
        for key, prompt, word in zip(("first", "second"), answer.PROMPTS, answer.ANSWERS, strict=True):
            for character in prompt:
                tui.send_key(app, character if character != " " else "space", character)
            await pilot.pause(0.3)
            STAMPS.clear()
            ENTER[0] = tui.send_key(app, "enter")
            await tui.wait_until(lambda w=word: w in painted)  # type: ignore[misc]
            await tui.wait_until(lambda: app.server.running(app.screen.session_id) is None)
            await pilot.pause(0.5)
            ENTER[0] = 0.0
            results[key] = dict(STAMPS)
        await pilot.press("ctrl+q")
    return results


def run_child(url: str, bytecode: Path) -> dict[str, dict[str, float]]:
    """One fresh interpreter's stamps (its bytecode read from, and written to, `bytecode`)."""
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-stages-"))
    home = tui.Home(folder, folder / "harnez.sqlite")
    home.home.mkdir()
    home.workspace.mkdir()
    answer.point_at(home, url)
    env = {**home.env(), "PYTHONPYCACHEPREFIX": str(bytecode)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", url, str(folder)],
        env=env,
        capture_output=True,
        text=True,
        cwd=lib.REPO,
        timeout=120,
    )
    tui.remove_home(home)
    if done.returncode != 0:
        raise RuntimeError(f"the measured app failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(runs: list[dict[str, dict[str, float]]]) -> None:
    """Per prompt: each stage's median time after Enter, and the median step from the stage before."""
    for key in ("first", "second"):
        stamped = [run[key] for run in runs]
        names = sorted(
            {n for s in stamped for n in s}, key=lambda n: lib.median([s[n] for s in stamped if n in s])
        )
        print(f"  {key} prompt ({len(stamped)} runs): stage — median ms after Enter (median step)")
        previous: str | None = None
        for name in names:
            at = lib.median([s[name] for s in stamped if name in s])
            steps = [s[name] - s[previous] for s in stamped if previous and name in s and previous in s]
            step = f"+{lib.median(steps) * lib.MS:.1f}" if steps else ""
            print(f"    {name:<24} {at * lib.MS:7.1f}  {step}")
            previous = name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes (default 7)")
    parser.add_argument("--child", nargs=2, metavar=("URL", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        results = asyncio.run(child(args.child[0], Path(args.child[1])))
        print(json.dumps(results))
        return
    lib.header("Enter → first answer text: where the time goes (stages stamped in the real app)")
    folder = Path(tempfile.mkdtemp(prefix="harnez-bench-model-"))
    model, url = answer.start_model(folder)
    try:
        bytecode = folder / "bytecode"
        run_child(url, bytecode)  # warm-up: the page cache, the bytecode
        runs = [run_child(url, bytecode) for _ in range(args.runs)]
    finally:
        model.kill()
        model.wait()
        tui.remove_home(tui.Home(folder, folder / "x"))
    report(runs)


if __name__ == "__main__":
    main()
