"""Benchmark keyword titles: YAKE import time, title latency, its ratio to bare YAKE, loop stalls."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harnez.titles import keywords  # noqa: E402  (after the path set-up; does not import yake)
from harnez.titles.worker import KeywordWorker  # noqa: E402

TABLE = REPO / "tests" / "unit" / "titles" / "expected_titles.json"
ROUNDS = 20
TICK = 0.001


def load_prompts() -> list[str]:
    """The prompts of the reviewed title table."""
    return [case["prompt"] for case in json.loads(TABLE.read_text(encoding="utf-8"))]


def import_time_in_fresh_process() -> float:
    """Seconds to `import yake` in a new interpreter (median of three)."""
    code = "import time; t = time.perf_counter(); import yake; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(3)
    ]
    return statistics.median(runs)


async def max_loop_stall(prompts: list[str], title: Callable[[str], Awaitable[str]]) -> tuple[float, float]:
    """Run every title through `title` (in a thread, or the worker process) under a 1 ms ticker.

    Returns the worst lateness of the ticker and the wall time of the titling, in seconds.
    """
    done = asyncio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while not done.is_set():
            expected = loop.time() + TICK
            await asyncio.sleep(TICK)
            worst = max(worst, loop.time() - expected)

    tick_task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    start = time.perf_counter()
    for prompt in prompts:
        await title(prompt)
    elapsed = time.perf_counter() - start
    done.set()
    await tick_task
    return worst, elapsed


async def worker_loop_stall(prompts: list[str]) -> tuple[float, float]:
    """`max_loop_stall` through a fresh keyword worker process (its start and YAKE's import included)."""
    worker = KeywordWorker()
    try:
        return await max_loop_stall(prompts, worker.title)
    finally:
        await worker.close()


def per_prompt_median(function, prompts: list[str]) -> list[float]:
    """The median over ROUNDS calls of function(prompt), for each prompt, in seconds."""
    medians = []
    for prompt in prompts:
        times = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            function(prompt)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return medians


async def server_title_latency(prompts: list[str], rounds: int = 3) -> list[float]:
    """Seconds from `Server.submit` of a first prompt to its keyword title stored (and its event committed)."""
    import tempfile

    from harnez.server import Server, TaskOutcome

    async def work(run: object) -> TaskOutcome:
        return TaskOutcome("completed", 1)

    latencies = []
    with tempfile.TemporaryDirectory() as folder:
        server = await Server.open(Path(folder) / "bench.sqlite", work=work)
        for _ in range(rounds):
            for prompt in prompts:
                draft = server.create_session(Path(folder))
                start = time.perf_counter()
                await server.submit(draft.id, prompt)
                await server.titles.wait_idle()
                latencies.append(time.perf_counter() - start)
        await server.close()
    return latencies


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def main() -> None:
    """Print the four figures of SPEC §10's title row."""
    prompts = load_prompts()
    assert "yake" not in sys.modules, "importing harnez.titles must not import yake"
    worker_stall, worker_wall = asyncio.run(worker_loop_stall(prompts))
    stall, cold_wall = asyncio.run(max_loop_stall(prompts, keywords.keyword_title_async))
    warm_stall, warm_wall = asyncio.run(max_loop_stall(prompts, keywords.keyword_title_async))
    import yake

    reference = yake.KeywordExtractor(lan="en", n=3, dedup_lim=0.9, top=20)
    titles = per_prompt_median(keywords.keyword_title, prompts)
    bare = per_prompt_median(reference.extract_keywords, prompts)
    ms = 1000
    print(f"prompts: {len(prompts)}, {ROUNDS} rounds each")
    print(f"(a) yake import, fresh process: {import_time_in_fresh_process() * ms:.0f} ms")
    print(
        f"(b) title latency after import: median {statistics.median(titles) * ms:.2f} ms, "
        f"p95 {p95(titles) * ms:.2f} ms, max {max(titles) * ms:.2f} ms (target ≤ 5 ms)"
    )
    print(
        f"(c) bare yake extract_keywords: median {statistics.median(bare) * ms:.2f} ms, "
        f"p95 {p95(bare) * ms:.2f} ms; title/bare ratio: median "
        f"{statistics.median(titles) / statistics.median(bare):.2f}, "
        f"p95 {p95(titles) / p95(bare):.2f}"
    )
    print(
        f"(d) max event-loop stall while titling every prompt with yake cold "
        f"({cold_wall * ms:.0f} ms of titling incl. the import): {stall * ms:.1f} ms "
        f"(1 ms ticker); yake warm ({warm_wall * ms:.0f} ms of titling): {warm_stall * ms:.1f} ms"
    )
    print(
        f"(f) the same through the server's worker process, started cold ({worker_wall * ms:.0f} ms of "
        f"titling): {worker_stall * ms:.1f} ms, {worker_stall / stall:.2f}× the thread's cold stall"
    )
    served = asyncio.run(server_title_latency(prompts))
    print(
        f"(e) first prompt to stored keyword title through the real Server (temp database, "
        f"{len(served)} sessions): median {statistics.median(served) * ms:.2f} ms, p95 {p95(served) * ms:.2f} ms"
    )


if __name__ == "__main__":
    main()
