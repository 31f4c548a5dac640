"""Benchmark how long `harnez run --json` goes on after its task's `finished` event (SPEC §4, §8).

Each run is a session's first prompt in a fresh workspace, answered at once by the scripted model
over loopback, so it is the run that names a session. The figure is the time from reading the
`finished` line on the process's stdout to the process's exit (what a script calling `harnez run`
waits beyond its task), and the whole run's wall time; median and worst over `--runs`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel

HARNEZ = Path(sys.executable).with_name("harnez")
PROMPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group commit"


def workspace(root: Path, model: ScriptedModel, source: str) -> Path:
    """A project folder whose settings point a provider at the scripted model."""
    path = root / f"project-{len(list(root.iterdir()))}"
    (path / ".harnez").mkdir(parents=True)
    settings = {
        "providers": {
            "chat": {"wire": "openai-chat", "base_url": model.base_url("openai-chat")},
            "titles": {"wire": "openai-responses", "base_url": model.base_url("openai-responses")},
        },
        "model": "chat/scripted-model",
        "session": {"title": {"generated": False} if source == "off" else {"source": source}},
    }
    (path / ".harnez" / "settings.json").write_text(json.dumps(settings))
    return path


def one_run(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds from the `finished` line to exit, seconds of the whole run)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(HARNEZ), "run", "--json", "--input", PROMPT],
        cwd=path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    finished_at = None
    for line in process.stdout:
        if json.loads(line)["kind"] == "finished":
            finished_at = time.perf_counter()
    process.wait()
    end = time.perf_counter()
    assert finished_at is not None and process.returncode == 0
    return end - finished_at, end - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--source",
        default="keywords/yake",
        help="session.title.source of the runs (`model/titles/M`: a model title over the scripted model); `off`: no naming",
    )
    parser.add_argument(
        "--title-delay", type=float, default=0.0, help="seconds the scripted model takes over a model title"
    )
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_")}
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel() as model:
        env["HARNEZ_HOME"] = str(Path(tmp) / "home")
        root = Path(tmp) / "projects"
        root.mkdir()
        tails, walls = [], []
        for _ in range(args.runs):
            model.add(
                {"path": "/chat/completions", "reply": [{"text": "done"}]},
                {
                    "path": "/responses",
                    "reply": [{"text": "A Model Title"}],
                    "delay_per_chunk": args.title_delay,
                },
            )
            tail, wall = one_run(workspace(root, model, args.source), env)
            tails.append(tail)
            walls.append(wall)
    ms = [t * 1000 for t in tails]
    print(f"source {args.source}, {args.runs} runs, model titles taking {args.title_delay:g} s")
    print(f"finished → exit: median {statistics.median(ms):.0f} ms, worst {max(ms):.0f} ms")
    print(
        f"whole run:       median {statistics.median(walls) * 1000:.0f} ms, worst {max(walls) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
