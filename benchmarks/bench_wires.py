"""Wire overhead: Harnez's time to first delta and deltas/s against a raw httpx stream.

Targets (issue 3): time to first delta ≤ 1.2 × raw httpx; ≥ 20,000 deltas/s parsed.
Both sides read from the same scripted model, run as a separate process.
Run: .venv/bin/python benchmarks/bench_wires.py [--deltas N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from harnez.wires import WIRES, Conversation, Endpoint, TextDelta, UserMessage, WireRequest, open_wire

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
}


@contextmanager
def scripted_server(turn: dict) -> Iterator[str]:
    """A scripted model in its own process, serving `turn` forever; yields its URL."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"loop": True, "turns": [turn]}))
        process = subprocess.Popen(
            [sys.executable, "-m", "harnez.testing.scripted_model", "--script", str(script)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            yield process.stdout.readline().strip().rsplit(" ", 1)[-1]
        finally:
            process.terminate()
            process.wait(10)


def endpoint(url: str, wire: str) -> Endpoint:
    base = url if wire == "anthropic-messages" else url + "/v1"
    return Endpoint("bench", wire, base, "sk-bench", "BENCH_KEY")  # type: ignore[arg-type]


REQUEST = WireRequest("bench-model", Conversation("", (UserMessage("go"),)))


async def raw_first_delta(client: httpx.AsyncClient, url: str, wire: str) -> float:
    """Raw httpx: seconds until the first SSE data line carrying text."""
    body = {
        "model": "bench-model",
        "stream": True,
        "messages": [{"role": "user", "content": "go"}],
        "max_tokens": 64,
    }
    marker = {
        "openai-chat": '"content": "t',
        "openai-responses": "output_text.delta",
        "anthropic-messages": "text_delta",
    }[wire]
    start = time.perf_counter()
    elapsed = None
    async with client.stream("POST", url + PATHS[wire], json=body) as response:
        async for line in response.aiter_lines():
            if elapsed is None and line.startswith("data:") and marker in line:
                elapsed = time.perf_counter() - start
    assert elapsed is not None, f"{wire}: no text delta"
    return elapsed


async def harnez_first_delta(wire_name: str, url: str, wire) -> float:
    start = time.perf_counter()
    elapsed = None
    async for event in wire.stream(REQUEST):
        if elapsed is None and isinstance(event, TextDelta):
            elapsed = time.perf_counter() - start
    assert elapsed is not None, f"{wire_name}: no text delta"
    return elapsed


async def raw_drain(client: httpx.AsyncClient, url: str, wire: str) -> int:
    """Raw httpx reading every line and decoding every data payload: the floor Harnez builds on."""
    count = 0
    async with client.stream(
        "POST", url + PATHS[wire], json={"model": "bench-model", "stream": True}
    ) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:") and line != "data: [DONE]":
                json.loads(line[5:])
                count += 1
    return count


async def harnez_drain(wire) -> int:
    count = 0
    async for event in wire.stream(REQUEST):
        if isinstance(event, TextDelta):
            count += 1
    return count


async def time_to_first_delta(rounds: int) -> None:
    print(f"time to first text delta (median of {rounds}, 5-delta reply):")
    with scripted_server({"reply": [{"text": "tick tock tick tock tick"}]}) as url:
        for name in WIRES:
            wire = open_wire(endpoint(url, name))
            async with httpx.AsyncClient() as client:
                for _ in range(3):  # warm both connections
                    await raw_first_delta(client, url, name)
                    await harnez_first_delta(name, url, wire)
                raw, ours = [], []
                for _ in range(rounds):
                    raw.append(await raw_first_delta(client, url, name))
                    ours.append(await harnez_first_delta(name, url, wire))
            await wire.aclose()
            r, h = statistics.median(raw), statistics.median(ours)
            print(
                f"  {name:20s} raw {r * 1e3:6.2f} ms  harnez {h * 1e3:6.2f} ms  ratio {h / r:4.2f}x  (target <= 1.20x)"
            )


async def throughput(deltas: int, rounds: int) -> None:
    print(f"deltas per second (best of {rounds}, {deltas:,}-delta reply, server in its own process):")
    turn = {"reply": [{"text": ["tok "] * deltas}], "usage": {"input": 1, "output": deltas}}
    with scripted_server(turn) as url:
        for name in WIRES:
            wire = open_wire(endpoint(url, name))
            async with httpx.AsyncClient() as client:
                raw, ours = [], []
                for _ in range(rounds):
                    start = time.perf_counter()
                    frames = await raw_drain(client, url, name)
                    raw.append(deltas / (time.perf_counter() - start))
                    start = time.perf_counter()
                    got = await harnez_drain(wire)
                    ours.append(got / (time.perf_counter() - start))
                    assert got == deltas, f"{name}: {got} deltas of {deltas} ({frames} frames)"
            await wire.aclose()
            r, h = max(raw), max(ours)
            print(
                f"  {name:20s} raw {r:9,.0f}/s  harnez {h:9,.0f}/s  ratio {r / h:4.2f}x slower  (target >= 20,000/s)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--first-delta-rounds", type=int, default=30)
    args = parser.parse_args()
    started = time.perf_counter()
    asyncio.run(time_to_first_delta(args.first_delta_rounds))
    asyncio.run(throughput(args.deltas, args.rounds))
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
