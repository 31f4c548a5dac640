"""What the TUI's start-up worker imports after the first frame (`SERVER_SIDE_MODULES`) leaves out what
neither opening the server nor a first task needs: a prompt sent at the first frame waits for it all
(docs/performance.md, "Fewer imports before the first answer")."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVER_SIDE = ("harnez.settings", "harnez.server.server", "harnez.server.factory")
"""The same names as `harnez.tui.app.SERVER_SIDE_MODULES` (not imported here: that imports Textual)."""


def imported_after(modules: tuple[str, ...], script: str = "") -> set[str]:
    """The modules a fresh interpreter holds after importing `modules` and running `script`."""
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n    importlib.import_module(name)\n"
        f"{script}\nprint(json.dumps(sorted(sys.modules)))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    return set(json.loads(shown.stdout.splitlines()[-1]))


def test_the_tui_names_these_modules() -> None:
    tree = ast.parse((ROOT / "harnez" / "tui" / "app.py").read_text())
    named = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SERVER_SIDE_MODULES"
    ]
    assert named == [SERVER_SIDE]


def test_httpx_does_not_import_its_command_line() -> None:
    """httpx imports its command-line client (click, rich.progress, pygments' styles) whenever click
    is installed; harnez blocks that import before httpx's first."""
    imported = imported_after(SERVER_SIDE, "import httpx\nassert callable(httpx.main)")
    assert not {"click", "rich.progress", "rich.syntax"} & imported
    assert "httpx" in imported


def test_the_import_table_is_imported_at_first_use() -> None:
    """The store imports its table of imported sessions at first use (`harnez import`, an imported
    session's origin). The prices are imported with the agent: imported at a first task's end, their
    import (in a thread or not) delayed that task's first text-delta on its way to the screen by
    ~25 ms (docs/performance.md, "Fewer imports before the first answer")."""
    imported = imported_after(SERVER_SIDE)
    assert "harnez.store.imports" not in imported
    assert {"harnez.store.store", "harnez.pricing"} <= imported


def test_pydantic_settings_is_imported_only_for_variables_it_must_decode(tmp_path: Path) -> None:
    """`Settings` is a plain pydantic model; pydantic-settings' environment source reads HARNEZ_*
    variables, and is imported only when one names a setting that is not plain text."""
    load = (
        "from pathlib import Path\nfrom harnez.settings import load_settings\n"
        f"home = {str(tmp_path)!r}\n"
        "plain = load_settings(Path(home), {{'HOME': home{extra}}})\n"
        "print(plain.theme, file=sys.stderr)"
    )
    for extra in (", 'HARNEZ_NOT_A_SETTING': 'x'", ", 'HARNEZ_DATABASE_PATH': 'db.sqlite'"):
        without = imported_after(SERVER_SIDE, load.format(extra=extra))
        assert "pydantic_settings" not in without and "harnez.settings.loading" in without
    with_one = imported_after(SERVER_SIDE, load.format(extra=", 'HARNEZ_RETRY__MAX_ATTEMPTS': '3'"))
    assert "pydantic_settings" in with_one
