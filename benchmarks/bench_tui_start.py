"""Benchmark `harnez` start-up to its first frame, against a bare Textual app started the same way.

Each run launches a fresh process with a 120×40 pty as its terminal and reads what it paints (escape
sequences removed) until a known text appears; the clock starts just before the fork. Three kinds of
run alternate, so load changes on the shared machine hit them alike:

- a bare Textual app (`python bare_textual_app.py`, one Static line): the reference;
- `harnez` on an empty database;
- `harnez` on the picker benchmark's full database (10k sessions / 1M events, `generate_data.py`);
- with `--before DIR`, also the harnez code in DIR (e.g. `git archive <commit> | tar -x -C DIR`, put
  first on PYTHONPATH) on the empty database, for a before/after figure in one run.

For harnez two moments are recorded: the first frame, which is the session screen with its prompt
focused and taking keys while the server opens (its status line says "opening… · mode:"), and the
moment the session is attached ("idle · mode:": the server is open, what was typed is sent). Each harnez is quit with Ctrl+Q. Every harnez process gets its own
HARNEZ_HOME with a settings.json naming a model (so no first-run screen) and HARNEZ_DATABASE_PATH.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import bench_store_lib as lib
import bench_tui_lib as tui
import generate_data

FIRST = "mode:"
READY = "idle · mode:"
BARE = "bare textual app ready"


def one_run(
    kind: str, homes: dict[str, tui.Home], bare_script: str, before: Path | None = None
) -> tuple[float, float | None]:
    """(seconds to the first frame, seconds to the interactive frame or None) of one process."""
    home = homes["empty" if kind == "bare" else kind]
    if kind == "bare":
        process = tui.launch([str(tui.PYTHON), bare_script], home.env(), home.workspace)
        first = process.wait_for([BARE])
        process.stop()
        return first, None
    extra = {"PYTHONPATH": str(before.resolve())} if kind == "before" and before is not None else {}
    process = tui.launch([str(tui.HARNEZ)], {**home.env(), **extra}, home.workspace)
    first = process.wait_for([FIRST])
    ready = process.wait_for([READY])
    process.stop()
    if process.process.returncode != 0:
        raise RuntimeError(f"harnez exited with {process.process.returncode}: {process.output[-400:]!r}")
    return first, ready


def main() -> None:
    """Alternate bare / harnez (empty) / harnez (full) runs and report medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="runs of each kind (default 12)")
    parser.add_argument("--quick", action="store_true", help="5 runs of each kind")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--before", type=Path, metavar="DIR", help="also launch the harnez code in DIR")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    full_db, _ = generate_data.ensure(args.sessions, args.events)
    lib.header(
        "harnez start to first frame (SPEC §10: ≤ 1.3× a bare Textual app; no slower with a full database)"
    )
    print(
        f"  pty {tui.COLUMNS}×{tui.LINES}; {runs} runs of each kind, alternating; full database "
        f"{args.sessions:,} sessions / {args.events:,} events ({full_db.stat().st_size / 1e6:.0f} MB)"
    )
    homes = {"empty": tui.make_home(), "full": tui.make_home(full_db)}
    if args.before:  # an empty database of its own: an older tree cannot open one a newer schema wrote
        homes["before"] = tui.make_home()
    bare_script = str(tui.bare_app_script(homes["empty"].root))
    kinds: tuple[str, ...] = ("bare", "empty", "full", "before") if args.before else ("bare", "empty", "full")
    times: dict[str, list[tuple[float, float | None]]] = {k: [] for k in kinds}
    try:
        for kind in kinds:
            one_run(
                kind, homes, bare_script, args.before
            )  # warm-up: page cache, the empty database's creation
        for index in range(runs):
            for kind in kinds[index % len(kinds) :] + kinds[: index % len(kinds)]:
                times[kind].append(one_run(kind, homes, bare_script, args.before))
    finally:
        for home in homes.values():
            tui.remove_home(home)
    report(times)


def report(times: dict[str, list[tuple[float, float | None]]]) -> None:
    """Medians and p90 of each kind, and the ratios to the bare app."""
    bare = lib.median([t[0] for t in times["bare"]])
    print(
        f"  reference: bare Textual app first frame median {bare * lib.MS:.0f} ms "
        f"(p90 {lib.percentile([t[0] for t in times['bare']], 90) * lib.MS:.0f} ms)"
    )
    for kind, label in (("empty", "empty database"), ("full", "full database"), ("before", "--before code")):
        if kind not in times:
            continue
        first = [t[0] for t in times[kind]]
        ready = [t[1] for t in times[kind] if t[1] is not None]
        shown, attached = lib.median(first), lib.median(ready)
        lib.report(
            f"harnez, {label}, first interactive frame (prompt takes keys)",
            f"median {shown * lib.MS:.0f} ms, p90 {lib.percentile(first, 90) * lib.MS:.0f} ms",
            "≤ 1.3× bare",
            shown <= 1.3 * bare,
            f"{shown / bare:.2f}× bare",
        )
        lib.report(
            f"harnez, {label}, session attached (server open)",
            f"median {attached * lib.MS:.0f} ms, p90 {lib.percentile(ready, 90) * lib.MS:.0f} ms",
            "(no target)",
            True,
            f"{attached / bare:.2f}× bare",
        )
    empty = lib.median([t[1] for t in times["empty"]])
    full = lib.median([t[1] for t in times["full"]])
    lib.report(
        "full vs empty database, session attached",
        f"{(full - empty) * lib.MS:+.0f} ms",
        "no slower",
        full <= empty * 1.05,
        f"{full / empty:.2f}× empty",
    )


if __name__ == "__main__":
    main()
