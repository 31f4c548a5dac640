"""Benchmark what the rate card costs: start-up must not pay for it (it is imported lazily), and the
first lookup, which loads it, runs once per process in a thread after a call's answer.

Each figure is the median of `--runs` fresh interpreters: `import harnez.cli` (start-up, the
reference), the same with `genai_prices` imported too (what an eager import would cost), and the
first `prices_for` of a hosted model (the card loaded and searched), against that start-up.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBES = {
    "start-up (import harnez.cli)": "import harnez.cli",
    "start-up with the card imported eagerly": "import harnez.cli, genai_prices",
    "first lookup of a hosted model (card loaded)": (
        "import harnez.cli; from harnez.pricing import prices_for; "
        "prices_for({}, 'anthropic', 'claude-sonnet-4-5', 'https://api.anthropic.com')"
    ),
}
TIMER = "import time, sys; t = time.perf_counter(); {code}; print(time.perf_counter() - t); print({check})"


def measure(code: str, runs: int) -> tuple[float, bool]:
    """Median seconds of `code` in fresh interpreters, and whether start-up alone left the card unloaded."""
    times, unloaded = [], True
    for _ in range(runs):
        probe = TIMER.format(code=code, check="'genai_prices' not in sys.modules")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        seconds, card_absent = out.split()
        times.append(float(seconds))
        unloaded = unloaded and card_absent == "True"
    return statistics.median(times), unloaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    results = {name: measure(code, args.runs) for name, code in PROBES.items()}
    reference = results["start-up (import harnez.cli)"][0]
    for name, (seconds, _) in results.items():
        print(f"{name}: median {seconds * 1000:.0f} ms ({seconds / reference:.2f}× start-up)")
    startup_clean = results["start-up (import harnez.cli)"][1]
    print(f"start-up leaves genai_prices unimported: {'pass' if startup_clean else 'FAIL'}")


if __name__ == "__main__":
    main()
