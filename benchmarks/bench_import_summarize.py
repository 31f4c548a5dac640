"""Benchmark `summarize` of a 500 MB Codex rollout: throughput on one core and peak memory.

The rollout is generated here (benchmarks/.data/, git-ignored) from the lines of a real Codex 0.66
rollout in the importer fixtures: its turns repeated with fresh call ids and running token totals,
so every `token_count` is a model call as in a real file. Each measurement runs in its own process;
peak RSS comes from `resource.getrusage`. The reference, measured in the same run, is the parse
floor: the same file read line by line and parsed, nothing else.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / ".data"
TEMPLATE = (
    REPO.parent / "shared" / "fixtures" / "importers" / "codex" / "agtrace-0.66.0" / "codex_session.jsonl"
)
TARGET_MB_S = 50.0
TARGET_RSS_MB = 150.0

MEASURE = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
mode, path = sys.argv[1], Path(sys.argv[2])
started, cpu = time.perf_counter(), time.process_time()
if mode == "summarize":
    from harnez.importers.base import file_ref
    from harnez.importers.codex import CodexReader
    [summary] = CodexReader().summarize(file_ref("codex", path))
    facts = {k: summary.to_json()[k] for k in ("model_calls", "tool_calls", "user_messages")}
else:
    import orjson
    with open(path, "rb") as handle:
        facts = {"lines": sum(1 for line in handle if orjson.loads(line) is not None)}
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "rss_mb": rss, **facts}))
"""


def generate(path: Path, size: int) -> None:
    """A rollout of about `size` bytes built from the template's turns."""
    lines = [json.loads(line) for line in TEMPLATE.read_text(encoding="utf-8").splitlines()]
    meta, body = (
        lines[0],
        [(record, _advances(record, lines[: i + 1])) for i, record in enumerate(lines) if i],
    )
    total = {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_output_tokens": 0,
        "total_tokens": 0,
    }
    written, turn = 0, 0
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(json.dumps(meta) + "\n")
        while written < size:
            turn += 1
            for record, advances in body:
                written += out.write(json.dumps(_renumbered(record, turn, total, advances)) + "\n")
    tmp.rename(path)


def _advances(record: dict, upto: list[dict]) -> bool:
    """Whether a template token count is a model call (its total differs from the previous count's)."""
    info = (
        (record.get("payload") or {}).get("info")
        if (record.get("payload") or {}).get("type") == "token_count"
        else None
    )
    if not isinstance(info, dict):
        return False
    earlier = [
        r["payload"]["info"]
        for r in upto[:-1]
        if (r.get("payload") or {}).get("type") == "token_count"
        and isinstance(r["payload"].get("info"), dict)
    ]
    return not earlier or earlier[-1]["total_token_usage"] != info["total_token_usage"]


def _renumbered(record: dict, turn: int, total: dict, advances: bool) -> dict:
    """A template record with its call id made unique and its running token total advanced."""
    payload = record.get("payload") or {}
    if "call_id" in payload:
        record = {**record, "payload": {**payload, "call_id": f"{payload['call_id']}-{turn}"}}
    info = payload.get("info") if payload.get("type") == "token_count" else None
    if isinstance(info, dict):
        if advances:
            for key in total:
                total[key] += info["last_token_usage"].get(key, 0)
        record = {**record, "payload": {**payload, "info": {**info, "total_token_usage": dict(total)}}}
    return record


def measure(mode: str, path: Path) -> dict:
    shown = subprocess.run(
        [sys.executable, "-c", MEASURE, mode, str(path), str(REPO)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(shown.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=500)
    parser.add_argument("--force", action="store_true", help="generate the rollout again")
    args = parser.parse_args()
    if not TEMPLATE.is_file():
        sys.exit(f"the template rollout is missing: {TEMPLATE} (../shared/fixtures/importers)")
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"codex-rollout-{args.megabytes}mb.jsonl"
    if args.force or not path.is_file():
        began = time.perf_counter()
        generate(path, args.megabytes * 1_000_000)
        print(f"generated {path.name} in {time.perf_counter() - began:.1f} s")
    size_mb = path.stat().st_size / 1e6
    floor = measure("parse", path)
    result = measure("summarize", path)
    cpu_rate, wall_rate, floor_rate = (
        size_mb / result["cpu"],
        size_mb / result["wall"],
        size_mb / floor["cpu"],
    )
    print(
        f"rollout: {size_mb:.0f} MB, {floor['lines']:,} records; summary: {result['model_calls']:,} model calls, "
        f"{result['tool_calls']:,} tool calls, {result['user_messages']:,} prompts"
    )
    print(
        f"summarize: {cpu_rate:.1f} MB/s on one core (CPU time; wall {wall_rate:.1f} MB/s) — target ≥ "
        f"{TARGET_MB_S:.0f}: ratio {cpu_rate / TARGET_MB_S:.2f}"
    )
    print(
        f"reference, parse only: {floor_rate:.1f} MB/s — summarize runs at {cpu_rate / floor_rate:.2f} of it"
    )
    print(
        f"peak RSS: {result['rss_mb']:.1f} MB (parse only {floor['rss_mb']:.1f} MB) — target ≤ {TARGET_RSS_MB:.0f}: "
        f"ratio {result['rss_mb'] / TARGET_RSS_MB:.2f}"
    )


if __name__ == "__main__":
    main()
