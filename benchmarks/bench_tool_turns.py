"""Benchmark a tool-using task's turns: `harnez run` through many tool calls, against raw requests.

The scripted model (its own process, real loopback HTTP) answers each request of a task with one
`list` tool call, `--turns` times, then with a short text. Each run is a fresh `harnez run --json
--approve allow` process in a new workspace; its JSON Lines events give:

- the time per turn: from the first `turn-started` to `finished`, over the turns;
- the gap between a tool's result and the next turn: each `tool-completed` to the following
  `turn-started` (what the task writes and reads between a turn's end and the next request: the
  tool's ledger row, the call's and the result's context records, the next request's history).

Reference, in the same run: the same number of sequential streamed requests to the same model
with a bare httpx client (the model's and the HTTP stack's own cost per turn). With `--before DIR`
(`git archive <commit> | tar -x -C DIR`), runs of the code in DIR alternate with the others.
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

import bench_store_lib as lib
import bench_tui_answer as answer
import httpx


def script(turns: int) -> dict:
    """`turns` tool calls, then a text answer; round and round (every run takes the same ones)."""
    call = {"reply": [{"tool_call": {"name": "list", "arguments": {"path": "."}}}]}
    return {"loop": True, "turns": [call] * turns + [{"reply": [{"text": "Done listing."}]}]}


def harnez_run(folder: Path, url: str, index: int, before: Path | None) -> list[dict]:
    """One `harnez run` in a new workspace; its events."""
    workspace = folder / f"w{index}"
    (workspace / ".harnez").mkdir(parents=True)
    settings = {"providers": {"local": {"wire": "openai-chat", "base_url": f"{url}/v1"}}, "model": "local/x"}
    (workspace / ".harnez" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {**os.environ, "HARNEZ_HOME": str(folder / "home")}
    if before is not None:
        env["PYTHONPATH"] = str(before.resolve())
    done = subprocess.run(
        [sys.executable, "-m", "harnez", "run", "--json", "--approve", "allow", "list the folder"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"harnez run failed ({done.returncode}): {done.stderr[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def figures(events: list[dict]) -> tuple[float, list[float]]:
    """(seconds per turn, the gaps from each tool's result to the next turn's start)."""
    starts = [e["time"] for e in events if e["kind"] == "turn-started"]
    end = next(e["time"] for e in events if e["kind"] == "finished")
    gaps, last_result = [], None
    for event in events:
        if event["kind"] == "tool-completed":
            last_result = event["time"]
        elif event["kind"] == "turn-started" and last_result is not None:
            gaps.append(event["time"] - last_result)
            last_result = None
    return (end - starts[0]) / len(starts), gaps


def raw_turns(url: str, turns: int) -> float:
    """Seconds per request: `turns + 1` sequential streamed requests with a bare httpx client."""
    body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "list the folder"}]}
    with httpx.Client() as client:
        started = time.perf_counter()
        for _ in range(turns + 1):
            with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                for _ in response.iter_bytes():
                    pass
        return (time.perf_counter() - started) / (turns + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="tool turns per task (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind (default 5)")
    parser.add_argument("--before", type=Path, metavar="DIR", help="also run the harnez code in DIR")
    args = parser.parse_args()
    lib.header(f"A tool-using task's turns: {args.turns} `list` calls and an answer, `harnez run --json`")
    kinds = ["now", "before"] if args.before else ["now"]
    per_turn: dict[str, list[float]] = {k: [] for k in kinds}
    gaps: dict[str, list[float]] = {k: [] for k in kinds}
    raw: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model, url = answer.start_model(folder, script(args.turns))
        count = 0
        try:
            for index in range(args.runs + 1):  # the first round warms caches and is not counted
                raw_figure = raw_turns(url, args.turns)
                for kind in kinds if index % 2 == 0 else kinds[::-1]:
                    count += 1
                    turn, found = figures(harnez_run(folder, url, count, _code(kind, args.before)))
                    if index:
                        per_turn[kind].append(turn)
                        gaps[kind] += found
                if index:
                    raw.append(raw_figure)
        finally:
            model.kill()
    bare = statistics.median(raw)
    print(f"  reference: a bare httpx client, one streamed request: median {bare * lib.MS:.1f} ms")
    for kind in kinds:
        label = "harnez" if kind == "now" else "the --before code"
        turn = statistics.median(per_turn[kind])
        print(
            f"  {label}: per turn median {turn * lib.MS:.1f} ms ({turn / bare:.1f}× the bare request); "
            f"tool result → next turn median {statistics.median(gaps[kind]) * lib.MS:.1f} ms, "
            f"p90 {lib.percentile(gaps[kind], 90) * lib.MS:.1f} ms"
        )


def _code(kind: str, before: Path | None) -> Path | None:
    return before if kind == "before" else None


if __name__ == "__main__":
    main()
