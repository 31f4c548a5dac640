"""The layer contracts of DESIGN.md hold: checked by import-linter, and only the TUI imports textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout and "KEPT" in result.stdout


def test_starting_the_cli_imports_neither_textual_nor_yake_nor_httpx() -> None:
    probe = (
        "import sys, harnez.cli; print(sorted(m for m in ('textual', 'yake', 'httpx') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[]"


def test_the_first_frame_imports_nothing_the_server_side_or_a_first_answer_needs() -> None:
    """What `harnez` imports before its first frame: the screen's modules, not the server side
    (settings, store, wires), the answer's Markdown, the workspace listing of `@` completion, the event
    vocabulary (~100 ms of dataclass set-up: the screens import it where an event is handled), nor the
    installation's metadata."""
    later = (
        "pydantic",
        "aiosqlite",
        "httpx",
        "markdown_it",
        "pathspec",
        "yake",
        "harnez.workspace",
        "harnez.events",
        "harnez.store",
        "harnez.install",
        "importlib.metadata",
    )
    probe = (
        "import sys, harnez.cli, harnez.tui, harnez.tui.app, harnez.tui.screens.session, "
        "harnez.tui.screens.picker; "
        f"print(sorted(m for m in {later!r} if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[]"


def test_the_pickers_first_page_imports_only_the_tables_it_reads() -> None:
    """`harnez --resume` reads its first page through `harnez.server.listing` before its first frame:
    that must not import every table, the event vocabulary, the installation's metadata, nor
    `importlib.resources` (the migrations folder is found on disk)."""
    later = (
        "harnez.events",
        "harnez.install",
        "importlib.metadata",
        "importlib.resources",
        "aiosqlite",
        "harnez.store.store",
        "harnez.store.events",
        "harnez.store.upgrades",
    )
    probe = f"import sys, harnez.server.listing; print(sorted(m for m in {later!r} if m in sys.modules))"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[]"


def test_the_store_package_still_offers_its_names() -> None:
    import harnez.store
    from harnez.store import Store
    from harnez.store.store import Store as Home

    assert Store is Home
    assert all(getattr(harnez.store, name) is not None for name in harnez.store.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = harnez.store.Nothing  # type: ignore[attr-defined]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_imports_itself_through_others_type_checking_imports_included() -> None:
    import grimp

    graph = grimp.build_graph("harnez")  # imports under `if TYPE_CHECKING:` count too
    modules = set(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
