"""Run `harnez` stamping its start-up and first-prompt stages, for `bench_tui_answer.py --trace`.

`python bench_tui_trace.py STAMPS [harnez arguments]` runs the CLI as the `harnez` command would,
after installing an import hook that wraps the functions of `STAGES` (and of
`bench_tui_answer_stages.STAGES`) when their module is first imported, so the process imports
nothing earlier than harnez itself does. Each stage's first moment (`time.perf_counter()`, the
system's monotonic clock, comparable with the benchmark's own) is appended to the file STAMPS as
one JSON line when it happens: the process may be killed at the end.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
import time
from pathlib import Path
from typing import Any


def _stages_module() -> Any:
    """`bench_tui_answer_stages`, imported without what its helpers leave behind: `generate_data`
    puts this repository first on sys.path and imports `harnez.store.migrate` from it, which would
    run this tree's harnez instead of a `--before` tree's on PYTHONPATH, and import it early."""
    path = list(sys.path)
    import bench_tui_answer_stages

    sys.path[:] = path
    for name in [n for n in sys.modules if n == "harnez" or n.startswith("harnez.")]:
        del sys.modules[name]
    return bench_tui_answer_stages


stages = _stages_module()

START_STAGES: list[tuple[str, str, str, str | None, str | None]] = [
    ("harnez.tui.app", "HarnezApp", "on_ready", "first frame (Ready)", None),
    ("harnez.tui.app", "", "_import_server_side", "server side imports", "server side imported"),
    ("harnez.tui.app", "HarnezApp", "_settings_loaded", None, "settings loaded"),
    ("harnez.tui.app", "HarnezApp", "_open", "server open start", "server open"),
    ("harnez.server.server", "Server", "_recover", "recover start", "recovered"),
    ("harnez.tui.app", "HarnezApp", "_first_screen", None, "session attached"),
    ("harnez.tui.app", "HarnezApp", "_warm_up", "warm-up start", "warm-up done"),
    ("harnez.tui.app", "", "_prepare_answers", None, "answers prepared"),
    ("harnez.server.server", "Server", "warm_up", "wire warm-up start", "wire warm-up done"),
]
"""(module, class or '' for a module function, function, stamp on call, stamp on return)."""

STAMPS_FILE: list[Path] = []


def stamp(name: str) -> None:
    """Append the first moment `name` is reached to the stamps file."""
    if name in stages.STAMPS:
        return
    stages.STAMPS[name] = moment = time.perf_counter()
    with STAMPS_FILE[0].open("a", encoding="utf-8") as out:
        out.write(json.dumps([name, moment]) + "\n")


class StampingLoader(importlib.abc.Loader):
    """Loads a module as its own loader does, then wraps the stages it holds."""

    def __init__(self, loader: Any, wraps: list[tuple[str, str, str | None, str | None]]) -> None:
        self.loader, self.wraps = loader, wraps

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        for owner, attribute, before, after in self.wraps:
            target = getattr(module, owner) if owner else module
            if hasattr(target, attribute):
                stages.wrap(target, attribute, before, after)
        if module.__name__ == "harnez.tui.widgets.transcript":
            _stamp_transcript(module.Transcript)


def _stamp_transcript(transcript: Any) -> None:
    """Stamp the first answer mounted in the transcript."""
    apply = transcript.apply

    async def applied(self: Any, event: Any) -> None:
        name = type(event.body).__name__
        await apply(self, event)
        if name == "TextDelta":
            stamp("text-delta mounted")

    transcript.apply = applied


class StampingFinder(importlib.abc.MetaPathFinder):
    """Finds modules with the path finder; those holding stages get a `StampingLoader`."""

    def __init__(self, stages_by_module: dict[str, list[tuple[str, str, str | None, str | None]]]) -> None:
        self.stages = stages_by_module

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.stages:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = StampingLoader(spec.loader, self.stages[name])
        return spec


def install() -> None:
    """Wrap every stage's module when it is imported."""
    by_module: dict[str, list[tuple[str, str, str | None, str | None]]] = {}
    for module, owner, attribute, before, after in START_STAGES + stages.STAGES:
        by_module.setdefault(module, []).append((owner, attribute, before, after))
    by_module.setdefault("harnez.tui.widgets.transcript", [])
    stages.ENTER[0] = 1e-12  # stamps are perf_counter moments, not times after an Enter
    stages.stamp = stamp  # type: ignore[assignment]
    sys.meta_path.insert(0, StampingFinder(by_module))


def main() -> int:
    STAMPS_FILE.append(Path(sys.argv[1]))
    stamp("process start")
    install()
    from harnez.cli import main as harnez

    return harnez(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
