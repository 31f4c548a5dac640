"""`harnez serve` under load: 50 concurrent streaming tasks over loopback HTTP.

Figures: UHP events/s delivered to the clients, p95 latency to the first event (`response.created`)
and to the first text delta, that no stream loses or reorders an event, and how long a discovery
request takes while the 50 tasks run. Reference, measured in the same run: the same 50 tasks driven
in process through `Server.submit` + `Server.subscribe` (the engine without HTTP). The scripted model
and the served process each run in their own process.
Run: .venv/bin/python benchmarks/bench_serve_streams.py [--streams 50] [--words 40] [--delay 0.0] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from bench_store_lib import header, percentile, report

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.settings import Settings

TOKEN = "bench-token"
HARNEZ = Path(sys.executable).with_name("harnez")


@contextmanager
def scripted_model(words: int, delay: float) -> Iterator[str]:
    """A scripted model in its own process answering every request with `words` streamed words."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        turn = {
            "reply": [{"text": [f"w{i} " for i in range(words)]}],
            "usage": {"input": 20, "output": words},
            "delay_per_chunk": delay,
        }
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


def settings_for(model_url: str) -> dict:
    return {
        "providers": {"scripted": {"wire": "openai-chat", "base_url": model_url + "/v1"}},
        "model": "scripted/bench",
        "permissions": {"mode": "accept-edits"},
    }


@contextmanager
def served(model_url: str) -> Iterator[str]:
    """`harnez serve --port 0` in a fresh project; yields its URL."""
    root = Path(tempfile.mkdtemp(prefix="harnez-bench-serve-"))
    (root / "project" / ".harnez").mkdir(parents=True)
    (root / "project" / ".harnez" / "settings.json").write_text(json.dumps(settings_for(model_url)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_")}
    env.update(HARNEZ_HOME=str(root / "home"), HARNEZ_SERVE_TOKEN=TOKEN)
    process = subprocess.Popen(
        [str(HARNEZ), "serve", "--port", "0"],
        cwd=root / "project",
        env=env,
        text=True,
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip().rsplit(" ", 1)[-1]
    finally:
        process.terminate()
        process.wait(15)
        shutil.rmtree(root, ignore_errors=True)


async def one_stream(http: httpx.AsyncClient, number: int, words: int) -> tuple[float, float, int]:
    """(seconds to response.created, seconds to the first delta, events) of one streamed task, checked."""
    start = time.perf_counter()
    first = delta = None
    expected, text, data = 0, "", []
    async with http.stream(
        "POST", "/v1/responses", json={"input": f"task {number}", "stream": True}
    ) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:])
                continue
            if line or not data:
                continue
            event, data = json.loads("".join(data)), []
            first = first or time.perf_counter() - start
            if event["sequence_number"] != expected:
                raise AssertionError(
                    f"stream {number}: event {event['sequence_number']} where {expected} was due"
                )
            expected += 1
            if event["type"] == "response.output_text.delta":
                delta = delta or time.perf_counter() - start
                text += event["delta"]
    if event["type"] != "response.completed" or text != "".join(f"w{i} " for i in range(words)):
        raise AssertionError(f"stream {number} ended {event['type']} with {len(text)} characters of text")
    return first, delta, expected


async def probe_while(http: httpx.AsyncClient, running: asyncio.Task) -> list[float]:
    """Discovery round trips, one after another, until the streams end."""
    times = []
    while not running.done():
        start = time.perf_counter()
        (await http.get("/v1/uhp")).raise_for_status()
        times.append(time.perf_counter() - start)
        await asyncio.sleep(0.02)
    return times


async def over_http(url: str, streams: int, words: int) -> dict:
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120, limits=limits
    ) as http:
        idle = []
        for _ in range(20):
            start = time.perf_counter()
            (await http.get("/v1/uhp")).raise_for_status()
            idle.append(time.perf_counter() - start)
        start = time.perf_counter()
        running = asyncio.ensure_future(asyncio.gather(*(one_stream(http, n, words) for n in range(streams))))
        busy = await probe_while(http, running)
        results = await running
        wall = time.perf_counter() - start
    return {
        "first": [r[0] for r in results],
        "delta": [r[1] for r in results],
        "events": sum(r[2] for r in results),
        "wall": wall,
        "idle": idle,
        "busy": busy,
    }


async def in_process(model_url: str, streams: int) -> dict:
    """The reference: the same tasks through the engine's own API, no HTTP."""
    root = Path(tempfile.mkdtemp(prefix="harnez-bench-engine-"))
    settings = Settings(**settings_for(model_url))
    server = await Server.open(root / "harnez.sqlite", settings, AgentWork(settings, approve="deny"))

    async def one(number: int) -> tuple[float, float, int]:
        folder = root / f"s{number}"
        folder.mkdir()
        session = server.create_session(folder, "scripted/bench").id
        start = time.perf_counter()
        first = delta = None
        count = 0
        events = server.subscribe(session)
        waiting = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0)
        task = await server.submit(session, f"task {number}")
        while True:
            event = await waiting
            count += 1
            first = first or time.perf_counter() - start
            if event.kind == "text-delta":
                delta = delta or time.perf_counter() - start
            if event.kind == "finished" and event.task == task:
                break
            waiting = asyncio.ensure_future(anext(events))
        await events.aclose()
        return first, delta, count

    try:
        start = time.perf_counter()
        results = await asyncio.gather(*(one(n) for n in range(streams)))
        wall = time.perf_counter() - start
    finally:
        await server.close()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "first": [r[0] for r in results],
        "delta": [r[1] for r in results],
        "events": sum(r[2] for r in results),
        "wall": wall,
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--words", type=int, default=40, help="streamed words per answer")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between the model's chunks")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the whole load, the best reported")
    args = parser.parse_args()
    header(f"harnez serve: {args.streams} concurrent streams, {args.words} words each")
    with scripted_model(args.words, args.delay) as model_url:
        engine = min(
            [await in_process(model_url, args.streams) for _ in range(args.rounds)], key=lambda r: r["wall"]
        )
        with served(model_url) as url:
            http = min(
                [await over_http(url, args.streams, args.words) for _ in range(args.rounds)],
                key=lambda r: r["wall"],
            )
    rate, engine_rate = http["events"] / http["wall"], engine["events"] / engine["wall"]
    print(
        f"  over HTTP: {http['events']} UHP events in {http['wall']:.2f} s; in process: {engine['events']} "
        f"Harnez events in {engine['wall']:.2f} s"
    )
    report(
        "UHP events/s delivered, 50 streams",
        f"{rate:,.0f}/s",
        "no event lost or reordered (checked)",
        True,
        f"{rate / engine_rate:.2f}x the engine's events/s in process ({engine_rate:,.0f}/s); tasks/s "
        f"{args.streams / http['wall']:.1f} vs {args.streams / engine['wall']:.1f}",
    )
    for key, label in (("first", "POST → response.created"), ("delta", "POST → first text delta")):
        p95, ref = percentile(http[key], 95), percentile(engine[key], 95)
        report(
            f"{label}, p95",
            f"{ms(p95)} (p50 {ms(percentile(http[key], 50))})",
            "—",
            True,
            f"{p95 / ref:.2f}x in process (p95 {ms(ref)})",
        )
    busy, idle = percentile(http["busy"], 95), percentile(http["idle"], 95)
    report(
        "GET /v1/uhp while the streams run, p95",
        f"{ms(busy)} over {len(http['busy'])} requests",
        "stays responsive",
        busy < 1.0,
        f"{busy / idle:.1f}x idle (p95 {idle * 1000:.1f} ms)",
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    asyncio.run(main())
